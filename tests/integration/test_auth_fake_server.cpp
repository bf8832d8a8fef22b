// End to end over HTTP on 127.0.0.1: kinetic's credential sources, through the curl transport,
// against the fake token endpoint and metadata server (tests/fakes/fake_oauth.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "auth/adc.h"
#include "auth/authed.h"
#include "auth/sources.h"
#include "auth/token_cache.h"
#include "core/error.h"
#include "fakes/fake_oauth.h"
#include "unit/test_auth_keys.h"
#include "unit/test_auth_support.h"

namespace kinetic::auth {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));

struct Server {
  fakes::FakeOAuth fake;
  std::shared_ptr<http::Transport> http = http::make_curl_transport();
  TempDir dir;
  Server() {
    fake.set_clock([] { return kNow; });
    fake.add_service_account("sa@proj.iam.gserviceaccount.com", testkeys::kPublicKey);
    fake.add_authorized_user("cid", "S3CRET-client", "1//REFRESH-secret");
  }
  fs::path key_file(const char* pem = testkeys::kPrivateKey) {
    return dir.write("sa.json", nlohmann::json{{"type", "service_account"},
                                               {"private_key_id", "k1"},
                                               {"private_key", pem},
                                               {"client_email", "sa@proj.iam.gserviceaccount.com"},
                                               {"token_uri", fake.token_url()}}
                                    .dump());
  }
  fs::path user_file(const std::string& refresh = "1//REFRESH-secret") {
    return dir.write("user.json", nlohmann::json{{"type", "authorized_user"},
                                                 {"client_id", "cid"},
                                                 {"client_secret", "S3CRET-client"},
                                                 {"refresh_token", refresh},
                                                 {"token_uri", fake.token_url()}}
                                      .dump());
  }
  std::unique_ptr<CredentialSource> adc(
      std::map<std::string, std::string> vars, Clock now = [] { return kNow; }) {
    vars["HOME"] = (dir.path / "home").string();
    AdcOptions opts;
    opts.now = std::move(now);
    return find_credentials(Env::from_map(std::move(vars)), http, opts);
  }
};

std::string auth_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::auth) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(AuthFakeServer, ServiceAccountJwtGrant) {
  Server s;
  TokenCache cache(s.adc({{"GOOGLE_APPLICATION_CREDENTIALS", s.key_file().string()}}),
                   [] { return kNow; });
  EXPECT_EQ(cache.token(), "ya29.fake-1");
  EXPECT_EQ(cache.token(), "ya29.fake-1");
  EXPECT_EQ(cache.current().expiry, kNow + 3599s);
  EXPECT_EQ(s.fake.grants(), 1);
  cache.invalidate();
  EXPECT_EQ(cache.token(), "ya29.fake-2");
}

TEST(AuthFakeServer, WrongKeyIsRejectedWithTheServersReason) {
  Server s;
  auto path = s.key_file(testkeys::kOtherPrivateKey);
  auto src = s.adc({{"GOOGLE_APPLICATION_CREDENTIALS", path.string()}});
  std::string msg = auth_error([&] { src->fetch(); });
  EXPECT_NE(msg.find("invalid_grant: Invalid JWT Signature."), std::string::npos) << msg;
  EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
  EXPECT_EQ(s.fake.grants(), 0);
}

TEST(AuthFakeServer, ClockSkewIsRejected) {
  Server s;
  auto src = s.adc({{"GOOGLE_APPLICATION_CREDENTIALS", s.key_file().string()}},
                   [] { return kNow + 2h; });  // our clock runs two hours ahead
  std::string msg = auth_error([&] { src->fetch(); });
  EXPECT_NE(msg.find("invalid_grant"), std::string::npos) << msg;
  src = s.adc({{"GOOGLE_APPLICATION_CREDENTIALS", s.key_file().string()}},
              [] { return kNow - 2h; });  // behind: the assertion has expired
  msg = auth_error([&] { src->fetch(); });
  EXPECT_NE(msg.find("invalid_grant"), std::string::npos) << msg;
}

TEST(AuthFakeServer, AuthorizedUserRefreshGrant) {
  Server s;
  auto src = s.adc({{"GOOGLE_APPLICATION_CREDENTIALS", s.user_file().string()}});
  EXPECT_EQ(src->fetch().value, "ya29.fake-1");
  EXPECT_EQ(s.fake.grants(), 1);
}

TEST(AuthFakeServer, RevokedRefreshTokenIsOneLineWithoutSecrets) {
  Server s;
  auto src = s.adc({{"GOOGLE_APPLICATION_CREDENTIALS", s.user_file("1//OTHER-secret").string()}});
  std::string msg = auth_error([&] { src->fetch(); });
  EXPECT_NE(msg.find("invalid_grant"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gcloud auth application-default login"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("secret"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(AuthFakeServer, MetadataServer) {
  Server s;
  s.fake.set_metadata_email("pod@proj.iam.gserviceaccount.com");
  auto src = s.adc({{"GCE_METADATA_HOST", s.fake.host()}});
  EXPECT_EQ(src->fetch().value, "ya29.fake-1");
  EXPECT_EQ(s.fake.metadata_tokens(), 1);
  SourceInfo info = src->describe();
  EXPECT_EQ(info.source, "metadata server " + s.fake.host());
  EXPECT_EQ(info.account, "pod@proj.iam.gserviceaccount.com");
}

TEST(AuthFakeServer, MetadataServerRequiresTheFlavorHeader) {
  Server s;
  http::Request req;
  req.url =
      "http://" + s.fake.host() + "/computeMetadata/v1/instance/service-accounts/default/token";
  EXPECT_EQ(s.http->send(req).status, 403);
  req.headers = {{"Metadata-Flavor", "Google"}};
  EXPECT_EQ(s.http->send(req).status, 200);
}

TEST(AuthFakeServer, NoMetadataServerMeansNoCredentials) {
  Server s;
  int port = s.fake.port();
  {
    fakes::FakeOAuth other;  // a port that was just freed: nothing listens there
    port = other.port();
  }
  std::string msg = auth_error([&] {
    s.adc({{"GCE_METADATA_HOST", "127.0.0.1:" + std::to_string(port)}});
  });
  EXPECT_NE(msg.find("no Google credentials found"), std::string::npos) << msg;
}

TEST(AuthFakeServer, AuthedRefreshesAfterAServerSide401) {
  Server s;
  auto cache = std::make_shared<TokenCache>(
      s.adc({{"GOOGLE_APPLICATION_CREDENTIALS", s.key_file().string()}}), [] { return kNow; });
  // An API that accepts only the latest token the fake issued.
  auto api = std::make_unique<testing::ScriptedTransport>([&s](const http::Request& r) {
    http::Response res;
    res.status = testing::header_of(r, "Authorization") == "Bearer " + s.fake.last_access_token()
                     ? 200
                     : 401;
    return res;
  });
  auto t = authed(std::move(api), cache);
  EXPECT_EQ(t->send(http::Request{}).status, 200);
  ASSERT_EQ(s.http
                ->send([&] {
                  // Another client takes a token: ours is now stale for the API above.
                  http::Request r;
                  r.method = "POST";
                  r.url = s.fake.token_url();
                  r.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
                  r.body =
                      "grant_type=refresh_token&client_id=cid&client_secret=S3CRET-client"
                      "&refresh_token=1%2F%2FREFRESH-secret";
                  return r;
                }())
                .status,
            200);
  EXPECT_EQ(t->send(http::Request{}).status, 200);
  EXPECT_EQ(s.fake.grants(), 3);
}

}  // namespace
}  // namespace kinetic::auth
