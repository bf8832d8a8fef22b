#include "job/bootstrap.h"

namespace kinetic {

// The source: lib/job/bootstrap.py, embedded at build time without its comments
// (cmake/embed_python.cmake).
extern const std::string_view kBootstrapSource;

std::string_view bootstrap_source() {
  return kBootstrapSource;
}

std::vector<std::string> bootstrap_command() {
  return {"python3", "-c", std::string(kBootstrapSource)};
}

std::vector<std::pair<std::string, std::string>> bootstrap_env(const BootstrapInputs& in) {
  const std::string& results = in.results_uri;
  return {
      {"KINETIC_JOB_ID", in.job_id},
      {"KINETIC_CONTEXT_URI", in.context_uri},
      {"KINETIC_CONTEXT_SHA256", in.context_sha256},
      {"KINETIC_SPEC_URI", in.spec_uri},
      {"KINETIC_SPEC_SHA256", in.spec_sha256},
      {"KINETIC_RESULTS_URI", results.empty() || results.back() == '/' ? results : results + "/"}};
}

}  // namespace kinetic
