// The Kubernetes client over a scripted in-memory transport: URLs and query encoding, Status
// bodies turned into ApiError, watch streams split across arbitrary chunks, timestamped log
// lines, and follow_pod_log's reconnects (no line lost, none repeated).
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "k8s/client.h"
#include "k8s/log_follower.h"
#include "k8s/timestamp.h"

namespace kinetic::k8s {
namespace {

using nlohmann::json;

// One scripted answer: STATUS and BODY, the body fed to on_body (for a 2xx with on_body) in
// pieces of CHUNKS sizes (cycled), then optionally a dropped connection after DROP_AFTER bytes.
struct Answer {
  int status = 200;
  std::string body;
  std::vector<size_t> chunks;             // empty: one chunk
  std::optional<size_t> drop_after;       // bytes delivered before a retryable TransportError
  bool transport_error_at_start = false;  // a connection refused before any byte
};

class FakeTransport : public http::Transport {
 public:
  http::Response send(const http::Request& request) override {
    requests.push_back(request);
    if (answers.empty()) ADD_FAILURE() << "unexpected request " << request.url;
    Answer a = answers.empty() ? Answer{404, "{}"} : answers.front();
    if (!answers.empty()) answers.pop_front();
    if (a.transport_error_at_start) throw http::TransportError("connection refused", true);
    http::Response r;
    r.status = a.status;
    r.headers = {{"Content-Type", "application/json"}};
    bool ok = a.status >= 200 && a.status < 300;
    if (!request.on_body || !ok) {
      r.body = a.body;
      return r;
    }
    size_t end = a.drop_after ? std::min(*a.drop_after, a.body.size()) : a.body.size();
    size_t pos = 0, i = 0;
    while (pos < end) {
      size_t n = a.chunks.empty() ? end - pos : a.chunks[i++ % a.chunks.size()];
      n = std::max<size_t>(1, std::min(n, end - pos));
      if (!request.on_body(std::string_view(a.body).substr(pos, n)))
        throw http::TransportError("aborted by the caller", false);
      pos += n;
    }
    if (a.drop_after) throw http::TransportError("connection reset", true);
    return r;
  }

  std::deque<Answer> answers;
  std::vector<http::Request> requests;
};

std::string status_body(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}}
      .dump();
}

std::string header(const http::Request& r, const std::string& name) {
  auto v = http::find_header(r.headers, name);
  return v ? *v : "";
}

// ---- requests -----------------------------------------------------------------------------

TEST(K8sClient, CreatePostsJsonAndIsNotIdempotent) {
  FakeTransport t;
  t.answers.push_back({201, R"({"kind":"Job","metadata":{"name":"a","uid":"u1"}})"});
  Client c(t, "https://10.0.0.1:443/");
  json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "a"}}}};
  json created = c.create(jobs_path("default"), job);
  EXPECT_EQ(created["metadata"]["uid"], "u1");
  ASSERT_EQ(t.requests.size(), 1u);
  const auto& r = t.requests[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.url, "https://10.0.0.1:443/apis/batch/v1/namespaces/default/jobs");
  EXPECT_EQ(header(r, "Content-Type"), "application/json");
  EXPECT_EQ(header(r, "Accept"), "application/json");
  EXPECT_FALSE(r.idempotent);
  EXPECT_EQ(json::parse(r.body), job);
}

TEST(K8sClient, GetReturnsNulloptOn404) {
  FakeTransport t;
  t.answers.push_back({404, status_body(404, "NotFound", R"(jobs.batch "x" not found)")});
  t.answers.push_back({200, R"({"metadata":{"name":"y"}})"});
  Client c(t, "https://h");
  EXPECT_FALSE(c.get(job_path("ns", "x")).has_value());
  auto y = c.get(job_path("ns", "y"));
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ((*y)["metadata"]["name"], "y");
  EXPECT_EQ(t.requests[0].method, "GET");
  EXPECT_TRUE(t.requests[0].idempotent);
}

TEST(K8sClient, ListEncodesSelectorsAndReturnsResourceVersion) {
  FakeTransport t;
  t.answers.push_back(
      {200,
       R"({"kind":"PodList","metadata":{"resourceVersion":"812"},"items":[{"a":1},{"a":2}]})"});
  Client c(t, "https://h");
  ObjectList l = c.list(pods_path("default"), "batch.kubernetes.io/job-name=kinetic-j1,x in (a b)",
                        "involvedObject.kind=Pod");
  EXPECT_EQ(l.resource_version, "812");
  ASSERT_EQ(l.items.size(), 2u);
  EXPECT_EQ(l.items[1]["a"], 2);
  EXPECT_EQ(t.requests[0].url,
            "https://h/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name"
            "%3Dkinetic-j1%2Cx%20in%20%28a%20b%29&fieldSelector=involvedObject.kind%3DPod");
}

