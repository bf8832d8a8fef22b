// Access tokens, the credential sources that mint them, and the provider interface the
// authed() transport decorator draws tokens from.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace kinetic::auth {

using Clock = std::function<std::chrono::system_clock::time_point()>;

struct AccessToken {
  std::string value;
  // When it stops working; nullopt when unknown (a fixed token from the environment or a file).
  std::optional<std::chrono::system_clock::time_point> expiry;
};

// What `kinetic auth status` shows: never the secret.
struct SourceInfo {
  std::string source;   // "service account key /path", "metadata server HOST", ...
  std::string account;  // client_email, ADC account, metadata email, or "unknown"
};

// One place credentials come from (a key file, the metadata server...). fetch() asks for a new
// token every time; TokenCache decides when that is needed.
class CredentialSource {
 public:
  virtual ~CredentialSource() = default;
  // Throws Error(Errc::auth) when the credentials are rejected; TransportError when the endpoint
  // cannot be reached.
  virtual AccessToken fetch() = 0;
  // May ask the network for the account (the metadata server); falls back to "unknown".
  virtual SourceInfo describe() = 0;
};

// What authed() needs: a currently valid token, and a way to drop it after a 401.
class TokenProvider {
 public:
  virtual ~TokenProvider() = default;
  virtual std::string token() = 0;
  virtual void invalidate() = 0;
};

}  // namespace kinetic::auth
