// The GKE request bodies `up` and `pool add` send, as pure functions (docs/gcp-api.md §2.1, §2.2):
// a Standard cluster with Workload Identity, a release channel and a small default pool, and
// accelerator node pools that autoscale from zero.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cluster.h"
#include "job/catalog.h"

namespace kinetic::gke {

// The APIs `up` turns on (docs/gcp-api.md §6).
const std::vector<std::string>& required_services();

struct ClusterOptions {
  std::string project;
  std::string name;
  std::string release_channel = "REGULAR";
  std::string default_machine_type;  // of the small default pool (kube-system, cpu jobs)
  std::string node_service_account;  // the nodes' Google identity; empty: GKE's default
  // A regional cluster's node zone (its `locations`): one zone, as xpk does, not a node in every
  // zone of the region. Empty: the cluster's own zone (a zonal cluster).
  std::string zone = "";
};

nlohmann::json cluster_request(const ClusterOptions& options);

// The addonsConfig that turns on GKE's Cloud Storage FUSE CSI driver (`run --data gs://`), and
// whether a cluster resource has it on.
nlohmann::json gcs_fuse_addon();
bool has_gcs_fuse_addon(const nlohmann::json& cluster);

// Machine types tried in turn for the default pool: zones differ in what they offer (a TPU-only
// zone may lack E2), and GKE rejects a type the zone does not have, so `up` falls back.
const std::vector<std::string>& default_machine_candidates();

// Whether a GKE 400 says the machine type does not exist in the zone.
bool is_machine_type_unavailable(const std::string& message);

// The node pool for ACCELERATOR: machine type, GPUs with drivers, TPU topology placement for
// multi-host slices, Spot (with a taint so only Spot-tolerating jobs land there), reservation
// affinity, autoscaling from MIN to MAX. Throws Error(Errc::usage) for impossible sizes and for
// a shape Compute Engine does not sell on demand asked for without Spot (or a reservation).
// ZONE (non-empty): the pool's `locations`, the one zone its nodes go to; a TPU or GPU machine
// type exists in only some zones of a region, and a multi-host slice must sit in one zone.
nlohmann::json node_pool_request(const Accelerator& accelerator, const PoolOptions& options,
                                 const std::string& zone = "");

}  // namespace kinetic::gke
