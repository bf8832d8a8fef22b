// The RS256 JWT a service account key signs to obtain an access token (JWT-bearer grant).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "auth/key_file.h"

namespace kinetic::auth {

// base64url without '=' padding (RFC 7515 §2).
std::string base64url_encode(std::string_view data);

// Why PEM is not a usable RSA private key ("" when it is). Never quotes the key.
std::string check_private_key(std::string_view pem);

// header {"alg":"RS256","typ":"JWT","kid":private_key_id}, claims {iss, scope, aud=token_uri,
// iat=NOW, exp=NOW+3600}, signed RSASSA-PKCS1-v1_5 SHA-256. Pure: same inputs, same output.
// Throws Error(Errc::auth) if the key cannot sign.
std::string make_jwt_assertion(const ServiceAccountKey& key, std::string_view scope,
                               std::chrono::system_clock::time_point now);

}  // namespace kinetic::auth
