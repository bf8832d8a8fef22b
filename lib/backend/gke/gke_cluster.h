// The Cluster role (backend/cluster.h) on GKE: the Provisioner's up, down and pools, and the
// auto-down state its in-cluster check recorded, for the session's target.
#pragma once

#include <functional>

#include "backend/cluster.h"
#include "backend/gke/session.h"

namespace kinetic::gke {

class GkeCluster : public Cluster {
 public:
  // SESSION outlives the cluster; each change is reported through ON_CHANGE as it happens.
  GkeCluster(const Session& session, std::function<void(const ClusterChange&)> on_change)
      : session_(session), on_change_(std::move(on_change)) {}

  ClusterPlace place() const override;
  std::vector<ClusterChange> up(const UpOptions& options) override;
  std::vector<ClusterChange> down(const DownOptions& options) override;
  std::vector<ClusterChange> add_pool(const Accelerator& accelerator, const PoolOptions& options,
                                      const std::string& jobset_manifests) override;
  ClusterChange remove_pool(const std::string& name) override;
  std::vector<PoolRow> pools() override;
  std::optional<ClusterDescription> describe() override;

 private:
  // follow_pools (kueue.h) once a pool came or went: queues that are on take the pools' sizes.
  void follow_pools_with_queues(std::vector<ClusterChange>& changes);

  const Session& session_;
  std::function<void(const ClusterChange&)> on_change_;
};

}  // namespace kinetic::gke
