#include "http/transport.h"

#include <strings.h>

namespace kinetic::http {

std::optional<std::string> find_header(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return std::nullopt;
}

}  // namespace kinetic::http
