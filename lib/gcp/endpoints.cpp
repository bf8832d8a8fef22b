#include "gcp/endpoints.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/strings.h"

namespace kinetic::gcp {
namespace {

std::string strip(std::string value) {
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
  size_t b = 0;
  while (b < value.size() && std::isspace(static_cast<unsigned char>(value[b]))) ++b;
  return value.substr(b);
}

std::string without_trailing_slashes(std::string url) {
  // Keep "scheme://" intact.
  size_t scheme = url.find("://");
  size_t min_len = scheme == std::string::npos ? 0 : scheme + 3;
  while (url.size() > min_len && url.back() == '/') url.pop_back();
  return url;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The override URL, checked: the token goes there.
std::string checked_override(const std::string& variable, const std::string& url) {
  std::string scheme = to_lower(url.substr(0, url.find("://")));
  if (url.find("://") == std::string::npos || (scheme != "https" && scheme != "http")) {
    throw Error(Errc::config,
                variable + " must be an https:// URL such as https://HOST/ (got '" + url + "')");
  }
  if (scheme == "http" && !is_loopback_url(url)) {
    throw Error(Errc::config,
                variable + "=" + url +
                    " is plain HTTP to another machine: your access token (and the cluster's CA) "
                    "would cross the network in clear; use https://, or a loopback address "
                    "(127.0.0.1, [::1], localhost)");
  }
  return url;
}

}  // namespace

bool is_loopback_url(std::string_view url) {
  size_t scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  std::string host;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    host = std::string(authority.substr(1, close - 1));
    in6_addr a6{};
    return inet_pton(AF_INET6, host.c_str(), &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
  }
  host = to_lower(authority.substr(0, authority.find(':')));
  if (host == "localhost") return true;
  in_addr a4{};
  // inet_pton takes dotted quads only: "127.1" or "0x7f.1" are not accepted as loopback.
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

std::string api_endpoint(std::string_view service, const Env& env) {
  if (std::find_if(std::begin(kServices), std::end(kServices),
                   [&](const char* s) { return service == s; }) == std::end(kServices)) {
    throw Error(Errc::internal, "unknown Google API service '" + std::string(service) + "'");
  }
  std::string upper(service);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));

  const std::string variable = "CLOUDSDK_API_ENDPOINT_OVERRIDES_" + upper;
  if (auto override_url = env.get_nonempty(variable)) {
    std::string url = without_trailing_slashes(strip(*override_url));
    if (!url.empty()) checked_override(variable, url);
    for (const auto& [name, path] :
         {std::pair<std::string_view, std::string_view>{"storage", "/storage/v1"},
          {"compute", "/compute/v1"}}) {
      if (service == name && ends_with(url, path))
        url = without_trailing_slashes(url.substr(0, url.size() - path.size()));
    }
    if (!url.empty()) return url;
  }
  if (service == "storage") {
    if (auto host = env.get_nonempty("STORAGE_EMULATOR_HOST")) {
      std::string url = without_trailing_slashes(strip(*host));
      if (!url.empty()) {
        if (url.find("://") == std::string::npos) url = "http://" + url;
        return url;
      }
    }
  }
  return "https://" + std::string(service) + ".googleapis.com";
}

std::string storage_emulator(const Env& env) {
  if (auto o = env.get_nonempty("CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE");
      o && !strip(*o).empty()) {
    return "";
  }
  if (!env.get_nonempty("STORAGE_EMULATOR_HOST")) return "";
  return api_endpoint("storage", env);
}

}  // namespace kinetic::gcp
