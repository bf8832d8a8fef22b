// Application Default Credentials: the lookup order layer by layer, and one-line errors for
// missing or malformed credential files that name the file and never quote a secret.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "auth/adc.h"
#include "auth/sources.h"
#include "core/error.h"
#include "test_auth_keys.h"
#include "test_auth_support.h"

namespace kinetic::auth {
namespace {

using testing::json_response;
using testing::ScriptedTransport;
using testing::TempDir;

const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
Clock fixed_clock() {
  return [] { return kNow; };
}

std::string sa_json(const std::string& email = "sa@proj.iam.gserviceaccount.com") {
  return nlohmann::json{
      {"type", "service_account"},    {"project_id", "proj"},
      {"private_key_id", "0123abcd"}, {"private_key", testkeys::kPrivateKey},
      {"client_email", email},        {"token_uri", "https://oauth2.googleapis.com/token"}}
      .dump();
}

std::string user_json(const std::string& account = "") {
  nlohmann::json j = {{"type", "authorized_user"},
                      {"client_id", "cid.apps.googleusercontent.com"},
                      {"client_secret", "S3CRET-client"},
                      {"refresh_token", "1//REFRESH-secret"}};
  if (!account.empty()) j["account"] = account;
  return j.dump();
}

// No metadata server: the probe fails as an unreachable host does.
std::shared_ptr<ScriptedTransport> offline() {
  return std::make_shared<ScriptedTransport>([](const http::Request&) -> http::Response {
    throw http::TransportError("connect failed", true);
  });
}

std::shared_ptr<ScriptedTransport> token_endpoint() {
  return std::make_shared<ScriptedTransport>([](const http::Request&) {
    return json_response(200, R"({"access_token":"ya29.from-endpoint","expires_in":"3599"})");
  });
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::auth);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(Adc, AccessTokenEnvWinsOverEverything) {
  TempDir dir;
  auto key = dir.write("sa.json", sa_json());
  dir.write("gcloud/application_default_credentials.json", user_json());
  Env env = Env::from_map({{"CLOUDSDK_AUTH_ACCESS_TOKEN", "ya29.fixed\n"},
                           {"GOOGLE_APPLICATION_CREDENTIALS", key.string()},
                           {"CLOUDSDK_CONFIG", (dir.path / "gcloud").string()}});
  auto http = offline();
  auto src = find_credentials(env, http);
  AccessToken t = src->fetch();
  EXPECT_EQ(t.value, "ya29.fixed");
  EXPECT_FALSE(t.expiry);
  SourceInfo info = src->describe();
  EXPECT_EQ(info.source, "access token from CLOUDSDK_AUTH_ACCESS_TOKEN");
  EXPECT_EQ(info.account, "unknown");
  EXPECT_TRUE(http->requests().empty());
}

TEST(Adc, AccessTokenFileWinsOverTheEnvToken) {
  TempDir dir;
  auto file = dir.write("token", "ya29.from-file\n");
  Env env = Env::from_map({{"CLOUDSDK_AUTH_ACCESS_TOKEN", "ya29.env"}});
  AdcOptions opts;
  opts.access_token_file = file;
  auto src = find_credentials(env, offline(), opts);
  EXPECT_EQ(src->fetch().value, "ya29.from-file");
  EXPECT_EQ(src->describe().source, "access token from --access-token-file " + file.string());
}

TEST(Adc, AccessTokenFileMissingOrEmptyNamesTheFile) {
  TempDir dir;
  AdcOptions opts;
  opts.access_token_file = dir.path / "nope";
  std::string msg = error_of([&] { find_credentials(Env::from_map({}), offline(), opts); });
  EXPECT_NE(msg.find((dir.path / "nope").string()), std::string::npos) << msg;
  opts.access_token_file = dir.write("empty", "\n");
  msg = error_of([&] { find_credentials(Env::from_map({}), offline(), opts); });
  EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
}

TEST(Adc, ServiceAccountKeyFromGoogleApplicationCredentials) {
  TempDir dir;
  auto key = dir.write("sa.json", sa_json());
  dir.write("gcloud/application_default_credentials.json", user_json());
  Env env = Env::from_map({{"GOOGLE_APPLICATION_CREDENTIALS", key.string()},
                           {"CLOUDSDK_CONFIG", (dir.path / "gcloud").string()}});
  auto http = token_endpoint();
  AdcOptions opts;
  opts.now = fixed_clock();
  auto src = find_credentials(env, http, opts);
  SourceInfo info = src->describe();
  EXPECT_EQ(info.source, "service account key " + key.string());
  EXPECT_EQ(info.account, "sa@proj.iam.gserviceaccount.com");
  AccessToken t = src->fetch();
  EXPECT_EQ(t.value, "ya29.from-endpoint");
  EXPECT_EQ(t.expiry, kNow + std::chrono::seconds(3599));  // expires_in as a string
  auto reqs = http->requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].url, "https://oauth2.googleapis.com/token");
  EXPECT_EQ(testing::header_of(reqs[0], "Content-Type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(reqs[0].body.rfind("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
                               "&assertion=ey",
                               0),
            0u)
      << reqs[0].body;
}

