// Where a pod of a run is among its hosts (docs/multihost.md "Multislice"): hosts are numbered
// across slices, slice S's host H being S * HOSTS + H, as the bootstrap numbers its records
// (results/workers/K/). A one-slice run's hosts are its completion indexes, as before.
#pragma once

#include <nlohmann/json.hpp>

namespace kinetic::gke {

// The pod's slice: its jobset.sigs.k8s.io/job-index label (0 for a plain Job's pod).
int pod_slice(const nlohmann::json& pod);
// The pod's host across the run: its slice * PER_SLICE + its completion index.
int pod_host(const nlohmann::json& pod, int per_slice);

}  // namespace kinetic::gke
