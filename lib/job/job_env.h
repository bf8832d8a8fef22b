// The job's environment from --env and --capture-env. Every value the user passes is treated as
// a secret: it travels in a Kubernetes Secret (or, locally, in memory), never in the job spec.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/env.h"

namespace kinetic {

struct JobEnv {
  std::vector<std::string> names;  // in the order given
  std::map<std::string, std::string> values;
  std::vector<std::string> warnings;  // e.g. a glob that matched nothing
};

// --env K=V sets K; --env K takes K from CALLER (an error when unset). --capture-env GLOB takes
// every caller variable matching the shell glob, except the host-specific ones (PATH, HOME,
// LD_*, ...) and the control variables of kinetic, gcloud and Google's libraries (CLOUDSDK_*,
// STORAGE_EMULATOR_HOST, GCE_METADATA_*, GOOGLE_APPLICATION_CREDENTIALS), which pass only when
// named exactly (a control variable with a warning). Invalid names and kinetic's own KINETIC_*
// names are refused with Error(Errc::usage).
JobEnv build_job_env(const std::vector<std::string>& env_flags,
                     const std::vector<std::string>& capture_globs, const Env& caller);

}  // namespace kinetic
