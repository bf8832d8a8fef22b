// `kinetic port-forward` on the local backend: the job is a process of this machine, so its
// ports are already here; each forwarded connection is a TCP connection to 127.0.0.1:PORT, and
// the forward ends when the job's status says it ended.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "backend/backend.h"

namespace kinetic {

// Connections to 127.0.0.1 for job ID; STATUS reads its status (thread-safe), which
// wait_for_end polls.
std::unique_ptr<PortDialer> local_port_dialer(std::string id, std::function<JobStatus()> status);

}  // namespace kinetic
