#include "gcp/json_fields.h"

#include <charconv>

#include "core/error.h"

namespace kinetic::gcp {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& member(const json& j, const char* key) {
  static const json null;
  if (!j.is_object()) return null;
  auto it = j.find(key);
  return it == j.end() ? null : *it;
}

int as_int(const json& j) {
  if (j.is_number_integer()) return j.get<int>();
  if (j.is_number()) return static_cast<int>(j.get<double>());
  if (j.is_string()) {
    try {
      return std::stoi(j.get<std::string>());
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

int64_t as_int64(const json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (!j.is_string()) return 0;
  const auto& s = j.get_ref<const std::string&>();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() ? v : 0;
}

json parse_json(const http::Response& r, const std::string& what, const std::string& service) {
  auto j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(Errc::api, what + ": " + service + " answered HTTP " + std::to_string(r.status) +
                               " with a body that is not a JSON object");
  return j;
}

}  // namespace kinetic::gcp
