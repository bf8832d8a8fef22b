// `kinetic exec` on the local backend: the command runs beside the job, as `kubectl exec` runs
// one in the job's container: in the job's working directory, with the job's own environment
// (read from its process, /proc/PID/environ, so its --env values are there without kinetic
// having written them anywhere), on kinetic's terminal.
#pragma once

#include "backend/backend.h"

namespace kinetic {

// Runs REQUEST.command beside the running job ST (its recorded process group, proved to be the
// job's before anything is read from it) and returns the command's exit code: its own, 128+N
// killed by signal N, 126 not executable, 127 not found.
int exec_beside_job(const JobStatus& st, const ExecRequest& request);

}  // namespace kinetic
