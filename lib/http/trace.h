// Request tracing for -v / --verbosity: one line per request at 6, headers and bodies at 8.
// Everything printed goes through redact() first: no token, key or signature reaches the sink.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/transport.h"

namespace kinetic::http {

// Replaces secrets in free text (a URL, a header line, a JSON or form body) with "REDACTED":
// Authorization / Proxy-Authorization header values (the scheme word is kept), the JSON string
// fields and form fields access_token, refresh_token, id_token, private_key, client_secret,
// assertion, password, and the URL query parameters access_token, token, key, sig, signature,
// X-Goog-Signature, X-Goog-Credential.
std::string redact(std::string_view text);

// The headers with secret values replaced: Authorization, Proxy-Authorization, Cookie,
// Set-Cookie, X-Goog-IAM-Authorization-Token entirely (keeping an auth scheme word), and
// everything else through redact() (a Location with a signed URL, say).
Headers redact_headers(const Headers& headers);

// Wraps INNER to report to SINK: at VERBOSITY >= 6 "METHOD URL STATUS in N ms" per request (or
// "METHOD URL failed in N ms: ..." for a transport error); at >= 8 also "> " request and "< "
// response headers and bodies, bodies cut at 4 KiB, streamed ones noted as "<streamed N bytes>".
// Below 6 INNER is returned as is.
std::unique_ptr<Transport> traced(std::unique_ptr<Transport> inner, int verbosity,
                                  std::function<void(std::string_view line)> sink);

}  // namespace kinetic::http
