// The token cache (refresh within 5 minutes of expiry, invalidate) and the authed() decorator
// (bearer header, one refresh-and-retry on 401).
#include <gtest/gtest.h>

#include "auth/authed.h"
#include "auth/token_cache.h"
#include "auth/token_endpoint.h"
#include "test_auth_support.h"

namespace kinetic::auth {
namespace {

using namespace std::chrono_literals;
using testing::ScriptedTransport;

// Mints "tok-1", "tok-2"... valid for LIFETIME from the injected clock.
class CountingSource : public CredentialSource {
 public:
  CountingSource(std::chrono::system_clock::time_point* now, std::chrono::seconds lifetime)
      : now_(now), lifetime_(lifetime) {}
  AccessToken fetch() override {
    ++fetches;
    return {"tok-" + std::to_string(fetches), *now_ + lifetime_};
  }
  SourceInfo describe() override { return {"counting", "unknown"}; }
  int fetches = 0;

 private:
  std::chrono::system_clock::time_point* now_;
  std::chrono::seconds lifetime_;
};

struct CacheFixture {
  std::chrono::system_clock::time_point now{std::chrono::seconds(1700000000)};
  CountingSource* source = nullptr;
  std::shared_ptr<TokenCache> cache;
  explicit CacheFixture(std::chrono::seconds lifetime = 3600s) {
    auto s = std::make_unique<CountingSource>(&now, lifetime);
    source = s.get();
    cache = std::make_shared<TokenCache>(std::move(s), [this] { return now; });
  }
};

TEST(TokenCache, ReusesUntilFiveMinutesBeforeExpiry) {
  CacheFixture f;
  EXPECT_EQ(f.cache->token(), "tok-1");
  f.now += 54min;
  EXPECT_EQ(f.cache->token(), "tok-1");
  f.now += 59s;  // 54:59 after issue: 5:01 left
  EXPECT_EQ(f.cache->token(), "tok-1");
  f.now += 1s;  // exactly 5 minutes left: refresh
  EXPECT_EQ(f.cache->token(), "tok-2");
  EXPECT_EQ(f.source->fetches, 2);
  auto current = f.cache->current();
  EXPECT_EQ(current.expiry, f.now + 3600s);
}

TEST(TokenCache, InvalidateForcesAFetch) {
  CacheFixture f;
  EXPECT_EQ(f.cache->token(), "tok-1");
  f.cache->invalidate();
  EXPECT_EQ(f.cache->token(), "tok-2");
  EXPECT_EQ(f.cache->token(), "tok-2");
}

TEST(TokenCache, ShortLivedTokensAreRefreshedEachTime) {
  CacheFixture f(60s);  // already inside the refresh margin
  EXPECT_EQ(f.cache->token(), "tok-1");
  EXPECT_EQ(f.cache->token(), "tok-2");
}

TEST(TokenCache, TokensWithoutExpiryAreKept) {
  struct Fixed : CredentialSource {
    int fetches = 0;
    AccessToken fetch() override { return {"fixed-" + std::to_string(++fetches), std::nullopt}; }
    SourceInfo describe() override { return {"fixed", "unknown"}; }
  };
  auto fixed = std::make_unique<Fixed>();
  Fixed* raw = fixed.get();
  TokenCache c(std::move(fixed));
  EXPECT_EQ(c.token(), "fixed-1");
  EXPECT_EQ(c.token(), "fixed-1");
  EXPECT_EQ(raw->fetches, 1);
}

TEST(TokenEndpoint, ParsesNumberAndStringExpiry) {
  auto now = std::chrono::system_clock::time_point(std::chrono::seconds(100));
  http::Response r = testing::json_response(200, R"({"access_token":"a","expires_in":10})");
  EXPECT_EQ(parse_token_response(r, "u", "w", {}, now).expiry, now + 10s);
  r.body = R"({"access_token":"a","expires_in":"20"})";
  EXPECT_EQ(parse_token_response(r, "u", "w", {}, now).expiry, now + 20s);
  r.body = R"({"token_type":"Bearer"})";
  EXPECT_THROW(parse_token_response(r, "u", "w", {}, now), Error);
}

TEST(TokenEndpoint, FormEncoding) {
  EXPECT_EQ(form_encode("a b/c:d&e=f~g.h_i-j"), "a%20b%2Fc%3Ad%26e%3Df~g.h_i-j");
}

// A server that accepts only "Bearer tok-N" for the current N.
struct Api {
  CacheFixture* f;
  int valid = 1;
  int calls = 0;
  std::vector<std::string> seen;
  http::Response operator()(const http::Request& r) {
    ++calls;
    std::string auth = testing::header_of(r, "Authorization");
    seen.push_back(auth);
    http::Response res;
    res.status = auth == "Bearer tok-" + std::to_string(valid) ? 200 : 401;
    return res;
  }
};

TEST(Authed, AddsBearerToken) {
  CacheFixture f;
  auto api = std::make_shared<Api>(Api{&f});
  auto t = authed(
      std::make_unique<ScriptedTransport>([api](const http::Request& r) { return (*api)(r); }),
      f.cache);
  http::Request req;
  req.url = "https://container.googleapis.com/v1/projects/p";
  EXPECT_EQ(t->send(req).status, 200);
  EXPECT_EQ(t->send(req).status, 200);
  EXPECT_EQ(api->seen, (std::vector<std::string>{"Bearer tok-1", "Bearer tok-1"}));
  EXPECT_EQ(f.source->fetches, 1);
}

TEST(Authed, NoTokenUnderTheUnsignedPrefix) {
  CacheFixture f;
  std::vector<std::string> seen;
  auto t = authed(std::make_unique<ScriptedTransport>([&seen](const http::Request& r) {
                    std::string auth;
                    for (const auto& [k, v] : r.headers) {
                      if (k == "Authorization") auth = v;
                    }
                    seen.push_back(r.url + " " + auth);
                    http::Response res;
                    res.status = 200;
                    return res;
                  }),
                  f.cache, "http://127.0.0.1:9023");
  for (const char* url :
       {"http://127.0.0.1:9023/storage/v1/b", "http://127.0.0.1:9023", "http://127.0.0.1:9023?x=1",
        "http://127.0.0.1:90234/b", "https://container.googleapis.com/v1"}) {
    http::Request req;
    req.url = url;
    t->send(req);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"http://127.0.0.1:9023/storage/v1/b ",
                                            "http://127.0.0.1:9023 ", "http://127.0.0.1:9023?x=1 ",
                                            "http://127.0.0.1:90234/b Bearer tok-1",
                                            "https://container.googleapis.com/v1 Bearer tok-1"}));
  EXPECT_EQ(f.source->fetches, 1);
}

