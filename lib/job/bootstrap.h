// The in-pod bootstrap (docs/architecture.md, step 5; docs/run-record.md): the container command of
// every GKE job. Self-contained given python3 (standard library only) on the image, so nothing
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

// Where the bootstrap finds the job: the context and the spec, each with the sha256 it must
// have, and where results go.
struct BootstrapInputs {
  std::string job_id;
  std::string context_uri;
  std::string context_sha256;
  std::string spec_uri;
  std::string spec_sha256;
  std::string results_uri;
};

// The plain environment the bootstrap reads. RESULTS_URI gets a trailing '/' if it has none.
std::vector<std::pair<std::string, std::string>> bootstrap_env(const BootstrapInputs& in);

}  // namespace kinetic
