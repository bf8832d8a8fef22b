// Encodings every fake server speaks: percent-encoding of URL path segments and base64. The fakes
// keep their own copies rather than kinetic's (lib/core), so a bug there cannot be mirrored by the
// servers that test it.
#pragma once

#include <string>
#include <string_view>

namespace kinetic::fakes {

// Everything but RFC 3986 unreserved characters becomes %XX (so '/' in a segment is %2F).
std::string percent_encode(std::string_view s);
std::string percent_decode(std::string_view s);
std::string base64_encode(std::string_view bytes);
// Standard or URL-safe alphabet; other characters are skipped, '=' ends the data.
std::string base64_decode(std::string_view text);

}  // namespace kinetic::fakes