TEST(Authed, On401RefreshesOnceAndRetries) {
  CacheFixture f;
  auto api = std::make_shared<Api>(Api{&f});
  auto t = authed(
      std::make_unique<ScriptedTransport>([api](const http::Request& r) { return (*api)(r); }),
      f.cache);
  http::Request req;
  req.method = "POST";
  req.body = "{}";
  req.idempotent = false;
  EXPECT_EQ(t->send(req).status, 200);
  api->valid = 2;  // the token was revoked server-side
  EXPECT_EQ(t->send(req).status, 200);
  EXPECT_EQ(api->seen, (std::vector<std::string>{"Bearer tok-1", "Bearer tok-1", "Bearer tok-2"}));
  EXPECT_EQ(f.source->fetches, 2);
}

TEST(Authed, ASecond401IsReturnedWithoutLooping) {
  CacheFixture f;
  auto api = std::make_shared<Api>(Api{&f});
  api->valid = 99;
  auto t = authed(
      std::make_unique<ScriptedTransport>([api](const http::Request& r) { return (*api)(r); }),
      f.cache);
  EXPECT_EQ(t->send(http::Request{}).status, 401);
  EXPECT_EQ(api->calls, 2);
  EXPECT_EQ(f.source->fetches, 2);
}

TEST(Authed, StreamedBodiesAreNotRetried) {
  CacheFixture f;
  auto api = std::make_shared<Api>(Api{&f});
  api->valid = 99;
  auto t = authed(
      std::make_unique<ScriptedTransport>([api](const http::Request& r) { return (*api)(r); }),
      f.cache);
  http::Request req;
  req.method = "PUT";
  req.body_size = 3;
  req.body_source = [](char* buf, size_t) {
    buf[0] = 'a';
    return size_t{0};
  };
  EXPECT_EQ(t->send(req).status, 401);
  EXPECT_EQ(api->calls, 1);
}

TEST(Authed, KeepsAnExplicitAuthorizationHeader) {
  CacheFixture f;
  auto api = std::make_shared<Api>(Api{&f});
  auto t = authed(
      std::make_unique<ScriptedTransport>([api](const http::Request& r) { return (*api)(r); }),
      f.cache);
  http::Request req;
  req.headers = {{"Authorization", "Bearer tok-1"}};
  EXPECT_EQ(t->send(req).status, 200);
  EXPECT_EQ(api->seen, (std::vector<std::string>{"Bearer tok-1"}));
  EXPECT_EQ(f.source->fetches, 0);
}

}  // namespace
}  // namespace kinetic::auth
