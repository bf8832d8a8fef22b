// The OAuth2 token endpoint exchange shared by the key-file sources.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "auth/token.h"
#include "http/transport.h"

namespace kinetic::auth {

// application/x-www-form-urlencoded encoding of one value.
std::string form_encode(std::string_view value);

// Parses a token response body ({"access_token":...,"expires_in":3599 or "3599"}) received at
// NOW. WHAT names the credentials in errors; SECRETS are scrubbed from any message.
AccessToken parse_token_response(const http::Response& response, const std::string& url,
                                 const std::string& what, const std::vector<std::string>& secrets,
                                 std::chrono::system_clock::time_point now);

// POSTs FORM to URL and parses the answer as above.
AccessToken request_token(http::Transport& http, const std::string& url, const std::string& form,
                          const std::string& what, const std::vector<std::string>& secrets,
                          std::chrono::system_clock::time_point now);

}  // namespace kinetic::auth
