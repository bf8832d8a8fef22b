// `kinetic auth` as a user runs it, against the fake OAuth token endpoint and metadata server.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "fakes/fake_oauth.h"
#include "schema_check.h"
#include "unit/test_auth_keys.h"

namespace kinetic::test {
namespace {

class AuthCliTest : public ::testing::Test {
 protected:
  Sandbox sb;
  fakes::FakeOAuth oauth;
  // No real metadata server may answer: point the probe at a closed port on loopback.
  std::map<std::string, std::string> env;  // the sandbox already points metadata at loopback

  fs::path service_account_key() {
    oauth.add_service_account("runner@acme-ml.iam.gserviceaccount.com", testkeys::kPublicKey);
    nlohmann::json key = {{"type", "service_account"},
                          {"project_id", "acme-ml"},
                          {"private_key_id", "k1"},
                          {"private_key", testkeys::kPrivateKey},
                          {"client_email", "runner@acme-ml.iam.gserviceaccount.com"},
                          {"client_id", "1"},
                          {"token_uri", oauth.token_url()}};
    return sb.write("home/sa.json", key.dump(), 0600);
  }
};

TEST_F(AuthCliTest, FixedTokenFromTheEnvironmentOrAFile) {
  env["CLOUDSDK_AUTH_ACCESS_TOKEN"] = "ya29.from-env";
  auto r = sb.run({"auth", "print-access-token"}, sb.root(), env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ya29.from-env\n");
  sb.write("tok", "ya29.from-file\n");
  auto f = sb.run({"auth", "print-access-token", "--access-token-file", "tok"}, sb.root(), env);
  EXPECT_EQ(f.out, "ya29.from-file\n") << "--access-token-file comes first";
}

TEST_F(AuthCliTest, ServiceAccountKeyIsExchangedForAToken) {
  env["GOOGLE_APPLICATION_CREDENTIALS"] = service_account_key().string();
  auto r = sb.run({"auth", "print-access-token"}, sb.root(), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, oauth.last_access_token() + "\n");
  EXPECT_EQ(oauth.grants(), 1);
  auto s = sb.run({"auth", "status", "-o", "json"}, sb.root(), env);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto doc = nlohmann::json::parse(s.out);
  expect_schema("AuthStatus", doc);
  EXPECT_EQ(doc["account"], "runner@acme-ml.iam.gserviceaccount.com");
  EXPECT_NE(doc["source"].get<std::string>().find("sa.json"), std::string::npos);
  EXPECT_EQ(s.out.find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(s.out.find(oauth.last_access_token()), std::string::npos) << "status shows no token";
}

TEST_F(AuthCliTest, VerboseTraceShowsRequestsButNoSecret) {
  env["GOOGLE_APPLICATION_CREDENTIALS"] = service_account_key().string();
  auto r = sb.run({"auth", "print-access-token", "-v", "8"}, sb.root(), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string token = oauth.last_access_token();
  EXPECT_EQ(r.out, token + "\n") << "the token itself goes to stdout, as asked";
  EXPECT_NE(r.err.find("POST " + oauth.token_url() + " 200"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(token), std::string::npos) << "token in the trace: " << r.err;
  EXPECT_EQ(r.err.find("eyJ"), std::string::npos) << "JWT assertion in the trace: " << r.err;
  EXPECT_NE(r.err.find("REDACTED"), std::string::npos) << r.err;
}

TEST_F(AuthCliTest, MetadataServerWhenNothingElse) {
  env["GCE_METADATA_HOST"] = oauth.host();
  oauth.set_metadata_email("node@acme-ml.iam.gserviceaccount.com");
  auto r = sb.run({"auth", "status"}, sb.root(), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("node@acme-ml.iam.gserviceaccount.com"), std::string::npos) << r.out;
  EXPECT_EQ(oauth.metadata_tokens(), 1);
}

TEST_F(AuthCliTest, MissingOrBrokenCredentialsAreOneLineErrors) {
  auto none = sb.run({"auth", "print-access-token"}, sb.root(), env);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(line_count(none.err), 1u) << none.err;
  EXPECT_NE(none.err.find("gcloud auth application-default login"), std::string::npos);

  env["GOOGLE_APPLICATION_CREDENTIALS"] = sb.write("home/bad.json", "{not json").string();
  auto bad = sb.run({"auth", "status"}, sb.root(), env);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(line_count(bad.err), 1u) << bad.err;
  EXPECT_NE(bad.err.find("bad.json"), std::string::npos) << bad.err;

  env["GOOGLE_APPLICATION_CREDENTIALS"] = (sb.root() / "missing.json").string();
  auto missing = sb.run({"auth", "status"}, sb.root(), env);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("missing.json"), std::string::npos) << missing.err;
}

TEST_F(AuthCliTest, ARejectedKeyNamesTheKeyButNeverTheSecret) {
  env["GOOGLE_APPLICATION_CREDENTIALS"] = service_account_key().string();
  oauth.fail_next(1, 400, R"({"error":"invalid_grant","error_description":"Invalid JWT"})");
  auto r = sb.run({"auth", "print-access-token"}, sb.root(), env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("invalid_grant"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("PRIVATE"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace kinetic::test
