// The cause of a failed job in its own words (issue #13): the line a person would look for at
// the end of its stderr, quoted in kinetic's last line, status.json's `error` and `status`.
//   - Python: the exception line that ends the last traceback ("AttributeError: 'Variable'
//     object has no attribute 'size'"), not the frames above it;
//   - C++'s std::terminate: "std::runtime_error: boom" from the "terminate called after
//     throwing an instance of 'T'" and "what():  M" pair;
//   - anything else: the last line it wrote (a shell's "line 3: foo: command not found").
// kinetic's own lines ("kinetic: ...") and blank lines are never the cause. The GKE bootstrap
// applies the same rule (lib/job/bootstrap.py, failure_cause()); both are checked against
// tests/golden/failure_causes.json.
#pragma once

#include <string>
#include <string_view>

namespace kinetic {

// How much of the end of stderr is kept to find the cause in.
inline constexpr size_t kFailureTailBytes = 8192;
// The longest cause quoted (longer ones are cut at a character boundary, with "...").
inline constexpr size_t kFailureCauseMax = 300;

// The cause in STDERR_TAIL (the last bytes the job wrote to stderr); "" when there is none.
std::string failure_cause(std::string_view stderr_tail);

// The first "FILE:LINE:COL: error: ..." line of a compiler's stderr (its last lines are the
// source and the caret); failure_cause() when there is none.
std::string compile_error(std::string_view stderr_tail);

// Keeps the last kFailureTailBytes of a stream written in chunks.
class StreamTail {
 public:
  void add(std::string_view chunk);
  const std::string& text() const { return tail_; }
  void clear() { tail_.clear(); }

 private:
  std::string tail_;
};

}  // namespace kinetic
