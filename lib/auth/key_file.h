// Google credential files (service account keys and authorized-user ADC files): parsing and
// validation with one-line errors that name the file and never quote a secret.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "core/fs.h"

namespace kinetic::auth {

inline constexpr const char* kGoogleTokenUri = "https://oauth2.googleapis.com/token";
inline constexpr const char* kCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform";

struct ServiceAccountKey {
  std::string client_email;
  std::string private_key;     // PEM (PKCS#8 or PKCS#1)
  std::string private_key_id;  // the JWT's kid; may be empty
  std::string token_uri;
  std::string project_id;
};

struct AuthorizedUser {
  std::string client_id;
  std::string client_secret;
  std::string refresh_token;
  std::string token_uri = kGoogleTokenUri;
  std::string account;  // gcloud writes it in some ADC files; empty when absent
};

using CredentialFile = std::variant<ServiceAccountKey, AuthorizedUser>;

// Parses the JSON TEXT of the credential file at PATH (PATH only names it in errors).
// Throws Error(Errc::auth) naming PATH and what is wrong.
CredentialFile parse_credential_file(std::string_view text, const fs::path& path);

// Reads and parses PATH. A missing or unreadable file throws Error(Errc::auth) naming it.
CredentialFile load_credential_file(const fs::path& path);

}  // namespace kinetic::auth
