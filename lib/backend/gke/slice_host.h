// Where a pod of a run is among its hosts (docs/multihost.md "Multislice"): hosts are numbered
// across slices, slice S's host H being S * HOSTS + H, as the bootstrap numbers its records
// (results/workers/K/). A one-slice run's hosts are its completion indexes, as before.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gcp/gke.h"
#include "job/catalog.h"

namespace kinetic::gke {

// The pod's slice: its jobset.sigs.k8s.io/job-index label (0 for a plain Job's pod).
int pod_slice(const nlohmann::json& pod);
// The pod's host across the run: its slice * PER_SLICE + its completion index.
int pod_host(const nlohmann::json& pod, int per_slice);

// How many of POOLS can each hold one slice of ACCEL (its machine type and topology, Spot or
// not): a multi-host pool is one slice, and a multislice run takes one each.
int slice_pools(const Accelerator& accel, const std::vector<gcp::NodePoolInfo>& pools);
// Why a run of ACCEL.slices slices cannot place them all on POOLS, or "" when it can.
std::string missing_slice_pools(const Accelerator& accel,
                                const std::vector<gcp::NodePoolInfo>& pools);

}  // namespace kinetic::gke