TEST(K8sClient, RemoveUsesBackgroundPropagation) {
  FakeTransport t;
  t.answers.push_back({200, R"({"kind":"Status","status":"Success"})"});
  t.answers.push_back({404, status_body(404, "NotFound", "gone")});
  Client c(t, "https://h");
  EXPECT_TRUE(c.remove(job_path("default", "j")));
  EXPECT_FALSE(c.remove(job_path("default", "j")));
  EXPECT_EQ(t.requests[0].method, "DELETE");
  EXPECT_EQ(t.requests[0].url,
            "https://h/apis/batch/v1/namespaces/default/jobs/j?propagationPolicy=Background");
}

TEST(K8sClient, Paths) {
  EXPECT_EQ(jobset_path("ns", "a"), "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ns/jobsets/a");
  EXPECT_EQ(pod_path("ns", "p"), "/api/v1/namespaces/ns/pods/p");
  EXPECT_EQ(secret_path("ns", "s"), "/api/v1/namespaces/ns/secrets/s");
  EXPECT_EQ(events_path("ns"), "/api/v1/namespaces/ns/events");
  EXPECT_EQ(nodes_path(), "/api/v1/nodes");
}

// ---- errors -------------------------------------------------------------------------------

TEST(K8sClient, ConflictBecomesApiErrorAlreadyExists) {
  FakeTransport t;
  t.answers.push_back(
      {409, status_body(409, "AlreadyExists", "jobs.batch \"train-1\" already exists")});
  Client c(t, "https://h");
  try {
    c.create(jobs_path("default"), json::object());
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 409);
    EXPECT_EQ(e.reason(), "AlreadyExists");
    EXPECT_EQ(e.Error::code(), Errc::api);
    std::string what = e.what();
    EXPECT_NE(what.find("jobs.batch \"train-1\" already exists"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

TEST(K8sClient, ErrorMapping) {
  struct Case {
    int status;
    std::string body;
    Errc errc;
    int code;
    std::string reason;
    std::string needle;
  };
  std::vector<Case> cases = {
      {401, status_body(401, "Unauthorized", "Unauthorized"), Errc::auth, 401, "Unauthorized",
       "gcloud auth application-default login"},
      {403,
       status_body(403, "Forbidden",
                   "jobs.batch is forbidden: User \"a@b.c\" cannot create resource \"jobs\""),
       Errc::auth, 403, "Forbidden", "roles/container.developer"},
      {404, status_body(404, "NotFound", "jobs.batch \"x\" not found"), Errc::not_found, 404,
       "NotFound", "not found"},
      {422,
       status_body(422, "Invalid",
                   "Job.batch \"x\" is invalid: spec.template.spec.restartPolicy: Required value"),
       Errc::api, 422, "Invalid", "restartPolicy: Required value"},
      {500, "<html><title>502 Bad Gateway</title></html>", Errc::api, 500, "", "502 Bad Gateway"},
      {403, "Forbidden\n", Errc::auth, 403, "Forbidden", "check roles/container.developer"},
      // API Priority and Fairness's plain text, once the retry layer has waited it out.
      {429, "Too many requests, please try again later.\n", Errc::api, 429, "TooManyRequests",
       "429 Too Many Requests (its API Priority and Fairness limits) (Too many requests, please "
       "try again later) after kinetic retried for up to 5 minutes; submit fewer jobs at once"},
  };
  for (const auto& k : cases) {
    FakeTransport t;
    t.answers.push_back({k.status, k.body});
    Client c(t, "https://h");
    try {
      c.list(jobs_path("default"));
      ADD_FAILURE() << "no error for " << k.status;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.Error::code(), k.errc) << k.body;
      EXPECT_EQ(e.code(), k.code);
      EXPECT_EQ(e.reason(), k.reason);
      std::string what = e.what();
      EXPECT_NE(what.find(k.needle), std::string::npos) << what;
      EXPECT_NE(what.find("listing /apis/batch/v1/namespaces/default/jobs"), std::string::npos)
          << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(K8sClient, NonJsonSuccessBodyIsAnError) {
  FakeTransport t;
  t.answers.push_back({200, "<html>proxy</html>"});
  Client c(t, "https://h");
  EXPECT_THROW(c.get("/api/v1/nodes"), ApiError);
}

// ---- watch --------------------------------------------------------------------------------

std::string event_line(const std::string& type, const std::string& name, const std::string& rv) {
  json object = {{"kind", "Pod"}, {"metadata", {{"name", name}, {"resourceVersion", rv}}}};
  return json{{"type", type}, {"object", object}}.dump() + "\n";
}

std::string watch_stream() {
  return event_line("ADDED", "p1", "101") + event_line("MODIFIED", "p1", "102") +
         R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"150"}}})" +
         "\n" + event_line("DELETED", "p1", "160");
}

TEST(K8sClientWatch, EventsSplitAcrossArbitraryChunks) {
  const std::string body = watch_stream();
  for (std::vector<size_t> chunks : std::vector<std::vector<size_t>>{
           {}, {1}, {2}, {3}, {7}, {13, 1, 50}, {body.size() - 1}, {64, 5}}) {
    FakeTransport t;
    t.answers.push_back({200, body, chunks});
    Client c(t, "https://h");
    std::vector<std::string> seen;
    std::string rv =
        c.watch(pods_path("default"), "kinetic.dev/job=j1", "100", 300, [&](const WatchEvent& e) {
          seen.push_back(e.type + ":" + e.object["metadata"]["resourceVersion"].get<std::string>());
          return true;
        });
    EXPECT_EQ(seen, (std::vector<std::string>{"ADDED:101", "MODIFIED:102", "BOOKMARK:150",
                                              "DELETED:160"}))
        << "chunk sizes " << (chunks.empty() ? 0 : chunks[0]);
    EXPECT_EQ(rv, "160");
    EXPECT_EQ(t.requests[0].url,
              "https://h/api/v1/namespaces/default/pods?watch=1&resourceVersion=100&"
              "allowWatchBookmarks=true&timeoutSeconds=300&labelSelector=kinetic.dev%2Fjob%3Dj1");
    EXPECT_EQ(t.requests[0].timeout.count(), 0);
  }
}

TEST(K8sClientWatch, LastEventWithoutNewlineAndCrlf) {
  FakeTransport t;
  std::string body = event_line("ADDED", "p", "7");
  body.insert(body.size() - 1, "\r");
  body += "\n" + event_line("MODIFIED", "p", "8");
  body.pop_back();  // no final newline
  t.answers.push_back({200, body, {5}});
  Client c(t, "https://h");
  int n = 0;
  EXPECT_EQ(c.watch(pods_path("d"), "", "6", 60, [&](const WatchEvent&) { return ++n, true; }),
            "8");
  EXPECT_EQ(n, 2);
}

TEST(K8sClientWatch, StopsWhenCallbackReturnsFalse) {
  FakeTransport t;
  t.answers.push_back({200, watch_stream(), {4}});
  Client c(t, "https://h");
  int n = 0;
  std::string rv = c.watch(pods_path("d"), "", "100", 60, [&](const WatchEvent&) {
    ++n;
    return n < 2;
  });
  EXPECT_EQ(n, 2);
  EXPECT_EQ(rv, "102");
}

TEST(K8sClientWatch, InStreamExpiredBecomesApiError410) {
  FakeTransport t;
  std::string body =
      event_line("ADDED", "p", "5") +
      R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (900)","reason":"Expired","code":410}})j" +
      "\n" + event_line("ADDED", "q", "901");
  t.answers.push_back({200, body, {9}});
  Client c(t, "https://h");
  std::vector<std::string> seen;
  try {
    c.watch(pods_path("d"), "", "4", 60, [&](const WatchEvent& e) {
      seen.push_back(e.object["metadata"]["name"]);
      return true;
    });
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 410);
    EXPECT_EQ(e.reason(), "Expired");
    EXPECT_NE(std::string(e.what()).find("too old resource version"), std::string::npos);
  }
  EXPECT_EQ(seen, std::vector<std::string>{"p"});
}

