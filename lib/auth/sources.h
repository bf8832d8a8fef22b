// The credential sources of Application Default Credentials, one class each.
#pragma once

#include <memory>
#include <string>

#include "auth/key_file.h"
#include "auth/token.h"
#include "http/transport.h"

namespace kinetic::auth {

// A fixed token (CLOUDSDK_AUTH_ACCESS_TOKEN, --access-token-file): never refreshed.
std::unique_ptr<CredentialSource> fixed_token_source(std::string token, std::string source);

// A service account key: JWT-bearer grant at the key's token_uri. PATH names it in messages.
std::unique_ptr<CredentialSource> service_account_source(ServiceAccountKey key, fs::path path,
                                                         std::shared_ptr<http::Transport> http,
                                                         std::string scope, Clock now = {});

// An authorized user (gcloud ADC file): refresh-token grant. SOURCE is the status label.
std::unique_ptr<CredentialSource> authorized_user_source(AuthorizedUser user, std::string source,
                                                         std::shared_ptr<http::Transport> http,
                                                         Clock now = {});

// The metadata server at HOST[:port] (GCE, GKE Workload Identity, Cloud Run).
std::unique_ptr<CredentialSource> metadata_source(std::string host,
                                                  std::shared_ptr<http::Transport> http,
                                                  Clock now = {});

// Whether a metadata server answers at HOST within TIMEOUT (the response must carry
// "Metadata-Flavor: Google"). One attempt, never retried. Never throws.
bool metadata_server_present(http::Transport& http, const std::string& host,
                             std::chrono::milliseconds timeout);

}  // namespace kinetic::auth
