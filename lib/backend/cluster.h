// The cluster kinetic runs on, in the role `up`, `down`, `pool` and `status` see it: create or
// reconcile it, delete it, add, remove and list its node pools, describe it. The CLI reaches it
// only through this interface, obtained from its Factory (cli/app.h `Factory::cluster`), so a
// test hands the commands a fake cluster as it hands them a fake Backend. GKE's is
// backend/gke/gke_cluster.h; a local context has none (backend/local/local_cluster.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/auto_down_state.h"
#include "gcp/gke.h"
#include "job/catalog.h"

namespace kinetic {

// One thing up/down/pool touched.
struct ClusterChange {
  // "service", "node service account", "node access", "cluster", "node pool", "jobset",
  // "repository", "bucket", ...
  std::string kind;
  std::string name;
  std::string action;  // "enabled", "created", "exists", "deleted", "kept", "not found"
};

// An accelerator node pool as `up` and `pool add` ask for it.
struct PoolOptions {
  bool spot = false;  // also from the accelerator's :spot
  // Flex-start VMs (docs/capacity.md), also from the accelerator's :flex-start: the pool scales
  // from zero when GKE has the capacity.
  bool flex_start = false;
  std::string reservation;
  int min_nodes = 0;
  std::optional<int> max_nodes;  // default: one slice for multi-host TPUs, 4 nodes otherwise
  std::string service_account;   // the nodes' Google identity; empty: GKE's default
  // Multislice (`--slices N`): N pools of a multi-host TPU, one slice each (a run's N slices
  // are placed one a pool). Which of them a request is for: slice_pool_name's SLICE.
  int slices = 1;
  int slice = 0;
};

struct UpOptions {
  std::vector<Accelerator> accelerators;  // a node pool each
  PoolOptions pool;
  std::string default_machine_type;  // empty: the first of default_machine_candidates() the
                                     // zone offers
  std::string release_channel = "REGULAR";
  // Where the JobSet release manifests are read from: `--jobset-manifests` as given (empty:
  // KINETIC_JOBSET_MANIFESTS, else the pinned release; backend/gke/jobset_release.h).
  std::string jobset_manifests;
  // Queueing (`up --queue on|off`, backend/gke/kueue.h): true installs Kueue and writes a queue
  // per accelerator, false removes kinetic's queues, none leaves them as they are.
  std::optional<bool> queue;
  // With queue true (`--queue fair`): admission fair sharing between namespaces (kueue_fair.h).
  bool queue_fair = false;
  // Where the Kueue release manifests are read from: `--kueue-manifests` as given (empty:
  // KINETIC_KUEUE_MANIFESTS, else the pinned release).
  std::string kueue_manifests;
  // Idle auto-down (auto_down_state.h): the period in seconds, 0 to remove it, none to leave it
  // as is.
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

// Where the cluster is: what the commands name in their messages and `up` records as a context.
struct ClusterPlace {
  std::string project;
  std::string location;  // a zone (zonal cluster) or a region (regional cluster)
  std::string region;
  std::string name;
  // The context `up` records when not told one: the project for the default cluster name,
  // else the cluster's.
  std::string context_name;
};

// The cluster and its pools, for `status`.
struct ClusterDescription {
  std::string name;
  std::string location;
  std::vector<PoolRow> pools;
  std::optional<AutoDownState> auto_down;  // what the in-cluster check recorded
  bool missing = false;                    // no such cluster (deleted by auto-down, or by `down`)
};

class Cluster {
 public:
  virtual ~Cluster() = default;

  virtual ClusterPlace place() const = 0;
  // Creates or reconciles the cluster and what it needs; each change is reported as it happens
  // (the CLI prints it) and returned.
  virtual std::vector<ClusterChange> up(const UpOptions& options) = 0;
  virtual std::vector<ClusterChange> down(const DownOptions& options) = 0;
  // A node pool for ACCELERATOR, and, for a multi-host slice, the JobSet controller from
  // JOBSET_MANIFESTS (the flag; empty: the default source).
  virtual std::vector<ClusterChange> add_pool(const Accelerator& accelerator,
                                              const PoolOptions& options,
                                              const std::string& jobset_manifests) = 0;
  virtual ClusterChange remove_pool(const std::string& name) = 0;
  // Throws Error(Errc::not_found) when the cluster does not exist.
  virtual std::vector<PoolRow> pools() = 0;
  // Null when the context has no cluster (local); a cluster that is gone is `missing`.
  virtual std::optional<ClusterDescription> describe() = 0;
};

}  // namespace kinetic