TEST(Adc, AuthorizedUserFromGoogleApplicationCredentials) {
  TempDir dir;
  auto file = dir.write("user.json", user_json());
  auto http = token_endpoint();
  auto src =
      find_credentials(Env::from_map({{"GOOGLE_APPLICATION_CREDENTIALS", file.string()}}), http);
  EXPECT_EQ(src->describe().source,
            "authorized user (GOOGLE_APPLICATION_CREDENTIALS " + file.string() + ")");
  EXPECT_EQ(src->fetch().value, "ya29.from-endpoint");
  auto reqs = http->requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].url, "https://oauth2.googleapis.com/token");
  EXPECT_EQ(reqs[0].body,
            "grant_type=refresh_token&client_id=cid.apps.googleusercontent.com"
            "&client_secret=S3CRET-client&refresh_token=1%2F%2FREFRESH-secret");
}

TEST(Adc, GcloudAdcFileUnderCloudsdkConfig) {
  TempDir dir;
  auto adc = dir.write("cfg/application_default_credentials.json", user_json("me@example.com"));
  auto src = find_credentials(Env::from_map({{"CLOUDSDK_CONFIG", (dir.path / "cfg").string()},
                                             {"HOME", (dir.path / "home").string()}}),
                              offline());
  SourceInfo info = src->describe();
  EXPECT_EQ(info.source, "authorized user (gcloud ADC file " + adc.string() + ")");
  EXPECT_EQ(info.account, "me@example.com");
}

TEST(Adc, GcloudAdcFileUnderHome) {
  TempDir dir;
  auto adc = dir.write("home/.config/gcloud/application_default_credentials.json", user_json());
  auto src = find_credentials(Env::from_map({{"HOME", (dir.path / "home").string()}}), offline());
  SourceInfo info = src->describe();
  EXPECT_EQ(info.source, "authorized user (gcloud ADC file " + adc.string() + ")");
  EXPECT_EQ(info.account, "unknown");
}

TEST(Adc, MetadataServerWhenNothingElse) {
  TempDir dir;
  auto http = std::make_shared<ScriptedTransport>([](const http::Request& r) {
    EXPECT_EQ(testing::header_of(r, "Metadata-Flavor"), "Google");
    http::Response res;
    res.status = 200;
    res.headers = {{"metadata-flavor", "Google"}};
    const std::string base =
        "http://10.0.0.9:8080/computeMetadata/v1/instance/service-accounts/default";
    if (r.url == "http://10.0.0.9:8080/") {
      EXPECT_GT(r.timeout.count(), 0);
      EXPECT_LE(r.timeout.count(), 3000);
    } else if (r.url == base + "/token") {
      res.body = R"({"access_token":"ya29.md","expires_in":3599,"token_type":"Bearer"})";
    } else if (r.url == base + "/email") {
      res.body = "pod-sa@proj.iam.gserviceaccount.com";
    } else {
      ADD_FAILURE() << r.url;
      res.status = 404;
    }
    return res;
  });
  AdcOptions opts;
  opts.now = fixed_clock();
  auto src = find_credentials(Env::from_map({{"HOME", (dir.path / "home").string()},
                                             {"GCE_METADATA_HOST", "10.0.0.9:8080"}}),
                              http, opts);
  AccessToken t = src->fetch();
  EXPECT_EQ(t.value, "ya29.md");
  EXPECT_EQ(t.expiry, kNow + std::chrono::seconds(3599));
  SourceInfo info = src->describe();
  EXPECT_EQ(info.source, "metadata server 10.0.0.9:8080");
  EXPECT_EQ(info.account, "pod-sa@proj.iam.gserviceaccount.com");
}

TEST(Adc, MetadataProbeNeedsTheFlavorHeaderInTheAnswer) {
  auto http = std::make_shared<ScriptedTransport>(
      [](const http::Request&) { return json_response(200, "hello from some other server"); });
  EXPECT_FALSE(metadata_server_present(*http, "127.0.0.1:1", std::chrono::milliseconds(100)));
  EXPECT_FALSE(metadata_server_present(*offline(), "127.0.0.1:1", std::chrono::milliseconds(100)));
}

TEST(Adc, NothingFoundSaysWhatToDo) {
  TempDir dir;
  auto http = offline();
  std::string msg = error_of([&] {
    find_credentials(Env::from_map({{"HOME", (dir.path / "home").string()}}), http);
  });
  EXPECT_EQ(msg,
            "no Google credentials found; run `gcloud auth application-default login`, set "
            "GOOGLE_APPLICATION_CREDENTIALS, or CLOUDSDK_AUTH_ACCESS_TOKEN");
  ASSERT_EQ(http->requests().size(), 1u);  // the probe, and nothing else
  EXPECT_EQ(http->requests()[0].url, "http://169.254.169.254/");
}

