// A server on gke read back (docs/serving.md "Servers on gke"): its Deployment as kinetic's
// JobStatus, and which of its pods a new connection goes to. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"

namespace kinetic::gke {

// Whether ST is a server's (its labels carry kServeLabel).
bool is_server_status(const JobStatus& st);

// A server's Deployment as a status: running once status.readyReplicas is 1, pending before
// (its pod's reasons are status's, as a job's); times and annotations as a Job's.
JobStatus status_from_deployment(const nlohmann::json& deployment);

// The server's pod a new connection goes to: one that is Ready and not being deleted, the
// newest first (after a restart the old one may linger while it terminates); nullopt when none.
std::optional<std::string> ready_server_pod(const std::vector<nlohmann::json>& pods);

}  // namespace kinetic::gke
