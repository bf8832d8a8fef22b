// Retries with capped exponential backoff and full jitter, honouring Retry-After. The clock and
// the sleeper are injected, so tests never sleep.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "http/transport.h"

namespace kinetic::http {

struct RetryPolicy {
  // Including the first. 429s do not count: they are retried until the deadline.
  int max_attempts = 6;
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{32000};
  // The curve's cap for 429s (before a Retry-After is added): a quota frees up at a steady rate.
  std::chrono::milliseconds max_throttled_backoff{8000};
  double multiplier = 2.0;
  // Give up when the next wait would end later than this after the first attempt.
  std::chrono::milliseconds deadline{std::chrono::minutes(5)};
  // A server's own hint from a retryable response's body (Google's RetryInfo.retryDelay), used
  // like Retry-After: the wait is at least this long. The http layer knows no API's bodies, so
  // the API layer supplies it (gcp::retry_info_delay).
  std::function<std::optional<std::chrono::milliseconds>(const Response&)> body_hint;
};

// Statuses worth retrying: 408, 429, 500, 502, 503, 504.
bool retryable_status(int status);

// How long to wait before attempt N (1-based: the wait after the first failure is N=1), given a
// random number in [0, 1) for the jitter and the server's Retry-After (seconds or HTTP date):
// the jittered curve, after the Retry-After when there is one, never past the deadline.
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, double random01,
                                        const std::optional<std::string>& retry_after,
                                        std::chrono::system_clock::time_point now);

using Sleeper = std::function<void(std::chrono::milliseconds)>;
using Clock = std::function<std::chrono::system_clock::time_point()>;
using Random = std::function<double()>;

struct RetryEnv {
  Sleeper sleep;  // default: std::this_thread::sleep_for
  Clock now;      // default: system_clock::now
  Random random;  // default: a seeded PRNG
};

// What an error line says after the 429s outlasted the policy's deadline: " after kinetic
// retried for up to 5 minutes; submit fewer jobs at once, or retry later" (the APIs' own
// messages for a rate limit say neither).
std::string throttled_advice(const RetryPolicy& policy = {});

// Wraps INNER: retryable statuses and retryable transport errors are retried for idempotent
// requests, and a 429 for any request (the server did not act on it) until the deadline; a
// request whose body is streamed is never retried (it cannot be replayed).
std::unique_ptr<Transport> retried(std::unique_ptr<Transport> inner, RetryPolicy policy = {},
                                   RetryEnv env = {});

}  // namespace kinetic::http