TEST(K8sClientWatch, ExpiredAtConnect) {
  FakeTransport t;
  t.answers.push_back({410, status_body(410, "Expired", "too old resource version: 1 (50)")});
  Client c(t, "https://h");
  try {
    c.watch(pods_path("d"), "", "1", 60, [](const WatchEvent&) { return true; });
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 410);
    EXPECT_EQ(e.reason(), "Expired");
  }
}

TEST(K8sClientWatch, DropAfterEventsEndsLikeAServerClose) {
  FakeTransport t;
  std::string body = watch_stream();
  size_t cut = body.find("MODIFIED") + 5;  // in the middle of the second event
  t.answers.push_back({200, body, {3}, cut});
  Client c(t, "https://h");
  std::vector<std::string> seen;
  std::string rv = c.watch(pods_path("d"), "", "100", 60, [&](const WatchEvent& e) {
    seen.push_back(e.type);
    return true;
  });
  EXPECT_EQ(seen, std::vector<std::string>{"ADDED"});
  EXPECT_EQ(rv, "101");  // resume from here: MODIFIED comes again
}

TEST(K8sClientWatch, CallbackExceptionPropagates) {
  FakeTransport t;
  t.answers.push_back({200, watch_stream(), {3}});
  Client c(t, "https://h");
  EXPECT_THROW(c.watch(pods_path("d"), "", "1", 60,
                       [](const WatchEvent&) -> bool { throw std::runtime_error("boom"); }),
               std::runtime_error);
}

