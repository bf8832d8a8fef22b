// Which directory ships with a job.
#pragma once

#include "core/fs.h"

namespace kinetic {

// The nearest ancestor of JOB_FILE's directory holding .git, requirements.txt or
// pyproject.toml; never HOME or '/'. When none is found, the job file's own directory.
fs::path find_context_dir(const fs::path& job_file, const fs::path& home);

}  // namespace kinetic
