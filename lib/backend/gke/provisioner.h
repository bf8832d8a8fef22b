// `up`, `down` and `pool add|remove|list`: creating, reconciling and deleting what kinetic runs on
// (services, cluster, node pools, registry, bucket). Every step says whether it created something
// or found it already there, so running `up` twice is safe and says so.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/cluster.h"
#include "backend/gke/cluster_requests.h"
#include "backend/gke/session.h"
#include "gcp/gke.h"

namespace kinetic::gke {

class Provisioner {
 public:
  // Each change is reported through ON_CHANGE as it happens (the CLI prints it).
  Provisioner(const Session& session, std::function<void(const ClusterChange&)> on_change);

  std::vector<ClusterChange> up(const UpOptions& options);
  std::vector<ClusterChange> down(const DownOptions& options);
  ClusterChange add_pool(const Accelerator& accelerator, const PoolOptions& options);
  // OPTIONS.slices pools of ACCELERATOR (one without --slices), each as add_pool makes it.
  std::vector<ClusterChange> add_pools(const Accelerator& accelerator, const PoolOptions& options);
  ClusterChange remove_pool(const std::string& name);
  // Installs (or upgrades) JobSet from SOURCE (jobset_release.h): what a multi-host pool needs.
  // `up` calls it when a slice is asked for or the cluster has one; `pool add` for a slice.
  ClusterChange ensure_jobset_for_slices(const std::string& source);
  std::vector<PoolRow> list_pools();

 private:
  void record(std::vector<ClusterChange>& changes, ClusterChange change);
  gcp::ClusterInfo ensure_cluster(const UpOptions& options, std::vector<ClusterChange>& changes);
  // The zone a pool of MACHINE_TYPE goes to: a zonal cluster's own; in a regional cluster, the
  // first zone of the region (by name) that offers it, asked of Compute Engine (GKE refuses a
  // pool in a zone without its machine type, and TPUs exist in only some zones). Throws
  // Error(Errc::usage) naming the region, the type and what to do when no zone offers it.
  std::string zone_for(const std::string& machine_type, const std::string& what);
  // Whether the cluster has a multi-host TPU pool (its pools with a TPU placement policy).
  bool has_slice_pool();
  // The nodes' service account and its grants (node_service_account.h), once per Provisioner.
  void ensure_node_account(const std::function<void(ClusterChange)>& report);

  const Session& session_;
  std::function<void(const ClusterChange&)> on_change_;
  bool node_account_ready_ = false;
};

}  // namespace kinetic::gke
