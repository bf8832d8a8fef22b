// What the records of a stopped job must say, from tests/golden/stopped_verdicts.json: the one
// golden both runners are held to (the local supervisor in tests/e2e, the bootstrap in
// tests/integration; backend/stopped_verdict.h).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace kinetic::test {

// Every case of the golden: {name, stop, spec, verdict, only?}.
inline nlohmann::json golden_stopped_cases() {
  std::ifstream f(KINETIC_SOURCE_DIR "/tests/golden/stopped_verdicts.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// The verdict ({state, exit_code, error}) of the golden's first case whose stop is STOP
// ("SIGTERM", "deadline", "abandoned"); null when there is none.
inline nlohmann::json golden_stopped_verdict(const std::string& stop) {
  for (const auto& c : golden_stopped_cases())
    if (c["stop"] == stop) return c["verdict"];
  return nullptr;
}

// The verdict a record (status.json, or one of its attempt_history entries) says, to compare
// with golden_stopped_verdict().
inline nlohmann::json verdict_in(const nlohmann::json& record) {
  return {
      {"state", record["state"]}, {"exit_code", record["exit_code"]}, {"error", record["error"]}};
}

}  // namespace kinetic::test
