// The answer to an upgrade request (http/response_head.h), as `kinetic exec` reads the API
// server's off a raw connection: arbitrary bytes, cut at the first blank line as open_upgrade
// cuts them, go to the head parser, then the rest to the body reader. Only kinetic's Error
// (TransportError) may escape; a parsed status is three digits; no header name or value holds
// CR or LF; no body exceeds its limit, and a body reported complete stays complete with more.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"
#include "http/response_head.h"
#include "support.h"

using namespace kinetic::http;

namespace {

constexpr size_t kLimit = 4096;  // small, so that inputs reach it

bool has_line_break(const std::string& s) {
  return s.find_first_of("\r\n") != std::string::npos;
}

void body(std::string_view rest, const Headers& headers) {
  const std::string b = response_body(rest, headers, kLimit);
  kinetic::fuzz::check(b.size() <= kLimit, "a body within its limit");
  if (body_complete(rest, headers, kLimit)) {
    std::string more(rest);
    more += "\r\n0\r\n\r\nmore";
    kinetic::fuzz::check(body_complete(more, headers, kLimit), "a complete body stays complete");
  }
  kinetic::fuzz::check(dechunk(rest).size() <= rest.size(), "dechunking never adds bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = kinetic::fuzz::text(data, size);
  const size_t end = bytes.find("\r\n\r\n");
  const std::string_view head = bytes.substr(0, end);
  try {
    const ResponseHead h = parse_response_head(head, "https://127.0.0.1:6443/api/v1/exec?x=1");
    kinetic::fuzz::check(h.status >= 100 && h.status <= 999, "a status of three digits");
    for (const auto& [name, value] : h.headers)
      kinetic::fuzz::check(!has_line_break(name) && !has_line_break(value), "a header on one line");
    body(end == std::string_view::npos ? std::string_view() : bytes.substr(end + 4), h.headers);
  } catch (const kinetic::Error&) {
  }
  return 0;
}
