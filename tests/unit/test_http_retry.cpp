#include <gtest/gtest.h>

#include <deque>
#include <variant>

#include "http/retry.h"

using namespace std::chrono_literals;
using kinetic::http::backoff_delay;
using kinetic::http::Request;
using kinetic::http::Response;
using kinetic::http::RetryEnv;
using kinetic::http::RetryPolicy;
using kinetic::http::Transport;
using kinetic::http::TransportError;

namespace {

const auto kNow =
    std::chrono::sys_days{std::chrono::year{2024} / 1 / 2} + 3h;  // Tue, 02 Jan 2024 03:00:00 GMT

// Answers from a script: a Response, or a TransportError (retryable or not).
struct ScriptedTransport : Transport {
  using Step = std::variant<Response, TransportError>;
  std::deque<Step> script;
  std::vector<Request> seen;
  Response send(const Request& request) override {
    seen.push_back(request);
    if (script.empty()) throw std::logic_error("script exhausted");
    Step step = script.front();
    script.pop_front();
    if (auto* error = std::get_if<TransportError>(&step)) throw *error;
    return std::get<Response>(step);
  }
};

Response status(int code, kinetic::http::Headers headers = {}) {
  Response r;
  r.status = code;
  r.headers = std::move(headers);
  r.body = "body " + std::to_string(code);
  return r;
}

struct Harness {
  ScriptedTransport* fake = nullptr;
  std::vector<std::chrono::milliseconds> waits;
  std::chrono::system_clock::time_point clock = kNow;
  std::unique_ptr<Transport> transport;

  explicit Harness(std::deque<ScriptedTransport::Step> script, RetryPolicy policy = {}) {
    auto inner = std::make_unique<ScriptedTransport>();
    inner->script = std::move(script);
    fake = inner.get();
    RetryEnv env;
    env.sleep = [this](std::chrono::milliseconds d) {
      waits.push_back(d);
      clock += d;
    };
    env.now = [this] { return clock; };
    env.random = [] { return 0.5; };
    transport = kinetic::http::retried(std::move(inner), policy, env);
  }
};

}  // namespace

TEST(RetryStatus, RetryableStatuses) {
  for (int s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(kinetic::http::retryable_status(s)) << s;
  for (int s : {200, 201, 204, 301, 400, 401, 403, 404, 409, 410, 412, 501}) {
    EXPECT_FALSE(kinetic::http::retryable_status(s)) << s;
  }
}

TEST(RetryBackoff, ExponentialWithFullJitterAndCap) {
  RetryPolicy p;  // 500ms initial, x2, 32s cap
  EXPECT_EQ(backoff_delay(p, 1, 0.999999, std::nullopt, kNow), 499ms);
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::nullopt, kNow), 250ms);
  EXPECT_EQ(backoff_delay(p, 2, 0.5, std::nullopt, kNow), 500ms);
  EXPECT_EQ(backoff_delay(p, 3, 0.5, std::nullopt, kNow), 1000ms);
  EXPECT_EQ(backoff_delay(p, 7, 0.5, std::nullopt, kNow), 16000ms);  // 32s cap reached
  EXPECT_EQ(backoff_delay(p, 20, 0.5, std::nullopt, kNow), 16000ms);
  EXPECT_EQ(backoff_delay(p, 3, 0.0, std::nullopt, kNow), 0ms);
}

TEST(RetryBackoff, RetryAfterSecondsOverridesWhenLonger) {
  RetryPolicy p;
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string("7"), kNow), 7250ms);  // jitter after it
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string(" 0 "), kNow), 250ms);
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string("120"), kNow), 120250ms);  // beyond max_backoff
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string("100000"), kNow), p.deadline);  // clamped
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string("soon"), kNow), 250ms);         // ignored
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string("-3"), kNow), 250ms);
}

TEST(RetryBackoff, RetryAfterHttpDate) {
  RetryPolicy p;
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string("Tue, 02 Jan 2024 03:00:09 GMT"), kNow), 9250ms);
  // In the past: the jittered delay stands.
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string("Tue, 02 Jan 2024 02:00:00 GMT"), kNow), 250ms);
  EXPECT_EQ(backoff_delay(p, 1, 0.5, std::string("Tue, 02 Foo 2024 03:00:09 GMT"), kNow), 250ms);
}

