#include "pipeline/step_key.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "pack/sha256.h"

namespace kinetic {

StepKeyInputs step_key_inputs(const PipelineStep& step, const std::string& context_sha256,
                              const std::string& image, const std::string& file,
                              const std::string& workdir, const std::string& accelerator,
                              const std::map<std::string, std::string>& needs_keys) {
  StepKeyInputs in;
  in.context_sha256 = context_sha256;
  in.image = image;
  in.file = file;
  in.workdir = workdir;
  in.args = step.args;
  in.accelerator = accelerator;
  for (const auto& entry : step.env) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos)
      in.secret_env.push_back(entry);
    else
      in.env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  std::sort(in.secret_env.begin(), in.secret_env.end());
  in.capture_env = step.capture_env;
  std::sort(in.capture_env.begin(), in.capture_env.end());
  in.needs = needs_keys;
  return in;
}

std::string step_key(const StepKeyInputs& in) {
  // nlohmann::json keeps object keys sorted: the same inputs always dump to the same bytes.
  const nlohmann::json canonical = {
      {"version", 1},
      {"context_sha256", in.context_sha256},
      {"image", in.image},
      {"file", in.file},
      {"workdir", in.workdir},
      {"args", in.args},
      {"accelerator", in.accelerator},
      {"env", in.env},
      {"secret_env", in.secret_env},
      {"capture_env", in.capture_env},
      {"needs", in.needs},
  };
  return sha256_hex(canonical.dump());
}

}  // namespace kinetic
