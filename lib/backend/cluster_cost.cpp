#include "backend/cluster_cost.h"

namespace kinetic {

std::optional<double> pool_node_price(const PoolRow& row, const PriceBook& prices) {
  if (row.pool.spot)
    if (auto spot = spot_node_price_per_hour(row.pool.machine_type, prices)) return spot;
  return node_price_per_hour(row.pool.machine_type, prices);
}

ClusterCost cluster_cost(const std::vector<PoolRow>& pools, const PriceBook& prices) {
  ClusterCost cost;
  cost.per_hour = control_plane_price(prices);
  for (const auto& row : pools) {
    cost.nodes += row.nodes;
    if (row.pool.spot && !spot_node_price_per_hour(row.pool.machine_type, prices))
      cost.spot_nodes += row.nodes;  // at its on-demand price: at most
    if (auto each = pool_node_price(row, prices))
      cost.per_hour += *each * row.nodes;
    else
      cost.unpriced_nodes += row.nodes;
  }
  return cost;
}

std::string cluster_cost_text(const ClusterCost& cost) {
  // Spot nodes are counted at more than they cost, unpriced ones not at all.
  const char* bound = cost.unpriced_nodes > 0 ? "more than "
                      : cost.spot_nodes > 0   ? "at most "
                                              : "";
  std::string text = bound + format_usd(cost.per_hour) + "/h (the control plane and " +
                     std::to_string(cost.nodes) + (cost.nodes == 1 ? " node" : " nodes");
  if (cost.unpriced_nodes > 0)
    text += ", " + std::to_string(cost.unpriced_nodes) + " of them of a machine type not priced";
  return text + ")";
}

}  // namespace kinetic
