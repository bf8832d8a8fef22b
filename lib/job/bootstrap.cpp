#include "job/bootstrap.h"

namespace kinetic {

// The source: lib/job/bootstrap.py, embedded at build time without its comments
// (cmake/embed_bootstrap.cmake).
extern const std::string_view kBootstrapSource;

std::string_view bootstrap_source() {
  return kBootstrapSource;
}

std::vector<std::string> bootstrap_command() {
  return {"python3", "-c", std::string(kBootstrapSource)};
}

std::vector<std::pair<std::string, std::string>> bootstrap_env(const std::string& job_id,
                                                               const std::string& context_uri,
                                                               const std::string& context_sha256,
                                                               const std::string& spec_uri,
                                                               const std::string& results_uri) {
  return {{"KINETIC_JOB_ID", job_id},
          {"KINETIC_CONTEXT_URI", context_uri},
          {"KINETIC_CONTEXT_SHA256", context_sha256},
          {"KINETIC_SPEC_URI", spec_uri},
          {"KINETIC_RESULTS_URI",
           results_uri.empty() || results_uri.back() == '/' ? results_uri : results_uri + "/"}};
}

}  // namespace kinetic
