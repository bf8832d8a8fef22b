// The bootstrap's last two lines (lib/job/bootstrap.py, at its very end), one on the container's
// stdout and one on its stderr: "kinetic: end of the log on STREAM, exit CODE, spec SHA256".
// Each stream reaches the log through a pipe of its own, in order, so once both lines of this
// job have been read the attempt's log is complete and the bootstrap's uploads are over (how
// they went, status.json says; collect reads it): the follower stops there, without asking the
// cluster whether the container ended or reading the log once more (issue #14). The spec's sha256
// keeps a line the job itself prints (a log it cats) from passing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kinetic::gke {

class LogEnd {
 public:
  // SPEC_SHA256: of the job's spec.json (KINETIC_SPEC_SHA256); empty: no line is this job's.
  explicit LogEnd(std::string spec_sha256) : spec_sha256_(std::move(spec_sha256)) {}

  // Whether LINE (one log line, its '\n' optional) is one of this job's end lines; it is then
  // the bootstrap's, not the job's output.
  bool take(std::string_view line);
  // Both lines seen: the log is complete.
  bool complete() const { return on_stdout_ && on_stderr_; }
  // The container's exit code as the bootstrap reported it, once complete.
  std::optional<int> exit_code() const { return complete() ? exit_code_ : std::nullopt; }
  // Once complete: the run failed for good and its pod is held for `kinetic exec`
  // (--hold-on-failure; "..., exit CODE, held, spec SHA256"): the container runs on.
  bool held() const { return complete() && held_.value_or(false); }

 private:
  std::string spec_sha256_;
  bool on_stdout_ = false, on_stderr_ = false;
  std::optional<int> exit_code_;
  std::optional<bool> held_;
};

}  // namespace kinetic::gke
