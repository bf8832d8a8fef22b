// --notify (backend/notify.h): the summary's payload against tests/golden/notify_payloads.json
// (the GKE bootstrap's copy is held to the same vectors in tests/integration/test_bootstrap.cpp),
// the URL checks, and posting: retried on 5xx, given up with a warning that hides the URL's path.
#include <gtest/gtest.h>

#include <fstream>

#include "backend/notify.h"
#include "core/error.h"
#include "test_auth_support.h"

namespace kinetic {
namespace {

using nlohmann::json;

NotifyFacts facts_from(const json& j) {
  NotifyFacts f;
  f.job = j["job"];
  f.state = j["state"];
  if (!j["exit_code"].is_null()) f.exit_code = j["exit_code"].get<int>();
  f.error = j["error"];
  f.attempts = j["attempts"];
  f.duration_seconds = j["duration_seconds"];
  f.accelerator = j["accelerator"];
  f.backend = j["backend"];
  if (!j["cost_usd"].is_null()) f.cost_usd = j["cost_usd"].get<double>();
  f.outputs = j["outputs"];
  return f;
}

TEST(Notify, PayloadsAsTheGoldenVectorsSay) {
  std::ifstream in(std::string(KINETIC_GOLDEN_DIR) + "/notify_payloads.json");
  const json cases = json::parse(in);
  ASSERT_GE(cases.size(), 5u);
  for (const auto& c : cases) {
    const json got = json::parse(notify_payload(facts_from(c["facts"])).dump());
    EXPECT_EQ(got, c["payload"]) << c["name"];
  }
}

TEST(Notify, FactsComeFromTheStatusAndThePrice) {
  JobStatus st;
  st.id = "job-1a2b3c4d";
  st.state = std::string(kFailed);
  st.exit_code = 2;
  st.error = "ValueError: bad";
  st.attempts = 0;  // not known: one
  st.duration_seconds = 1800;
  st.accelerator = "l4";
  st.backend = "gke";
  auto f = notify_facts(st, 1.2, "gs://b/jobs/job-1a2b3c4d/results/");
  EXPECT_EQ(f.attempts, 1);
  ASSERT_TRUE(f.cost_usd);
  EXPECT_DOUBLE_EQ(*f.cost_usd, 0.6);
  EXPECT_FALSE(notify_facts(st, 0, "").cost_usd) << "unpriced: no cost rather than $0";
}

TEST(Notify, UrlsMustBeHttpsOrLoopbackHttp) {
  EXPECT_NO_THROW(require_notify_url("https://hooks.slack.com/services/T0/B0/xyz"));
  EXPECT_NO_THROW(require_notify_url("http://127.0.0.1:8080/hook"));
  EXPECT_NO_THROW(require_notify_url("http://localhost/hook"));
  for (const std::string bad :
       {"http://example.com/T0/secret", "ftp://x/secret", "hooks/secret", "https:///secret", ""}) {
    try {
      require_notify_url(bad);
      ADD_FAILURE() << bad << " was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos)
          << "the error shows the URL's path: " << e.what();
    }
  }
}

TEST(Notify, RedactedUrlsKeepSchemeAndHostOnly) {
  EXPECT_EQ(redact_url("https://hooks.slack.com/services/T0/B0/xyz"), "https://hooks.slack.com/…");
  EXPECT_EQ(redact_url("https://user:pw@chat.googleapis.com/v1/spaces/A?key=K&token=T"),
            "https://chat.googleapis.com/…");
  EXPECT_EQ(redact_url("https://example.com"), "https://example.com");
  EXPECT_EQ(redact_url("nonsense-token"), "…");
  EXPECT_EQ(split_notify_urls("https://a/1\n\nhttps://b/2\n"),
            (std::vector<std::string>{"https://a/1", "https://b/2"}));
}

// The poster builds its own transport; the test's forwards to one script.
struct Forward : http::Transport {
  explicit Forward(testing::ScriptedTransport& t) : to(t) {}
  http::Response send(const http::Request& r) override { return to.send(r); }
  testing::ScriptedTransport& to;
};

TEST(Notify, PostsToEachUrlRetryingServerErrors) {
  int calls = 0;
  testing::ScriptedTransport script([&](const http::Request& r) {
    ++calls;
    // the first hook fails twice, then takes it; the second takes it at once
    if (r.url.find("first") != std::string::npos && calls <= 2)
      return testing::json_response(503, "{}");
    return testing::json_response(200, "ok");
  });
  std::vector<std::chrono::milliseconds> naps;
  NotifyPoster poster{.transport = [&] { return std::make_unique<Forward>(script); },
                      .sleep = [&](std::chrono::milliseconds d) { naps.push_back(d); }};
  const nlohmann::ordered_json payload = {{"text", "done"}, {"job", "job-1a2b3c4d"}};
  auto warnings =
      post_notifications({"https://a.example/first", "https://b.example/second"}, payload, poster);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  auto sent = script.requests();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(naps.size(), 2u) << "a back-off before each retry";
  for (const auto& r : sent) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(json::parse(r.body), json::parse(payload.dump()));
    EXPECT_EQ(http::find_header(r.headers, "Content-Type"), "application/json");
  }
  EXPECT_EQ(sent.back().url, "https://b.example/second");
}

TEST(Notify, AHookThatKeepsFailingIsAWarningWithoutItsToken) {
  testing::ScriptedTransport script(
      [&](const http::Request&) { return testing::json_response(500, "{}"); });
  testing::ScriptedTransport refusing(
      [&](const http::Request&) { return testing::json_response(404, "no such hook"); });
  NotifyPoster poster{.transport = [&] { return std::make_unique<Forward>(script); },
                      .sleep = [](std::chrono::milliseconds) {},
                      .max_attempts = 3};
  auto warnings = post_notifications({"https://hooks.example/T0/s3cr3t"}, {{"text", "x"}}, poster);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "could not notify https://hooks.example/…: HTTP 500");
  EXPECT_EQ(script.requests().size(), 3u);
  poster.transport = [&] { return std::make_unique<Forward>(refusing); };
  warnings = post_notifications({"https://hooks.example/T0/s3cr3t"}, {{"text", "x"}}, poster);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "could not notify https://hooks.example/…: HTTP 404");
  EXPECT_EQ(refusing.requests().size(), 1u) << "a 404 is not retried";
}

}  // namespace
}  // namespace kinetic
