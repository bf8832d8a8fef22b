// A fake Google OAuth2 token endpoint and GCE metadata server on 127.0.0.1 (cpp-httplib, random
// port, served from a background thread; the destructor stops it). It checks what the real
// endpoint checks: for the JWT-bearer grant the RS256 signature against a registered public key
// and the iss/aud/scope/iat/exp claims; for the refresh-token grant the client id, secret and
// refresh token. Errors come back as the real ones do: 400 {"error":"invalid_grant",...}.
// The metadata routes require "Metadata-Flavor: Google" (403 otherwise) and answer with it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace kinetic::fakes {

class FakeOAuth {
 public:
  FakeOAuth();
  ~FakeOAuth();
  FakeOAuth(const FakeOAuth&) = delete;
  FakeOAuth& operator=(const FakeOAuth&) = delete;

  int port() const;
  std::string host() const;       // "127.0.0.1:PORT" (for GCE_METADATA_HOST)
  std::string token_url() const;  // "http://127.0.0.1:PORT/token" (a key's token_uri)

  // Accepts JWT-bearer grants signed by PUBLIC_KEY_PEM for CLIENT_EMAIL.
  void add_service_account(const std::string& client_email, const std::string& public_key_pem);
  // Accepts refresh-token grants with exactly these values.
  void add_authorized_user(const std::string& client_id, const std::string& client_secret,
                           const std::string& refresh_token);
  // The scope a JWT must ask for (default cloud-platform).
  void set_expected_scope(std::string scope);
  // The server's clock for iat/exp checks (default system_clock::now).
  void set_clock(std::function<std::chrono::system_clock::time_point()> now);
  // The metadata server's default service account email.
  void set_metadata_email(std::string email);
  // The next N token requests (either route) answer STATUS with BODY.
  void fail_next(int n, int status, std::string body);

  int grants() const;           // successful token-endpoint grants
  int metadata_tokens() const;  // tokens served by the metadata route
  int requests() const;         // every request received
  std::string last_access_token() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinetic::fakes