TEST(Adc, EmptyVariablesCountAsUnset) {
  TempDir dir;
  std::string msg = error_of([&] {
    find_credentials(Env::from_map({{"HOME", (dir.path / "home").string()},
                                    {"CLOUDSDK_AUTH_ACCESS_TOKEN", ""},
                                    {"GOOGLE_APPLICATION_CREDENTIALS", ""}}),
                     offline());
  });
  EXPECT_NE(msg.find("no Google credentials found"), std::string::npos);
}

// Each malformed file: Errc::auth, one line, names the file, never a secret.
TEST(Adc, MalformedFilesGiveOneLineErrorsNamingTheFile) {
  TempDir dir;
  nlohmann::json no_key = nlohmann::json::parse(sa_json());
  no_key.erase("private_key");
  nlohmann::json bad_pem = nlohmann::json::parse(sa_json());
  bad_pem["private_key"] = "-----BEGIN PRIVATE KEY-----\nS3CRET-pem\n-----END PRIVATE KEY-----\n";
  nlohmann::json no_refresh = nlohmann::json::parse(user_json());
  no_refresh.erase("refresh_token");
  struct Case {
    std::string name, text, expect;
  } cases[] = {
      {"truncated.json", "{\"type\":\"authorized_user\",\"client_secret\":\"S3CRET-client\"",
       "not valid JSON"},
      {"array.json", "[1,2]", "not a JSON object"},
      {"notype.json", R"({"client_secret":"S3CRET-client"})", "\"type\""},
      {"external.json", R"({"type":"external_account"})", "external_account"},
      {"nokey.json", no_key.dump(), "lacks \"private_key\""},
      {"badpem.json", bad_pem.dump(), "private_key"},
      {"norefresh.json", no_refresh.dump(), "lacks \"refresh_token\""},
  };
  for (const auto& c : cases) {
    auto path = dir.write(c.name, c.text);
    std::string msg = error_of([&] {
      find_credentials(Env::from_map({{"GOOGLE_APPLICATION_CREDENTIALS", path.string()}}),
                       offline());
    });
    EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.find("S3CRET"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("BEGIN"), std::string::npos) << msg;
  }
  // The same checks apply to the gcloud ADC file.
  auto adc = dir.write("cfg/application_default_credentials.json", "not json");
  std::string msg = error_of([&] {
    find_credentials(Env::from_map({{"CLOUDSDK_CONFIG", (dir.path / "cfg").string()}}), offline());
  });
  EXPECT_NE(msg.find(adc.string()), std::string::npos) << msg;
}

TEST(Adc, MissingOrUnreadableFileNamesIt) {
  TempDir dir;
  auto missing = dir.path / "missing.json";
  std::string msg = error_of([&] {
    find_credentials(Env::from_map({{"GOOGLE_APPLICATION_CREDENTIALS", missing.string()}}),
                     offline());
  });
  EXPECT_EQ(msg, "credential file " + missing.string() + ": does not exist");
  msg = error_of([&] {
    find_credentials(Env::from_map({{"GOOGLE_APPLICATION_CREDENTIALS", dir.path.string()}}),
                     offline());
  });
  EXPECT_EQ(msg, "credential file " + dir.path.string() + ": is a directory");
}

TEST(Adc, TokenEndpointErrorsAreOneLineWithoutSecrets) {
  TempDir dir;
  auto file = dir.write("user.json", user_json());
  auto http = std::make_shared<ScriptedTransport>([](const http::Request&) {
    return json_response(
        400,
        R"({"error":"invalid_grant","error_description":"Token 1//REFRESH-secret has been\nexpired or revoked."})");
  });
  auto src =
      find_credentials(Env::from_map({{"GOOGLE_APPLICATION_CREDENTIALS", file.string()}}), http);
  std::string msg = error_of([&] { src->fetch(); });
  EXPECT_NE(msg.find("invalid_grant"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gcloud auth application-default login"), std::string::npos) << msg;
  EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
  EXPECT_EQ(msg.find("REFRESH-secret"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(Adc, TokenEndpointHtmlErrorStillOneLine) {
  TempDir dir;
  auto key = dir.write("sa.json", sa_json());
  auto http = std::make_shared<ScriptedTransport>(
      [](const http::Request&) { return json_response(502, "<html>\nBad Gateway\n</html>"); });
  auto src =
      find_credentials(Env::from_map({{"GOOGLE_APPLICATION_CREDENTIALS", key.string()}}), http);
  std::string msg = error_of([&] { src->fetch(); });
  EXPECT_NE(msg.find("HTTP 502"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

}  // namespace
}  // namespace kinetic::auth
