// What the cluster costs per hour now (docs/cost.md), from its pools as Cluster::pools gives them:
// what `up`, `down` and `status` say it costs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/cluster.h"
#include "job/pricing.h"

namespace kinetic {

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

}  // namespace kinetic
