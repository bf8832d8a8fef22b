#include "gcp/endpoints.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace kinetic::gcp {
namespace {

constexpr std::string_view kServices[] = {"container", "cloudbuild", "artifactregistry",
                                          "serviceusage", "storage"};

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

}  // namespace

std::string api_endpoint(std::string_view service, const Env& env) {
  if (std::find(std::begin(kServices), std::end(kServices), service) == std::end(kServices)) {
    throw Error(Errc::internal, "unknown Google API service '" + std::string(service) + "'");
  }
  std::string upper(service);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));

  if (auto override_url = env.get_nonempty("CLOUDSDK_API_ENDPOINT_OVERRIDES_" + upper)) {
    std::string url = without_trailing_slashes(strip(*override_url));
    if (service == "storage" && ends_with(url, "/storage/v1")) {
      url = without_trailing_slashes(
          url.substr(0, url.size() - std::string_view("/storage/v1").size()));
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

}  // namespace kinetic::gcp
