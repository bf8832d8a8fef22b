// The in-pod bootstrap (DESIGN.md "The in-pod bootstrap"): the container command of every GKE
// job. Self-contained given python3 (standard library only) on the image, so nothing
// kinetic-specific is baked into images and upgrading kinetic never rebuilds one.
//
// Its source, with the whole contract (environment, what it does, exit codes, signals), is
// lib/job/bootstrap.py, embedded at build time; the objects it writes are in
// docs/run-record.md. tests/integration/test_bootstrap.cpp runs it for real against the fake GCS.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinetic {

// The Python source of the bootstrap.
std::string_view bootstrap_source();

// ["python3", "-c", SOURCE]
std::vector<std::string> bootstrap_command();

// The plain environment the bootstrap reads: where the context, spec and results live.
// RESULTS_URI gets a trailing '/' if it has none.
std::vector<std::pair<std::string, std::string>> bootstrap_env(const std::string& job_id,
                                                               const std::string& context_uri,
                                                               const std::string& context_sha256,
                                                               const std::string& spec_uri,
                                                               const std::string& results_uri);

}  // namespace kinetic
