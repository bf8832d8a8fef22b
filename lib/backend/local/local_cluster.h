// The Cluster role (backend/cluster.h) of a local context: there is none. `status` describes
// nothing; `pool` is refused with a one-line error saying how to get a cluster (`kinetic up`,
// which provisions one from the flags, environment and gcloud's config whatever the context).
#pragma once

#include <string>

#include "backend/cluster.h"

namespace kinetic {

class LocalCluster : public Cluster {
 public:
  // CONTEXT names the local context, COMMAND what was asked ("pool add"), for the refusal.
  LocalCluster(std::string context, std::string command)
      : context_(std::move(context)), command_(std::move(command)) {}

  ClusterPlace place() const override { return {}; }
  std::vector<ClusterChange> up(const UpOptions&) override { refuse(); }
  std::vector<ClusterChange> down(const DownOptions&) override { refuse(); }
  std::vector<ClusterChange> add_pool(const Accelerator&, const PoolOptions&,
                                      const std::string&) override {
    refuse();
  }
  ClusterChange remove_pool(const std::string&) override { refuse(); }
  std::vector<PoolRow> pools() override { refuse(); }
  std::optional<ClusterDescription> describe() override { return std::nullopt; }

 private:
  // Throws Error(Errc::usage).
  [[noreturn]] void refuse() const;

  std::string context_;
  std::string command_;
};

}  // namespace kinetic
