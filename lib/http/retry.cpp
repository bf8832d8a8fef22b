// Retry policy. Decisions:
// - Full jitter: wait = random01 * min(max_backoff, initial * multiplier^(attempt-1)).
// - Retry-After (delta-seconds or an HTTP date) is the earliest retry, and the jittered wait is
//   added to it: clients a server throttled together are all told the same Retry-After (the
//   Kubernetes API always says 1), and would come back in step without it. It is clamped to the
//   policy's deadline rather than to max_backoff: retrying before the server asked is pointless,
//   and a wait that would overrun the deadline makes retried() give up at once and hand back the
//   response instead of sleeping.
// - A 429 is retried for any request with an in-memory body, idempotent or not: the server
//   refused it before acting on it (a rate limit, API Priority and Fairness), so a replay cannot
//   do anything twice. 429s are bounded by the deadline alone, not by max_attempts, so that a
//   wide sweep waits its turn under a quota (docs/gcp-api.md "Rate limits"); their curve stops
//   growing at max_throttled_backoff, since a quota frees up at its own steady rate: clients
//   whose windows had doubled to half a minute left it idle while they slept.
// - Other retryable statuses and dropped connections are retried for idempotent requests only;
//   a streamed body cannot be replayed, and a response that has started streaming to on_body is
//   never fetched twice.
#include "http/retry.h"

#include "core/backoff.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <exception>
#include <random>
#include <thread>

namespace kinetic::http {

bool retryable_status(int status) {
  switch (status) {
    case 408:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      return true;
    default:
      return false;
  }
}

namespace {

// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the form servers must send.
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view s) {
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  size_t comma = s.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  std::string rest(s.substr(comma + 1));
  int day = 0, year = 0, hh = 0, mm = 0, ss = 0;
  char mon[4] = {0};
  char zone[4] = {0};
  if (std::sscanf(rest.c_str(), " %d %3s %d %d:%d:%d %3s", &day, mon, &year, &hh, &mm, &ss, zone) !=
      7) {
    return std::nullopt;
  }
  if (std::string_view(zone) != "GMT" && std::string_view(zone) != "UTC") return std::nullopt;
  int month = -1;
  for (int i = 0; i < 12; ++i) {
    if (std::string_view(mon) == kMonths[i]) month = i;
  }
  if (month < 0 || day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60) return std::nullopt;
  using namespace std::chrono;
  auto ymd = year_month_day{std::chrono::year{year}, std::chrono::month{unsigned(month + 1)},
                            std::chrono::day{unsigned(day)}};
  if (!ymd.ok()) return std::nullopt;
  return sys_days{ymd} + hours{hh} + minutes{mm} + seconds{ss};
}

std::optional<std::chrono::milliseconds> parse_retry_after(
    const std::string& value, std::chrono::system_clock::time_point now) {
  std::string_view v = value;
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    if (v.size() > 9) return std::chrono::hours(24 * 365);  // absurd; the deadline will cap it
    return std::chrono::seconds(std::stol(std::string(v)));
  }
  auto when = parse_http_date(v);
  if (!when) return std::nullopt;
  auto delta = std::chrono::duration_cast<std::chrono::milliseconds>(*when - now);
  return std::max(delta, std::chrono::milliseconds(0));
}

}  // namespace

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int attempt, double random01,
                                        const std::optional<std::string>& retry_after,
                                        std::chrono::system_clock::time_point now) {
  const BackoffCurve curve{policy.initial_backoff, policy.max_backoff, policy.multiplier};
  auto delay = curve.jittered(attempt, random01);
  if (retry_after) {
    if (auto asked = parse_retry_after(*retry_after, now))
      delay = std::min(*asked + delay, policy.deadline);
  }
  return delay;
}

std::string throttled_advice(const RetryPolicy& policy) {
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(policy.deadline);
  return " after kinetic retried for up to " + std::to_string(minutes.count()) +
         " minutes; submit fewer jobs at once, or retry later";
}

namespace {

constexpr int kTooManyRequests = 429;

class RetryingTransport final : public Transport {
 public:
  RetryingTransport(std::unique_ptr<Transport> inner, RetryPolicy policy, RetryEnv env)
      : inner_(std::move(inner)), policy_(policy), env_(std::move(env)) {
    if (!env_.sleep)
      env_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
    if (!env_.now) env_.now = [] { return std::chrono::system_clock::now(); };
    if (!env_.random) {
      auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
      env_.random = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
    }
  }

  Response send(const Request& request) override {
    if (request.body_source || policy_.max_attempts <= 1) return inner_->send(request);

    // Count what reaches the caller's on_body: once a byte is delivered, no retry.
    uint64_t delivered = 0;
    Request attempt_request = request;
    if (request.on_body) {
      attempt_request.on_body = [&delivered, &request](std::string_view chunk) {
        delivered += chunk.size();
        return request.on_body(chunk);
      };
    }

    auto start = env_.now();
    for (int attempt = 1;; ++attempt) {
      std::optional<Response> response;
      std::exception_ptr failure;
      std::optional<std::string> retry_after;
      bool throttled = false;
      try {
        response = inner_->send(attempt_request);
        throttled = response->status == kTooManyRequests && delivered == 0;
        if (!throttled && !(request.idempotent && retryable_status(response->status)))
          return std::move(*response);
        retry_after = response->header("Retry-After");
      } catch (const TransportError& e) {
        if (!request.idempotent || !e.retryable() || delivered > 0) throw;
        failure = std::current_exception();
      }
      auto give_up = [&]() -> Response {
        if (failure) std::rethrow_exception(failure);
        return std::move(*response);
      };
      if (!throttled && attempt >= policy_.max_attempts) return give_up();
      RetryPolicy curve = policy_;
      if (throttled) curve.max_backoff = std::min(curve.max_backoff, policy_.max_throttled_backoff);
      auto delay = backoff_delay(curve, attempt, env_.random(), retry_after, env_.now());
      if (response && policy_.body_hint) {
        if (auto hint = policy_.body_hint(*response)) delay = std::max(delay, *hint);
      }
      if (env_.now() + delay - start > policy_.deadline) return give_up();
      env_.sleep(delay);
    }
  }

 private:
  std::unique_ptr<Transport> inner_;
  RetryPolicy policy_;
  RetryEnv env_;
};

}  // namespace

std::unique_ptr<Transport> retried(std::unique_ptr<Transport> inner, RetryPolicy policy,
                                   RetryEnv env) {
  return std::make_unique<RetryingTransport>(std::move(inner), policy, std::move(env));
}

}  // namespace kinetic::http