TEST(K8sClientWatch, MalformedEventIsAnError) {
  FakeTransport t;
  t.answers.push_back({200, "{\"type\":\"ADDED\",\"object\":{}}\nnot json\n"});
  Client c(t, "https://h");
  EXPECT_THROW(c.watch(pods_path("d"), "", "1", 60, [](const WatchEvent&) { return true; }),
               ApiError);
}

// ---- timestamps and logs ------------------------------------------------------------------

TEST(K8sTimestamp, Parses) {
  auto a = parse_timestamp("2025-01-02T03:04:05Z");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->seconds, 1735787045);
  EXPECT_EQ(a->nanos, 0);
  auto b = parse_timestamp("2025-01-02T03:04:05.123456789Z");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->seconds, 1735787045);
  EXPECT_EQ(b->nanos, 123456789);
  // Trailing zeros trimmed (RFC 3339 nano): .1 is 100 ms, earlier than .123.
  auto c = parse_timestamp("2025-01-02T03:04:05.1Z");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->nanos, 100000000);
  EXPECT_LT(*c, *b);
  EXPECT_LT(*a, *c);
  auto d = parse_timestamp("2025-01-02T04:04:05+01:00");
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, *a);
  for (const char* bad :
       {"", "2025-01-02", "2025-01-02T03:04:05", "2025-13-02T03:04:05Z", "2025-02-30T03:04:05Z",
        "2025-01-02T03:04:05.Z", "2025-01-02T03:04:05.1234567890Z", "2025-01-02T03:04:05Zx",
        "hello world"}) {
    EXPECT_FALSE(parse_timestamp(bad)) << bad;
  }
}

TEST(K8sLogLine, SplitsTimestampPrefix) {
  auto l = split_log_timestamp("2025-06-01T10:00:00.000000001Z epoch 1 loss 0.5");
  ASSERT_TRUE(l.time);
  EXPECT_EQ(l.stamp, "2025-06-01T10:00:00.000000001Z");
  EXPECT_EQ(l.text, "epoch 1 loss 0.5");
  EXPECT_EQ(l.time->nanos, 1);
  auto empty = split_log_timestamp("2025-06-01T10:00:00Z ");
  ASSERT_TRUE(empty.time);
  EXPECT_EQ(empty.text, "");
  auto none = split_log_timestamp("no timestamp here");
  EXPECT_FALSE(none.time);
  EXPECT_EQ(none.text, "no timestamp here");
}

TEST(K8sClientLogs, QueryAndChunks) {
  FakeTransport t;
  t.answers.push_back({200, "hello\nworld\n", {3}});
  Client c(t, "https://h");
  LogOptions o;
  o.container = "main";
  o.follow = true;
  o.timestamps = true;
  o.since_time = "2025-01-02T03:04:05.5+00:00";
  o.tail_lines = 10;
  std::string got;
  c.logs("default", "p-1", o, [&](std::string_view chunk) {
    got += chunk;
    return true;
  });
  EXPECT_EQ(got, "hello\nworld\n");
  EXPECT_EQ(t.requests[0].url,
            "https://h/api/v1/namespaces/default/pods/p-1/log?container=main&follow=true&"
            "timestamps=true&sinceTime=2025-01-02T03%3A04%3A05.5%2B00%3A00&tailLines=10");
  EXPECT_EQ(t.requests[0].timeout.count(), 0);
}

