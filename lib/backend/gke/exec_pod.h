// Which pod `kinetic exec JOB --host N` runs in: host N's pod of the job's latest attempt, which
// must be running. Pure, over the job's pods as listed, so each refusal is unit-tested.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinetic::gke {

inline constexpr const char* kJobContainer = "main";  // job/manifest.cpp's container

// The name of the running pod of host HOST (its batch.kubernetes.io/job-completion-index; a
// single-host Job's only pod is host 0) among PODS (the job JOB's), the newest when an attempt
// was retried or a slice restarted. HOSTS: the run's host count, PER_SLICE a slice's (0: HOSTS);
// a multislice run numbers its hosts across slices (slice_host.h). Throws Error with one line:
// usage (HOST out of range, naming HOSTS), not_found (no pod yet, or the newest one pending or
// ended, saying what to do).
// PURPOSE words the refusal of an ended job ("nothing to PURPOSE").
std::string choose_exec_pod(const std::vector<nlohmann::json>& pods, const std::string& job,
                            int host, int hosts, int per_slice = 0,
                            const std::string& purpose = "exec into");

// COMMAND as the container runs it so that it starts in the job's working directory with the
// job's environment, not the container's (the bootstrap chdirs into the unpacked context and
// gives the job variables of its own): a few lines of the image's python3 (the bootstrap's, so
// every kinetic image has it) read them from the job's process, whose pid the bootstrap keeps
// in $TMPDIR/kinetic-job.pid (lib/job/bootstrap.py JOB_PID_FILE), as the local backend reads
// them, then exec COMMAND with the job's PATH: 127 "not found in the job's PATH", 126 not
// runnable. Without a running job (before it starts, between attempts) the container's own.
std::vector<std::string> in_job_context(const std::vector<std::string>& command);

}  // namespace kinetic::gke
