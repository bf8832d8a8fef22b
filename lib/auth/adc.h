// Application Default Credentials: which credential source kinetic uses, in gcloud's order.
#pragma once

#include <memory>
#include <optional>

#include "auth/key_file.h"
#include "auth/token.h"
#include "core/env.h"
#include "http/transport.h"

namespace kinetic::auth {

inline constexpr const char* kNoCredentialsMessage =
    "no Google credentials found; run `gcloud auth application-default login`, set "
    "GOOGLE_APPLICATION_CREDENTIALS, or CLOUDSDK_AUTH_ACCESS_TOKEN";

struct AdcOptions {
  // --access-token-file: a file holding a fixed token (highest precedence).
  std::optional<fs::path> access_token_file;
  std::string scope = kCloudPlatformScope;
  Clock now;  // default: system_clock::now
  // How long the metadata server probe may take; GCE_METADATA_TIMEOUT (seconds) overrides it.
  std::chrono::milliseconds metadata_probe_timeout{1000};
};

// The first source that applies, in order:
//  1. --access-token-file, then CLOUDSDK_AUTH_ACCESS_TOKEN (a fixed token);
//  2. GOOGLE_APPLICATION_CREDENTIALS (service_account or authorized_user file);
//  3. the gcloud ADC file: $CLOUDSDK_CONFIG (default ~/.config/gcloud)/
//     application_default_credentials.json;
//  4. the metadata server: GCE_METADATA_HOST (host[:port]), else GCE_METADATA_IP or
//     169.254.169.254 for the probe and metadata.google.internal for the token.
// A named file that is missing or malformed throws Error(Errc::auth) naming it; nothing found
// throws Error(Errc::auth, kNoCredentialsMessage). HTTP is used for tokens and the probe only.
std::unique_ptr<CredentialSource> find_credentials(const Env& env,
                                                   std::shared_ptr<http::Transport> http,
                                                   const AdcOptions& options = {});

// The gcloud ADC file path for ENV (whether or not it exists).
fs::path gcloud_adc_path(const Env& env);

}  // namespace kinetic::auth
