// Reading a PipelineRun document (docs/pipelines.md) in the pipeline e2e suites.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kinetic::test {

// Each step's state in DOC, by name.
inline std::map<std::string, std::string> step_states(const nlohmann::json& doc) {
  std::map<std::string, std::string> out;
  for (const auto& s : doc["steps"]) out[s["name"]] = s["state"];
  return out;
}

// The step NAME of DOC, or null.
inline nlohmann::json step_of(const nlohmann::json& doc, const std::string& name) {
  for (const auto& s : doc["steps"])
    if (s["name"] == name) return s;
  return {};
}

}  // namespace kinetic::test
