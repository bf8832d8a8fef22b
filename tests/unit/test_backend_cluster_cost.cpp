// What a cluster costs to keep up (docs/cost.md): list prices per node, the control plane, and
// honest wording for Spot and unpriced nodes.
#include <gtest/gtest.h>

#include "backend/cluster_cost.h"
#include "job/catalog.h"
#include "job/pricing.h"

namespace kinetic {
namespace {

PoolRow pool(const std::string& machine_type, int nodes, bool spot = false) {
  PoolRow row;
  row.pool.machine_type = machine_type;
  row.pool.spot = spot;
  row.nodes = nodes;
  return row;
}

TEST(ClusterCost, NodesArePricedFromTheDefaultTypesAndTheCatalogsHosts) {
  EXPECT_EQ(node_price_per_hour("e2-standard-4"), 0.134);
  // A v5litepod-16 slice is 4 hosts of ct5lp-hightpu-4t: each host a quarter of its price.
  const Accelerator slice = resolve_accelerator("v5litepod-16");
  ASSERT_EQ(slice.machine_type, "ct5lp-hightpu-4t");
  EXPECT_DOUBLE_EQ(*node_price_per_hour("ct5lp-hightpu-4t"), slice.price_per_hour / slice.hosts);
  EXPECT_FALSE(node_price_per_hour("m1-ultramem-160"));
}

TEST(ClusterCost, TheControlPlaneAndEveryNodeUp) {
  ClusterCost idle = cluster_cost({pool("e2-standard-4", 1), pool("ct5lp-hightpu-1t", 0)});
  EXPECT_DOUBLE_EQ(idle.per_hour, kControlPlanePerHour + 0.134);
  EXPECT_EQ(cluster_cost_text(idle), "$0.23/h (the control plane and 1 node)");

  ClusterCost mixed = cluster_cost(
      {pool("e2-standard-4", 2), pool("ct5lp-hightpu-1t", 1, true), pool("m1-ultramem-160", 1)});
  EXPECT_EQ(mixed.nodes, 4);
  EXPECT_EQ(mixed.spot_nodes, 1);
  EXPECT_EQ(mixed.unpriced_nodes, 1);
  EXPECT_DOUBLE_EQ(mixed.per_hour,
                   kControlPlanePerHour + 2 * 0.134 + *node_price_per_hour("ct5lp-hightpu-1t"));
  EXPECT_EQ(cluster_cost_text(mixed),
            "more than $1.57/h (the control plane and 4 nodes, 1 of them of a machine type not "
            "priced)");
  EXPECT_EQ(cluster_cost_text(cluster_cost({pool("ct5lp-hightpu-1t", 1, true)})).substr(0, 8),
            "at most ");
}

TEST(ClusterCost, SpotNodesAtYourSpotPriceAreNoLongerAnUpperBound) {
  const PriceBook book = parse_price_book("ct5lp-hightpu-1t:spot=0.36");
  ClusterCost cost =
      cluster_cost({pool("e2-standard-4", 1), pool("ct5lp-hightpu-1t", 2, true)}, book);
  EXPECT_EQ(cost.spot_nodes, 0);
  EXPECT_DOUBLE_EQ(cost.per_hour, kControlPlanePerHour + 0.134 + 2 * 0.36);
  EXPECT_EQ(cluster_cost_text(cost), "$0.95/h (the control plane and 3 nodes)");
  EXPECT_EQ(*pool_node_price(pool("ct5lp-hightpu-1t", 1, true), book), 0.36);
  // The same machine type on demand keeps its on-demand price.
  EXPECT_EQ(pool_node_price(pool("ct5lp-hightpu-1t", 1), book),
            node_price_per_hour("ct5lp-hightpu-1t"));
}

}  // namespace
}  // namespace kinetic
