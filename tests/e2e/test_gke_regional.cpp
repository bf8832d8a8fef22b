// `kinetic up --region`: a regional cluster whose nodes sit where their machine types exist
// (issue #27 point 2). The fake's zone table is what Compute Engine and GKE both go by: GKE
// refuses a pool in a zone without its machine type, as the real one does for a TPU type.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "fakes/fake_cloud.h"

namespace kinetic::test {
namespace {

// us-central1: v5e (ct5lp-hightpu-4t) in -b only, general-purpose types everywhere.
fakes::FakeCloudOptions regional_zones() {
  fakes::FakeCloudOptions o;
  o.zone_machine_types["us-central1-a"] = {"e2-standard-4", "n2-standard-4"};
  o.zone_machine_types["us-central1-b"] = {"e2-standard-4", "n2-standard-4", "ct5lp-hightpu-4t"};
  o.zone_machine_types["us-central1-c"] = {"e2-standard-4"};
  return o;
}

nlohmann::json locations_of(fakes::FakeCloud& cloud, const std::string& pool) {
  auto c = cloud.gcp().cluster("p", "us-central1", "kinetic");
  if (!c) return nullptr;
  for (const auto& p : (*c)["nodePools"])
    if (p.value("name", "") == pool) return p["locations"];
  return nullptr;
}

TEST(GkeRegional, EachPoolGoesToAZoneThatOffersItsMachineTypeAndUpSaysWhich) {
  fakes::FakeCloud cloud(regional_zones());
  Sandbox sb;
  auto r =
      sb.run({"up", "--project", "p", "--region", "us-central1", "--accelerator", "v5litepod-4"},
             {}, cloud.client_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The default pool in one zone (not a node in each of the region's three), the TPU pool in
  // the only zone with v5e.
  EXPECT_NE(r.err.find("default pool e2-standard-4 in us-central1-a"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ct5lp-hightpu-4t, 2x2, in us-central1-b"), std::string::npos) << r.err;
  auto cluster = cloud.gcp().cluster("p", "us-central1", "kinetic");
  ASSERT_TRUE(cluster);
  EXPECT_EQ((*cluster)["locations"], nlohmann::json::array({"us-central1-a"}));
  bool found = false;
  for (const auto& p : (*cluster)["nodePools"]) {
    if (p["config"].value("machineType", "") != "ct5lp-hightpu-4t") continue;
    found = true;
    EXPECT_EQ(p["locations"], nlohmann::json::array({"us-central1-b"})) << p.dump();
  }
  EXPECT_TRUE(found) << cluster->dump();

  // pool add goes by the same rule, and a type no zone of the region has is one clear error.
  auto none = sb.run({"pool", "add", "--accelerator", "v6e-1"}, {}, cloud.client_env());
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_EQ(line_count(none.err), 1u) << none.err;
  EXPECT_NE(none.err.find("no zone of us-central1 (us-central1-a, us-central1-b, us-central1-c) "
                          "offers ct6e-standard-1t"),
            std::string::npos)
      << none.err;
}

// A regional cluster without `locations` puts a default-pool node in each zone of the region:
// three nodes billed where one does (xpk gives the cluster one --node-locations zone too).
TEST(GkeRegional, TheDefaultPoolOfARegionalClusterSitsInOneZone) {
  fakes::FakeCloud cloud(regional_zones());
  Sandbox sb;
  ASSERT_EQ(
      sb.run({"up", "--project", "p", "--region", "us-central1"}, {}, cloud.client_env()).exit_code,
      0);
  auto c = cloud.gcp().cluster("p", "us-central1", "kinetic");
  ASSERT_TRUE(c);
  EXPECT_EQ(locations_of(cloud, "default-pool"), nlohmann::json::array({"us-central1-a"}));
}

}  // namespace
}  // namespace kinetic::test
