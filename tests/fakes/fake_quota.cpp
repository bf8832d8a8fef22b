#include "fakes/fake_quota.h"

#include <algorithm>
#include <cmath>

namespace kinetic::fakes {

namespace {
// A bucket holds one second of writes (at least one), so a burst passes at the quota's rate and
// no faster, as a per-second limit reads.
double quota_capacity(double rate) {
  return std::max(1.0, rate);
}
}  // namespace

void WriteQuota::set_rate(double writes_per_second) {
  std::lock_guard lock(mu_);
  rate_ = std::max(0.0, writes_per_second);
  tokens_ = quota_capacity(rate_);
  last_ = Clock::now();
}

double WriteQuota::tokens_at(Clock::time_point now) const {
  double elapsed = std::chrono::duration<double>(now - last_).count();
  return std::min(quota_capacity(rate_), tokens_ + std::max(0.0, elapsed) * rate_);
}

bool WriteQuota::take(Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (rate_ <= 0) return true;
  tokens_ = tokens_at(now);
  last_ = std::max(last_, now);
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return true;
  }
  return false;
}

int WriteQuota::seconds_until_token(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  if (rate_ <= 0) return 1;
  double missing = 1.0 - tokens_at(now);
  return std::max(1, static_cast<int>(std::ceil(missing / rate_)));
}

void WriteGathering::gather_next(int n) {
  std::lock_guard lock(mu_);
  size_ = std::max(0, n);
}

void WriteGathering::arrive() {
  std::unique_lock lock(mu_);
  if (size_ <= 0) return;
  long round = round_;
  if (--size_ == 0) {
    ++round_;
    gathered_.notify_all();
    return;
  }
  // A client that never comes (it failed first) must not hang the others for good: after a
  // minute the waiting ones go on, and the test's own assertions say what went wrong.
  if (!gathered_.wait_for(lock, std::chrono::minutes(1), [&] { return round_ != round; })) {
    size_ = 0;
    ++round_;
    gathered_.notify_all();
  }
}

}  // namespace kinetic::fakes
