// `kinetic logs --tail N` over any backend's stream_logs: the last N lines of what a job has
// written so far, then (with -f) only what comes after them.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>

#include "backend/backend.h"

namespace kinetic {

// Keeps the last N lines written to it, whichever stream they came on, in their order. A
// stream's unfinished last line counts as a line. Counts the job's own bytes (stdout and stderr,
// not kinetic's notes) so a follow can start after them (SkipSink).
class TailSink : public LogSink {
 public:
  explicit TailSink(size_t lines) : limit_(lines) {}
  void write(LogStream stream, std::string_view data) override;
  // Writes the kept lines to SINK, oldest first.
  void replay(LogSink& sink);
  uint64_t job_bytes() const { return job_bytes_; }

 private:
  void keep(LogStream stream, std::string line);

  size_t limit_;
  std::deque<std::pair<LogStream, std::string>> lines_;
  std::array<std::string, 4> partial_;  // by LogStream (1-3)
  uint64_t job_bytes_ = 0;
};

// Passes on what comes after the first SKIP bytes of the job's own output (stdout and stderr in
// the order written), and kinetic's notes once those bytes are behind: a log read again from its
// start shows only what a TailSink has not.
class SkipSink : public LogSink {
 public:
  SkipSink(uint64_t skip, LogSink& next) : skip_(skip), next_(next) {}
  void write(LogStream stream, std::string_view data) override;

 private:
  uint64_t skip_;
  LogSink& next_;
};

// The last LINES lines of what SO_FAR writes, to SINK; then, when FOLLOW is set, what FOLLOW
// writes after those bytes (it reads the log again from its start: SkipSink).
void tail_then_follow(size_t lines, LogSink& sink, const std::function<void(LogSink&)>& so_far,
                      const std::function<void(LogSink&)>& follow);

}  // namespace kinetic