TEST(RetryTransport, Retries503ThenSucceeds) {
  Harness h({status(503), status(503), status(200)});
  Response r = h.transport->send(Request{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(h.fake->seen.size(), 3u);
  EXPECT_EQ(h.waits, (std::vector<std::chrono::milliseconds>{250ms, 500ms}));
}

TEST(RetryTransport, HonoursRetryAfter) {
  Harness h({status(429, {{"retry-after", "3"}}), status(200)});
  EXPECT_EQ(h.transport->send(Request{}).status, 200);
  EXPECT_EQ(h.waits, (std::vector<std::chrono::milliseconds>{3250ms}));
}

TEST(RetryTransport, HonoursAServerHintFromTheBody) {
  // Google's RetryInfo lives in the body; the API layer reads it, the retry layer waits for it.
  RetryPolicy policy;
  policy.body_hint = [](const Response& r) -> std::optional<std::chrono::milliseconds> {
    if (r.body == "body 503") return 7000ms;
    return std::nullopt;
  };
  Harness h({status(503), status(200)}, policy);
  EXPECT_EQ(h.transport->send(Request{}).status, 200);
  EXPECT_EQ(h.waits, (std::vector<std::chrono::milliseconds>{7000ms}));
}

TEST(RetryTransport, NonIdempotentPostIsNotRetried) {
  Harness h({status(503), status(200)});
  Request post;
  post.method = "POST";
  post.idempotent = false;
  EXPECT_EQ(h.transport->send(post).status, 503);
  EXPECT_EQ(h.fake->seen.size(), 1u);
  EXPECT_TRUE(h.waits.empty());
}

TEST(RetryTransport, StreamedBodyIsNotRetried) {
  Harness h({TransportError("cannot reach x: reset", true), status(200)});
  Request put;
  put.method = "PUT";
  put.body_source = [](char*, size_t) -> size_t { return 0; };
  put.body_size = 0;
  EXPECT_THROW(h.transport->send(put), TransportError);
  EXPECT_EQ(h.fake->seen.size(), 1u);
}

TEST(RetryTransport, RetryableTransportErrorIsRetried) {
  Harness h({TransportError("cannot reach x: Connection refused", true), status(200)});
  EXPECT_EQ(h.transport->send(Request{}).status, 200);
  EXPECT_EQ(h.waits.size(), 1u);
}

TEST(RetryTransport, NonRetryableTransportErrorIsNot) {
  Harness h({TransportError("cannot reach x: certificate", false), status(200)});
  EXPECT_THROW(h.transport->send(Request{}), TransportError);
  EXPECT_EQ(h.fake->seen.size(), 1u);
}

TEST(RetryTransport, NonRetryableStatusReturnedAtOnce) {
  Harness h({status(404), status(200)});
  EXPECT_EQ(h.transport->send(Request{}).status, 404);
  EXPECT_EQ(h.fake->seen.size(), 1u);
}

TEST(RetryTransport, GivesUpAfterMaxAttemptsReturningLastResponse) {
  RetryPolicy p;
  p.max_attempts = 3;
  Harness h({status(500), status(502), status(503), status(200)}, p);
  Response r = h.transport->send(Request{});
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "body 503");
  EXPECT_EQ(h.fake->seen.size(), 3u);
  EXPECT_EQ(h.waits.size(), 2u);
}

TEST(RetryTransport, GivesUpAfterMaxAttemptsRethrowingLastError) {
  RetryPolicy p;
  p.max_attempts = 2;
  Harness h({TransportError("first", true), TransportError("second", true), status(200)}, p);
  try {
    h.transport->send(Request{});
    FAIL() << "no throw";
  } catch (const TransportError& e) {
    EXPECT_STREQ(e.what(), "second");
  }
}

TEST(RetryTransport, DeadlineStopsRetries) {
  RetryPolicy p;
  p.deadline = 10s;
  Harness h({status(503, {{"Retry-After", "4"}}), status(503, {{"Retry-After", "4"}}),
             status(503, {{"Retry-After", "4"}}), status(200)},
            p);
  Response r = h.transport->send(Request{});
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(h.waits, (std::vector<std::chrono::milliseconds>{4250ms, 4500ms}));  // a third: 13.25s
}

TEST(RetryTransport, NoRetryOnceBodyStreamedToCaller) {
  struct PartialThenFail : Transport {
    int calls = 0;
    Response send(const Request& request) override {
      ++calls;
      request.on_body("partial");
      throw TransportError("cannot reach x: transfer closed", true);
    }
  };
  auto inner = std::make_unique<PartialThenFail>();
  auto* fake = inner.get();
  RetryEnv env;
  env.sleep = [](std::chrono::milliseconds) {};
  auto t = kinetic::http::retried(std::move(inner), {}, env);
  Request r;
  std::string got;
  r.on_body = [&got](std::string_view chunk) {
    got += chunk;
    return true;
  };
  EXPECT_THROW(t->send(r), TransportError);
  EXPECT_EQ(fake->calls, 1);
  EXPECT_EQ(got, "partial");
}

// Issue #30 point 3: a wide sweep under a quota. A 429 means the server did not act, so even a
// create (not idempotent) is sent again, after the Retry-After plus the jittered curve.
TEST(RetryTransport, ThrottledCreateIsRetriedAfterRetryAfterPlusJitter) {
  Harness h({status(429, {{"Retry-After", "1"}}), status(429, {{"Retry-After", "1"}}),
             status(429, {{"Retry-After", "1"}}), status(201)});
  Request post;
  post.method = "POST";
  post.idempotent = false;
  post.body = "{}";
  EXPECT_EQ(h.transport->send(post).status, 201);
  EXPECT_EQ(h.fake->seen.size(), 4u);
  EXPECT_EQ(h.waits, (std::vector<std::chrono::milliseconds>{1250ms, 1500ms, 2000ms}));
}

TEST(RetryTransport, ThrottlingOutlastsMaxAttemptsUntilTheDeadline) {
  RetryPolicy p;
  p.max_attempts = 2;
  std::deque<ScriptedTransport::Step> script(9, status(429));
  script.push_back(status(200));
  Harness h(script, p);
  EXPECT_EQ(h.transport->send(Request{}).status, 200);
  EXPECT_EQ(h.fake->seen.size(), 10u);
}

TEST(RetryTransport, ThrottlingGivesUpAtTheDeadlineWithTheLast429) {
  RetryPolicy p;
  p.deadline = 10s;
  std::deque<ScriptedTransport::Step> script(20, status(429, {{"Retry-After", "1"}}));
  Harness h(script, p);
  Request post;
  post.method = "POST";
  post.idempotent = false;
  Response r = h.transport->send(post);
  EXPECT_EQ(r.status, 429);
  // 1.25 + 1.5 + 2 + 3 s = 7.75 s waited; the next (1 + 4 s) would end past 10 s.
  EXPECT_EQ(h.waits, (std::vector<std::chrono::milliseconds>{1250ms, 1500ms, 2000ms, 3000ms}));
}

TEST(RetryTransport, NonIdempotentRequestIsNotResentAfterADroppedConnection) {
  Harness h({TransportError("cannot reach x: reset", true), status(200)});
  Request post;
  post.method = "POST";
  post.idempotent = false;
  EXPECT_THROW(h.transport->send(post), TransportError);
  EXPECT_EQ(h.fake->seen.size(), 1u);
}

// A quota frees up at a steady rate: a throttled client's window stops doubling at 8 s (the
// jittered wait at 0.5 stays at 4 s), where a 503's grows on to 32 s.
TEST(RetryTransport, ThrottledBackOffStopsGrowingAtItsCap) {
  RetryPolicy p;
  p.max_attempts = 20;
  std::deque<ScriptedTransport::Step> throttled(8, status(429));
  throttled.push_back(status(200));
  Harness h(throttled, p);
  EXPECT_EQ(h.transport->send(Request{}).status, 200);
  EXPECT_EQ(h.waits, (std::vector<std::chrono::milliseconds>{250ms, 500ms, 1000ms, 2000ms, 4000ms,
                                                             4000ms, 4000ms, 4000ms}));
  std::deque<ScriptedTransport::Step> unavailable(7, status(503));
  unavailable.push_back(status(200));
  Harness g(unavailable, p);
  EXPECT_EQ(g.transport->send(Request{}).status, 200);
  EXPECT_EQ(g.waits.back(), 16000ms);
}
