#include "http/response_head.h"

#include <algorithm>
#include <cstdlib>

namespace kinetic::http {

namespace {

bool chunked(const Headers& headers) {
  return find_header(headers, "Transfer-Encoding").value_or("").find("chunked") !=
         std::string::npos;
}

// Content-Length, capped at LIMIT; LIMIT when absent.
size_t wanted_length(const Headers& headers, size_t limit) {
  const auto length = find_header(headers, "Content-Length");
  if (!length) return limit;
  return std::min<size_t>(std::strtoul(length->c_str(), nullptr, 10), limit);
}

}  // namespace

ResponseHead parse_response_head(std::string_view head, const std::string& url) {
  size_t eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, eol);
  const auto digit = [&](size_t i) { return status_line[i] >= '0' && status_line[i] <= '9'; };
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12 || status_line[8] != ' ' ||
      !digit(9) || !digit(10) || !digit(11) || status_line[9] == '0')
    throw TransportError(display_url(url) + " did not answer in HTTP/1.1", false);
  ResponseHead out;
  out.status =
      (status_line[9] - '0') * 100 + (status_line[10] - '0') * 10 + (status_line[11] - '0');
  while (eol != std::string_view::npos) {
    head.remove_prefix(eol + 2);
    eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    // A bare CR or LF would end the line for one reader and not another (RFC 9112 5.2).
    if (line.find_first_of("\r\n") != std::string_view::npos)
      throw TransportError(display_url(url) + " answered with a malformed header line", false);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos)
      out.headers.emplace_back(trim_header(line.substr(0, colon)),
                               trim_header(line.substr(colon + 1)));
  }
  return out;
}

bool body_complete(std::string_view rest, const Headers& headers, size_t limit) {
  if (chunked(headers))
    return rest.find("\r\n0\r\n") != std::string_view::npos || rest.rfind("0\r\n", 0) == 0 ||
           rest.size() >= limit;
  return rest.size() >= wanted_length(headers, limit);
}

std::string response_body(std::string_view rest, const Headers& headers, size_t limit) {
  if (chunked(headers)) {
    std::string data = dechunk(rest);
    if (data.size() > limit) data.resize(limit);
    return data;
  }
  return std::string(rest.substr(0, wanted_length(headers, limit)));
}

std::string dechunk(std::string_view body) {
  std::string out;
  while (!body.empty()) {
    const size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) break;
    const size_t size = std::strtoul(std::string(body.substr(0, eol)).c_str(), nullptr, 16);
    body.remove_prefix(eol + 2);
    if (size == 0 || body.size() < size) {
      out.append(body.substr(0, std::min(size, body.size())));
      break;
    }
    out.append(body.substr(0, size));
    body.remove_prefix(std::min(body.size(), size + 2));
  }
  return out;
}

}  // namespace kinetic::http
