// An HTTP/1.1 answer read off a raw connection (http/upgrade.h: the API server's answer to
// exec's upgrade request), parsed by hand because curl never sees it. Pure, no I/O: the bytes
// come from the network, so these are fuzzed (tests/fuzz/fuzz_upgrade_response.cpp).
#pragma once

#include <string>
#include <string_view>

#include "http/transport.h"

namespace kinetic::http {

struct ResponseHead {
  int status = 0;  // 100..999
  Headers headers;
};

// The status line and headers of HEAD (the bytes before the blank line "\r\n\r\n"); lines
// without a ':' are skipped. Throws TransportError naming URL when the status line is not
// "HTTP/1.x NNN" or a header line holds a bare CR or LF.
ResponseHead parse_response_head(std::string_view head, const std::string& url);

// Whether REST (what followed the head so far) holds the whole body of an answer with HEADERS:
// its Content-Length (LIMIT at most, also when there is none), or a chunked body's last chunk.
bool body_complete(std::string_view rest, const Headers& headers, size_t limit);

// The body in REST as the caller reads it: dechunked when chunked, else cut at its
// Content-Length; never more than LIMIT bytes.
std::string response_body(std::string_view rest, const Headers& headers, size_t limit);

// A chunked body's data, as far as it goes.
std::string dechunk(std::string_view body);

}  // namespace kinetic::http
