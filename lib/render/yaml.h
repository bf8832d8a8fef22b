// JSON documents rendered as YAML (kubectl-style: block style, key order kept, strings quoted
// only when YAML would read them as something else).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinetic {

std::string to_yaml(const nlohmann::ordered_json& doc);
// Several documents separated by "---".
std::string to_yaml_stream(const std::vector<nlohmann::ordered_json>& docs);

}  // namespace kinetic
