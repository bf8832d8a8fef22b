// An opt-in write-rate quota for the fakes (docs/fakes.md "Write quotas"): a token bucket
// holding at most one second's worth of writes, refilled at RATE writes per second. The fake GCS
// keeps one per bucket, the fake Kubernetes API one per server; a write that finds the bucket
// empty is refused with the service's own 429 answer, and its Retry-After (when the service
// sends one) is how long until a token is back. Off (every write passes) until a rate is set.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace kinetic::fakes {

class WriteQuota {
 public:
  using Clock = std::chrono::steady_clock;

  // RATE writes per second (0 or less: no quota). The bucket starts full.
  void set_rate(double writes_per_second);
  // Takes one write's token at NOW; false when there is none.
  bool take(Clock::time_point now = Clock::now());
  // Whole seconds until a token is back after a refusal at NOW, at least 1 (Retry-After's unit).
  int seconds_until_token(Clock::time_point now = Clock::now()) const;

 private:
  double tokens_at(Clock::time_point now) const;  // with mu_ held

  mutable std::mutex mu_;
  double rate_ = 0;
  double tokens_ = 0;
  Clock::time_point last_{};
};

// Orders a burst, for tests: the next N writes that call arrive() wait there until all N have
// arrived, then go on together, so N clients' writes reach a quota at once however their
// processes were scheduled (after a minute without all N, the waiting ones go on). Call arrive()
// without holding the fake's own lock.
class WriteGathering {
 public:
  void gather_next(int n);
  void arrive();

 private:
  std::mutex mu_;
  std::condition_variable gathered_;
  int size_ = 0;    // writes still to arrive in the current gathering
  long round_ = 0;  // bumped when a gathering is complete
};

}  // namespace kinetic::fakes
