// One current line of progress for long waits (build status, scheduling, transfers): rewritten in
// place on a terminal, printed once per change when stderr is not a terminal (so CI logs stay
// line-oriented), silent with --quiet.
#pragma once

#include <mutex>
#include <string>

#include "render/output.h"

namespace kinetic {

// Thread-safe: a pipeline's steps on gke share their session's line.
class StatusLine {
 public:
  explicit StatusLine(const IOStreams& io) : io_(io) {}
  ~StatusLine() { clear(); }
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  // Shows TEXT as the current state. On a terminal it replaces the previous text; otherwise
  // it is printed when it differs from the last line printed, unless TRANSIENT (byte counts
  // and other ticking values that would flood a log).
  void update(const std::string& text, bool transient = false);
  // Shows TEXT followed by TICKING (an elapsed time, "(42s)"). On a terminal both, rewritten as
  // either changes; otherwise the line is printed only when TEXT changes, with the TICKING of
  // that moment, so a wait of an hour is one line in a log, not one a poll.
  void update_ticking(const std::string& text, const std::string& ticking);
  // Removes the line from a terminal (nothing to do elsewhere).
  void clear();
  // Clears, then prints TEXT as a permanent line (unless --quiet).
  void finish(const std::string& text);

 private:
  void clear_locked();

  const IOStreams& io_;
  std::mutex mu_;
  std::string last_;
  std::string last_stable_;  // TEXT of the last two-part update printed without a terminal
  bool shown_ = false;
};

}  // namespace kinetic