TEST(K8sClientLogs, WaitingToStartIs400) {
  FakeTransport t;
  t.answers.push_back(
      {400, status_body(400, "BadRequest",
                        "container \"main\" in pod \"p\" is waiting to start: ContainerCreating")});
  Client c(t, "https://h");
  try {
    c.logs("default", "p", {}, [](std::string_view) { return true; });
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 400);
    EXPECT_EQ(e.reason(), "BadRequest");
  }
}

// ---- follow_pod_log -----------------------------------------------------------------------

std::string ts(int second, int nanos) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2025-06-01T10:00:%02d.%09dZ", second, nanos);
  return buf;
}

// Lines "line N" with timestamps; several lines share a timestamp to exercise the counting.
struct Log {
  std::vector<std::pair<std::string, std::string>> lines;  // stamp, text
  std::string from(const std::string& since) const {
    std::string out;
    auto since_t = since.empty() ? std::nullopt : parse_timestamp(since);
    for (const auto& [stamp, text] : lines) {
      if (since_t && *parse_timestamp(stamp) < *since_t) continue;
      out += stamp + " " + text + "\n";
    }
    return out;
  }
};

Log numbered_log(int n) {
  Log log;
  for (int i = 1; i <= n; ++i) {
    // Groups of three lines share one timestamp.
    log.lines.emplace_back(ts(i / 3, (i / 3) * 1000), "line " + std::to_string(i));
  }
  return log;
}

