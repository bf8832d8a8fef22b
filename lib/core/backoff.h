// kinetic's one back-off curve. Every wait before trying again (HTTP retries, polling
// long-running operations, re-opening a cut log stream, re-creating an object after a
// conflict) is min(max, initial * factor^(attempt - 1)) for retry ATTEMPT = 1, 2, ...; callers
// choose the three parameters for what they wait on, and jitter where many clients could
// retry in step (docs/architecture.md "Back-off"). The in-cluster scripts, in Python, use the
// same curve with the default parameters (lib/job/incluster_common.py `nap`; a test compares
// them).
#pragma once

#include <chrono>

namespace kinetic {

struct BackoffCurve {
  std::chrono::milliseconds initial{1000};
  std::chrono::milliseconds max{30000};
  double factor = 2.0;

  // The wait before retry ATTEMPT (attempts below 1 count as 1); never below 1 ms, never above
  // max (nor below initial when max is).
  std::chrono::milliseconds delay(int attempt) const;
  // "Full jitter": RANDOM01 (clamped to [0, 1]) times delay(attempt).
  std::chrono::milliseconds jittered(int attempt, double random01) const;
};

}  // namespace kinetic
