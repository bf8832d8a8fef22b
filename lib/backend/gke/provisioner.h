// `up`, `down` and `pool add|remove|list`: creating, reconciling and deleting what kinetic runs on
// (services, cluster, node pools, registry, bucket). Every step says whether it created something
// or found it already there, so running `up` twice is safe and says so.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/gke/cluster_requests.h"
#include "backend/gke/session.h"
#include "gcp/gke.h"

namespace kinetic::gke {

// One thing up/down/pool touched.
struct Change {
  // "service", "node service account", "node access", "cluster", "node pool", "jobset",
  // "repository", "bucket", ...
  std::string kind;
  std::string name;
  std::string action;  // "enabled", "created", "exists", "deleted", "kept", "not found"
};

struct UpOptions {
  std::vector<Accelerator> accelerators;  // a node pool each
  PoolOptions pool;
  std::string default_machine_type;  // empty: the first of default_machine_candidates() the
                                     // zone offers
  std::string release_channel = "REGULAR";
  // Where the JobSet release manifests are read from (jobset_release.h).
  std::string jobset_manifests;
  // Idle auto-down (auto_down.h): the period in seconds, 0 to remove it, none to leave it as is.
  std::optional<long> auto_down;
};

struct DownOptions {
  bool keep_bucket = false;
  bool keep_images = false;
};

struct PoolRow {
  gcp::NodePoolInfo pool;
  std::string accelerator;  // catalog name, when kinetic made it
  int nodes = 0;            // nodes that exist now (from the Kubernetes API)
};

// What the cluster costs per hour now (docs/cost.md): the control plane and each node that is
// up, at list prices (job/pricing.h). Spot nodes count at your Spot price (the prices setting's
// NAME:spot=USD), else at their on-demand price: at most.
struct ClusterCost {
  double per_hour = 0;
  int nodes = 0;
  int spot_nodes = 0;      // Spot nodes counted at their on-demand price (no Spot price given)
  int unpriced_nodes = 0;  // of a machine type kinetic has no price for (not in PER_HOUR)
};
ClusterCost cluster_cost(const std::vector<PoolRow>& pools, const PriceBook& prices = {});
// What one node of ROW's pool costs per hour: your Spot price for a Spot pool when you gave one,
// else the on-demand price; nullopt for a machine type kinetic has no price for.
std::optional<double> pool_node_price(const PoolRow& row, const PriceBook& prices);
// "$0.23/h (the control plane and 1 node)"; "at most" with Spot nodes, "more than" with
// unpriced ones (named).
std::string cluster_cost_text(const ClusterCost& cost);

class Provisioner {
 public:
  // Each change is reported through ON_CHANGE as it happens (the CLI prints it).
  Provisioner(const Session& session, std::function<void(const Change&)> on_change);

  std::vector<Change> up(const UpOptions& options);
  std::vector<Change> down(const DownOptions& options);
  Change add_pool(const Accelerator& accelerator, const PoolOptions& options);
  Change remove_pool(const std::string& name);
  // Installs (or upgrades) JobSet from SOURCE (jobset_release.h): what a multi-host pool needs.
  // `up` calls it when a slice is asked for or the cluster has one; `pool add` for a slice.
  Change ensure_jobset_for_slices(const std::string& source);
  std::vector<PoolRow> list_pools();

 private:
  void record(std::vector<Change>& changes, Change change);
  gcp::ClusterInfo ensure_cluster(const UpOptions& options, std::vector<Change>& changes);
  // The zone a pool of MACHINE_TYPE goes to: a zonal cluster's own; in a regional cluster, the
  // first zone of the region (by name) that offers it, asked of Compute Engine (GKE refuses a
  // pool in a zone without its machine type, and TPUs exist in only some zones). Throws
  // Error(Errc::usage) naming the region, the type and what to do when no zone offers it.
  std::string zone_for(const std::string& machine_type, const std::string& what);
  // Whether the cluster has a multi-host TPU pool (its pools with a TPU placement policy).
  bool has_slice_pool();
  // The nodes' service account and its grants (node_service_account.h), once per Provisioner.
  void ensure_node_account(const std::function<void(Change)>& report);

  const Session& session_;
  std::function<void(const Change&)> on_change_;
  bool node_account_ready_ = false;
};

}  // namespace kinetic::gke
