// The Google service account the cluster's nodes run as (docs/security.md). GKE's default is the
// Compute Engine default account, which in newer organizations holds no role at all (so nodes
// can neither pull kinetic's images nor write logs) and in older ones holds Editor (far more
// than a node needs). `up` makes kinetic-nodes@PROJECT.iam.gserviceaccount.com instead, grants it
// the roles below on the project and names it in every pool kinetic creates; `down` takes the
// grants back and deletes it, unless another cluster of the project still runs nodes as it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backend/gke/provisioner.h"
#include "backend/gke/session.h"

namespace kinetic::gke {

inline constexpr const char* kNodeServiceAccountId = "kinetic-nodes";

// kinetic-nodes@PROJECT.iam.gserviceaccount.com
std::string node_service_account(const std::string& project);

// What the nodes need and nothing else (GKE's least-privilege node account, docs/
// gke-conformance.md): roles/container.defaultNodeServiceAccount (logs, metrics, what GKE's
// node agents read), roles/artifactregistry.reader (kinetic's images) and
// roles/serviceusage.serviceUsageConsumer (image streaming, with an account that is not the
// default one).
const std::vector<std::string>& node_roles();

// Creates or reuses the account and grants node_roles(); each step reported through RECORD.
void ensure_node_service_account(const Session& session,
                                 const std::function<void(ClusterChange)>& record);

// Revokes node_roles() and deletes the account, unless a cluster of the project other than
// this one has nodes running as it (then both stay, and RECORD says why).
void remove_node_service_account(const Session& session,
                                 const std::function<void(ClusterChange)>& record);

}  // namespace kinetic::gke
