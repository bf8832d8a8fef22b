// The RS256 JWT assertion: golden bytes, a signature the public key verifies, bad keys.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <nlohmann/json.hpp>

#include "auth/jwt.h"
#include "core/error.h"
#include "test_auth_keys.h"

namespace kinetic::auth {
namespace {

ServiceAccountKey test_key() {
  ServiceAccountKey k;
  k.client_email = "kinetic-test@proj.iam.gserviceaccount.com";
  k.private_key = testkeys::kPrivateKey;
  k.private_key_id = "0123abcd";
  k.token_uri = "https://oauth2.googleapis.com/token";
  return k;
}

const auto kJwtNow = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));

std::string b64url_decode(std::string in) {
  for (char& c : in) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (in.size() % 4 != 0) in += '=';
  std::string out(in.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  EXPECT_GE(n, 0);
  out.resize(static_cast<size_t>(n) - std::count(in.begin(), in.end(), '='));
  return out;
}

bool verify(const std::string& public_pem, const std::string& input, const std::string& sig) {
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok =
      key != nullptr && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

TEST(Jwt, Base64UrlHasNoPaddingAndUrlAlphabet) {
  EXPECT_EQ(base64url_encode(""), "");
  EXPECT_EQ(base64url_encode("f"), "Zg");
  EXPECT_EQ(base64url_encode("fo"), "Zm8");
  EXPECT_EQ(base64url_encode("foo"), "Zm9v");
  EXPECT_EQ(base64url_encode("\xfb\xff\xbf"), "-_-_");
}

TEST(Jwt, MatchesGoldenAssertion) {
  EXPECT_EQ(
      make_jwt_assertion(test_key(), "https://www.googleapis.com/auth/cloud-platform", kJwtNow),
      testkeys::kGoldenJwt);
}

TEST(Jwt, HeaderClaimsAndSignatureVerify) {
  std::string jwt =
      make_jwt_assertion(test_key(), "https://www.googleapis.com/auth/cloud-platform", kJwtNow);
  size_t d1 = jwt.find('.');
  size_t d2 = jwt.find('.', d1 + 1);
  ASSERT_NE(d2, std::string::npos);
  EXPECT_EQ(jwt.find('='), std::string::npos);
  auto header = nlohmann::json::parse(b64url_decode(jwt.substr(0, d1)));
  auto claims = nlohmann::json::parse(b64url_decode(jwt.substr(d1 + 1, d2 - d1 - 1)));
  EXPECT_EQ(header, (nlohmann::json{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", "0123abcd"}}));
  EXPECT_EQ(claims["iss"], "kinetic-test@proj.iam.gserviceaccount.com");
  EXPECT_EQ(claims["aud"], "https://oauth2.googleapis.com/token");
  EXPECT_EQ(claims["scope"], "https://www.googleapis.com/auth/cloud-platform");
  EXPECT_EQ(claims["iat"], 1700000000);
  EXPECT_EQ(claims["exp"], 1700003600);
  std::string sig = b64url_decode(jwt.substr(d2 + 1));
  EXPECT_EQ(sig.size(), 256u);  // RSA-2048
  EXPECT_TRUE(verify(testkeys::kPublicKey, jwt.substr(0, d2), sig));
  EXPECT_FALSE(verify(testkeys::kPublicKey, jwt.substr(0, d2) + "x", sig));
}

TEST(Jwt, AudienceIsTheKeysTokenUri) {
  ServiceAccountKey k = test_key();
  k.token_uri = "http://127.0.0.1:9/token";
  std::string jwt = make_jwt_assertion(k, "s", kJwtNow);
  size_t d1 = jwt.find('.');
  auto claims = nlohmann::json::parse(b64url_decode(jwt.substr(d1 + 1, jwt.rfind('.') - d1 - 1)));
  EXPECT_EQ(claims["aud"], "http://127.0.0.1:9/token");
}

TEST(Jwt, RejectsUnusableKeysWithoutQuotingThem) {
  EXPECT_EQ(check_private_key(testkeys::kPrivateKey), "");
  EXPECT_NE(check_private_key("not a key"), "");
  EXPECT_NE(check_private_key("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
            "");
  ServiceAccountKey k = test_key();
  k.private_key = "-----BEGIN PRIVATE KEY-----\nSECRETSTUFF\n-----END PRIVATE KEY-----\n";
  try {
    make_jwt_assertion(k, "s", kJwtNow);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::auth);
    EXPECT_EQ(std::string(e.what()).find("SECRETSTUFF"), std::string::npos);
  }
}

}  // namespace
}  // namespace kinetic::auth
