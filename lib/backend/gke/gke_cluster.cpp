#include "backend/gke/gke_cluster.h"

#include "backend/gke/auto_down.h"
#include "backend/gke/cluster_access.h"
#include "backend/gke/jobset_release.h"
#include "backend/gke/kueue.h"
#include "backend/gke/names.h"
#include "backend/gke/provisioner.h"
#include "core/error.h"

namespace kinetic::gke {

ClusterPlace GkeCluster::place() const {
  const Target& t = session_.target;
  return {t.project, t.location, t.region, t.cluster,
          t.cluster == kDefaultCluster ? t.project : t.cluster};
}

std::vector<ClusterChange> GkeCluster::up(const UpOptions& options) {
  UpOptions resolved = options;
  resolved.jobset_manifests = jobset_manifests_source(options.jobset_manifests, *session_.env);
  return Provisioner(session_, on_change_).up(resolved);
}

std::vector<ClusterChange> GkeCluster::down(const DownOptions& options) {
  return Provisioner(session_, on_change_).down(options);
}

std::vector<ClusterChange> GkeCluster::add_pool(const Accelerator& accelerator,
                                                const PoolOptions& options,
                                                const std::string& jobset_manifests) {
  Provisioner provisioner(session_, on_change_);
  std::vector<ClusterChange> changes = provisioner.add_pools(accelerator, options);
  // A slice runs as a JobSet: the first multi-host pool brings the controller.
  if (accelerator.hosts > 1)
    changes.push_back(provisioner.ensure_jobset_for_slices(
        jobset_manifests_source(jobset_manifests, *session_.env)));
  follow_pools_with_queues(changes);
  return changes;
}

ClusterChange GkeCluster::remove_pool(const std::string& name) {
  ClusterChange removed = Provisioner(session_, on_change_).remove_pool(name);
  std::vector<ClusterChange> changes;
  follow_pools_with_queues(changes);
  return removed;
}

void GkeCluster::follow_pools_with_queues(std::vector<ClusterChange>& changes) {
  Provisioner provisioner(session_, nullptr);
  auto conn = connect_kube(session_, cluster_access(session_));
  follow_pools(*conn.client, provisioner.list_pools(), session_.target.ns, [&](ClusterChange c) {
    if (on_change_) on_change_(c);
    changes.push_back(std::move(c));
  });
}

std::vector<PoolRow> GkeCluster::pools() {
  return Provisioner(session_, nullptr).list_pools();
}

std::optional<ClusterDescription> GkeCluster::describe() {
  ClusterDescription view{session_.target.cluster, session_.target.location, {}, std::nullopt};
  try {
    view.pools = pools();
  } catch (const Error& e) {
    // Jobs' records outlive the cluster (they are in the bucket): still show them.
    if (e.code() != Errc::not_found) throw;
    view.missing = true;
    return view;
  }
  view.auto_down = read_auto_down(session_);
  return view;
}

}  // namespace kinetic::gke
