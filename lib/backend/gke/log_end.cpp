#include "backend/gke/log_end.h"

#include <charconv>

namespace kinetic::gke {

bool LogEnd::take(std::string_view line) {
  if (spec_sha256_.empty()) return false;
  if (line.ends_with('\n')) line.remove_suffix(1);
  constexpr std::string_view kHead = "kinetic: end of the log on ";
  if (!line.starts_with(kHead)) return false;
  line.remove_prefix(kHead.size());
  bool* seen = nullptr;
  if (line.starts_with("stdout")) seen = &on_stdout_;
  if (line.starts_with("stderr")) seen = &on_stderr_;
  if (seen == nullptr) return false;
  line.remove_prefix(6);
  constexpr std::string_view kExit = ", exit ";
  if (!line.starts_with(kExit)) return false;
  line.remove_prefix(kExit.size());
  int code = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), code);
  if (ec != std::errc()) return false;
  line.remove_prefix(static_cast<size_t>(end - line.data()));
  constexpr std::string_view kHeld = ", held";
  const bool held = line.starts_with(kHeld);
  if (held) line.remove_prefix(kHeld.size());
  if (line != ", spec " + spec_sha256_) return false;
  // Both lines carry the same code and hold; a differing pair is no end the follower can trust.
  if (exit_code_ && (*exit_code_ != code || *held_ != held)) return false;
  *seen = true;
  exit_code_ = code;
  held_ = held;
  return true;
}

}  // namespace kinetic::gke