std::string expected_lines(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

std::string query_param(const std::string& url, const std::string& key) {
  auto p = url.find(key + "=");
  if (p == std::string::npos) return {};
  auto e = url.find('&', p);
  std::string v =
      url.substr(p + key.size() + 1, e == std::string::npos ? e : e - p - key.size() - 1);
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '%' && i + 2 < v.size()) {
      out += static_cast<char>(std::stoi(v.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += v[i];
    }
  }
  return out;
}

// A transport that serves LOG from each request's sinceTime, cutting the first CUTS streams
// after the given byte counts.
class LogServer : public http::Transport {
 public:
  LogServer(Log log, std::vector<size_t> cuts, std::vector<size_t> chunks)
      : log_(std::move(log)), cuts_(std::move(cuts)), chunks_(std::move(chunks)) {}
  http::Response send(const http::Request& request) override {
    urls.push_back(request.url);
    std::string body = log_.from(query_param(request.url, "sinceTime"));
    FakeTransport inner;
    Answer a{200, body, chunks_};
    if (streams_ < cuts_.size()) a.drop_after = cuts_[streams_];
    ++streams_;
    inner.answers.push_back(a);
    return inner.send(request);
  }
  std::vector<std::string> urls;

 private:
  Log log_;
  std::vector<size_t> cuts_;
  std::vector<size_t> chunks_;
  size_t streams_ = 0;
};

TEST(K8sFollowLog, ReconnectsWithoutGapsOrRepeats) {
  Log log = numbered_log(40);
  const size_t total = log.from("").size();
  // Cut at every possible place in the first stream, and in a few combinations.
  for (size_t cut = 0; cut < total; cut += 7) {
    for (std::vector<size_t> chunks : std::vector<std::vector<size_t>>{{1}, {5, 17}, {}}) {
      LogServer server(log, {cut, cut / 2 + 3, 10}, chunks);
      Client c(server, "https://h");
      std::string got;
      std::vector<int> attempts;
      FollowOptions o;
      o.wait = [&](int attempt) {
        attempts.push_back(attempt);
        return true;
      };
      follow_pod_log(c, "default", "p", o, [&](std::string_view line) { got += line; });
      EXPECT_EQ(got, expected_lines(40)) << "cut " << cut;
      EXPECT_EQ(server.urls.size(), 4u);
      EXPECT_EQ(query_param(server.urls[0], "sinceTime"), "");
      EXPECT_EQ(query_param(server.urls[0], "timestamps"), "true");
      EXPECT_EQ(query_param(server.urls[0], "follow"), "true");
      EXPECT_EQ(query_param(server.urls[0], "container"), "main");
      EXPECT_EQ(attempts.size(), 3u);
    }
  }
}

TEST(K8sFollowLog, ServerRoundingSinceTimeDownIsHarmless) {
  // A server that ignores sinceTime's fraction resends older lines of the same second.
  class Rounding : public http::Transport {
   public:
    http::Response send(const http::Request& request) override {
      std::string since = query_param(request.url, "sinceTime");
      if (since.size() > 19) since = since.substr(0, 19) + "Z";
      std::string body = log.from(since);
      FakeTransport inner;
      inner.answers.push_back(
          {200, body, {4}, n++ < 3 ? std::optional<size_t>(body.size() / 3) : std::nullopt});
      return inner.send(request);
    }
    Log log = [] {
      Log l;  // ten lines a second, pairs sharing a timestamp
      for (int i = 1; i <= 30; ++i)
        l.lines.emplace_back(ts(i / 10, (i % 10) / 2 * 1000), "line " + std::to_string(i));
      return l;
    }();
    int n = 0;
  } server;
  Client c(server, "https://h");
  std::string got;
  FollowOptions o;
  o.wait = [](int) { return true; };
  follow_pod_log(c, "d", "p", o, [&](std::string_view line) { got += line; });
  EXPECT_EQ(got, expected_lines(30));
}

TEST(K8sFollowLog, CleanEndBeforeFinishedReconnectsAndPartialLastLine) {
  FakeTransport t;
  std::string first = ts(1, 0) + " a\n" + ts(1, 0) + " b\n" + ts(2, 5) + " partial-";
  std::string second = ts(1, 0) + " a\n" + ts(1, 0) + " b\n" + ts(2, 5) + " partial-end";
  t.answers.push_back({200, first, {3}});
  t.answers.push_back({200, second, {2}});
  t.answers.push_back({200, second, {4}});  // the plain read that confirms the end
  Client c(t, "https://h");
  int finished_calls = 0;
  FollowOptions o;
  o.wait = [](int) { return true; };
  o.finished = [&] { return ++finished_calls >= 2; };
  std::vector<std::string> lines;
  follow_pod_log(c, "d", "p", o, [&](std::string_view line) { lines.emplace_back(line); });
  EXPECT_EQ(lines, (std::vector<std::string>{"a\n", "b\n", "partial-end\n"}));
  ASSERT_EQ(t.requests.size(), 3u);
  EXPECT_EQ(query_param(t.requests[1].url, "sinceTime"), ts(1, 0));
  EXPECT_EQ(query_param(t.requests[2].url, "follow"), "");
}

TEST(K8sFollowLog, CleanEndAfterTheContainerExitedIsConfirmedByAPlainRead) {
  // The stream is closed cleanly after 7 lines although the container has already written 50:
  // log rotation or a proxy. The plain read from the last position brings the 43 others.
  Log log = numbered_log(50);
  std::string all = log.from("");
  size_t seventh = 0;
  for (int i = 0; i < 7; ++i) seventh = all.find('\n', seventh) + 1;
  FakeTransport t;
  t.answers.push_back({200, all.substr(0, seventh), {11}});
  Client c(t, "https://h");
  FollowOptions o;
  o.wait = [](int) { return true; };
  int finished_calls = 0;
  o.finished = [&] {
    ++finished_calls;
    // The confirming read is answered from the position it asks for.
    t.answers.push_back({200, log.from(query_param(t.requests.back().url, "sinceTime")), {13}});
    return true;
  };
  std::string got;
  follow_pod_log(c, "d", "p", o, [&](std::string_view line) { got += line; });
  EXPECT_EQ(got, expected_lines(50));
  EXPECT_EQ(finished_calls, 1);
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(query_param(t.requests[1].url, "follow"), "");
  EXPECT_EQ(query_param(t.requests[1].url, "timestamps"), "true");
  EXPECT_FALSE(query_param(t.requests[1].url, "sinceTime").empty());
}

TEST(K8sFollowLog, ALogTheCallerKnowsCompleteEndsAtItsLastLineWithoutAskingMore) {
  // The stream goes on past the end line (the container's exit not yet noticed): nothing after
  // it is delivered, and neither FINISHED nor a confirming read is asked for.
  FakeTransport t;
  t.answers.push_back({200, ts(1, 0) + " a\n" + ts(1, 1) + " END\n" + ts(1, 2) + " after\n", {5}});
  Client c(t, "https://h");
  FollowOptions o;
  o.wait = [](int) {
    ADD_FAILURE() << "no reconnect";
    return false;
  };
  int finished_calls = 0;
  o.finished = [&] { return ++finished_calls > 0; };
  std::vector<std::string> lines;
  o.complete = [&] { return !lines.empty() && lines.back() == "END\n"; };
  follow_pod_log(c, "d", "p", o, [&](std::string_view line) { lines.emplace_back(line); });
  EXPECT_EQ(lines, (std::vector<std::string>{"a\n", "END\n"}));
  EXPECT_EQ(finished_calls, 0);
  EXPECT_EQ(t.requests.size(), 1u);
}

TEST(K8sFollowLog, ACutStreamIsResumedUntilTheLogIsComplete) {
  // Cut before the end line: the follow reconnects from its position and stops at the end.
  FakeTransport t;
  const std::string log = ts(1, 0) + " a\n" + ts(1, 1) + " b\n" + ts(1, 2) + " END\n";
  t.answers.push_back({200, log, {}, log.find(" b")});
  t.answers.push_back({200, log});
  Client c(t, "https://h");
  FollowOptions o;
  o.wait = [](int) { return true; };
  o.finished = [] { return true; };
  std::vector<std::string> lines;
  o.complete = [&] { return !lines.empty() && lines.back() == "END\n"; };
  follow_pod_log(c, "d", "p", o, [&](std::string_view line) { lines.emplace_back(line); });
  EXPECT_EQ(lines, (std::vector<std::string>{"a\n", "b\n", "END\n"}));
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(query_param(t.requests[1].url, "sinceTime"), ts(1, 0));
  EXPECT_EQ(query_param(t.requests[1].url, "follow"), "true");
}

TEST(K8sFollowLog, ConfirmingReadOfAPodThatIsGoneEnds) {
  FakeTransport t;
  t.answers.push_back({200, ts(1, 0) + " a\n"});
  t.answers.push_back({404, status_body(404, "NotFound", "pods \"p\" not found")});
  Client c(t, "https://h");
  FollowOptions o;
  o.wait = [](int) { return true; };
  o.finished = [] { return true; };
  std::string got;
  follow_pod_log(c, "d", "p", o, [&](std::string_view line) { got += line; });
  EXPECT_EQ(got, "a\n");
  EXPECT_EQ(t.requests.size(), 2u);
}

TEST(K8sFollowLog, WaitsWhileContainerIsStarting) {
  FakeTransport t;
  auto waiting = status_body(
      400, "BadRequest", "container \"main\" in pod \"p\" is waiting to start: ContainerCreating");
  t.answers.push_back({400, waiting});
  t.answers.push_back({400, waiting});
  t.answers.push_back({0, "", {}, std::nullopt, true});  // connection refused
  t.answers.push_back({200, ts(0, 1) + " hi\n"});
  Client c(t, "https://h");
  std::vector<int> attempts;
  FollowOptions o;
  o.wait = [&](int attempt) {
    attempts.push_back(attempt);
    return true;
  };
  std::string got;
  follow_pod_log(c, "d", "p", o, [&](std::string_view line) { got += line; });
  EXPECT_EQ(got, "hi\n");
  EXPECT_EQ(attempts, (std::vector<int>{1, 2, 3}));
}

TEST(K8sFollowLog, WaitReturningFalseStops) {
  FakeTransport t;
  t.answers.push_back({400, status_body(400, "BadRequest",
                                        "container \"main\" in pod \"p\" is waiting to start: "
                                        "ImagePullBackOff")});
  Client c(t, "https://h");
  FollowOptions o;
  o.wait = [](int) { return false; };
  follow_pod_log(c, "d", "p", o, [](std::string_view) {});
  EXPECT_EQ(t.requests.size(), 1u);
}

TEST(K8sFollowLog, OtherErrorsPropagate) {
  FakeTransport t;
  t.answers.push_back({404, status_body(404, "NotFound", "pods \"p\" not found")});
  Client c(t, "https://h");
  FollowOptions o;
  o.wait = [](int) { return true; };
  EXPECT_THROW(follow_pod_log(c, "d", "p", o, [](std::string_view) {}), ApiError);
  FakeTransport t2;
  t2.answers.push_back(
      {400, status_body(400, "BadRequest", "container sidecar is not valid for pod p")});
  Client c2(t2, "https://h");
  EXPECT_THROW(follow_pod_log(c2, "d", "p", o, [](std::string_view) {}), ApiError);
}

}  // namespace
}  // namespace kinetic::k8s
