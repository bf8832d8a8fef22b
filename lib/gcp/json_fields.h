// Reading Google API JSON defensively, shared by the control-plane clients: fields may be absent,
// int64 values arrive as strings (proto3 JSON), and a body that is not JSON is an API error.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "http/transport.h"

namespace kinetic::gcp {

inline bool ok(int status) {
  return status >= 200 && status < 300;
}

// The string field KEY of J; "" when J is not an object or KEY is absent or not a string.
std::string str(const nlohmann::json& j, const char* key);

// The field KEY of J; null when absent.
const nlohmann::json& member(const nlohmann::json& j, const char* key);

// An int32 (a number) or an int64 (a decimal string); 0 otherwise.
int as_int(const nlohmann::json& j);
// An int64, as proto3 JSON sends it (a decimal string) or as a number; 0 otherwise (never
// throws: a malformed reply is not a crash).
int64_t as_int64(const nlohmann::json& j);

// The body of R as a JSON object; throws Error(Errc::api) naming SERVICE ("GKE") when it is not.
nlohmann::json parse_json(const http::Response& r, const std::string& what,
                          const std::string& service);

}  // namespace kinetic::gcp
