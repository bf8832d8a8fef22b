// `up --queue fair` (backend/gke/kueue_fair.h): Kueue's configuration gets admissionFairSharing,
// everything else in it kept, once; and each ClusterQueue asks for the mode.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include "backend/gke/kueue.h"
#include "backend/gke/kueue_fair.h"
#include "core/error.h"

namespace kinetic::gke {
namespace {

using json = nlohmann::json;

// Kueue v0.17.1's config/components/manager/controller_manager_config.yaml, trimmed.
const char* const kReleaseConfig =
    "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
    "kind: Configuration\n"
    "health:\n"
    "  healthProbeBindAddress: :8081\n"
    "leaderElection:\n"
    "  leaderElect: true\n"
    "integrations:\n"
    "  frameworks:\n"
    "  - \"batch/job\"\n"
    "  - \"jobset.x-k8s.io/jobset\"\n"
    "#admissionFairSharing:\n"
    "#  usageHalfLifeTime: \"168h\" # 7 days\n";

TEST(KueueFairSharing, TheConfigurationGetsItAndKeepsEverythingElse) {
  EXPECT_FALSE(has_admission_fair_sharing(kReleaseConfig));  // commented out in the release
  const std::string edited = with_admission_fair_sharing(kReleaseConfig);
  EXPECT_TRUE(has_admission_fair_sharing(edited));
  const YAML::Node node = YAML::Load(edited);
  EXPECT_EQ(node["admissionFairSharing"]["usageHalfLifeTime"].as<std::string>(), "168h");
  EXPECT_EQ(node["admissionFairSharing"]["usageSamplingInterval"].as<std::string>(), "5m");
  EXPECT_EQ(node["apiVersion"].as<std::string>(), "config.kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(node["health"]["healthProbeBindAddress"].as<std::string>(), ":8081");
  EXPECT_TRUE(node["leaderElection"]["leaderElect"].as<bool>());
  ASSERT_EQ(node["integrations"]["frameworks"].size(), 2u);
  EXPECT_EQ(node["integrations"]["frameworks"][1].as<std::string>(), "jobset.x-k8s.io/jobset");
}

TEST(KueueFairSharing, TheEditIsIdempotentAndKeepsAnAdministratorsValues) {
  const std::string once = with_admission_fair_sharing(kReleaseConfig);
  EXPECT_EQ(with_admission_fair_sharing(once), once);
  const std::string theirs = std::string(kReleaseConfig) +
                             "admissionFairSharing:\n"
                             "  usageHalfLifeTime: 24h\n";
  EXPECT_EQ(with_admission_fair_sharing(theirs), theirs);
}

TEST(KueueFairSharing, OnlyKueuesConfigMapIsEdited) {
  json config_map = {{"kind", "ConfigMap"},
                     {"metadata", {{"name", "kueue-manager-config"}}},
                     {"data", {{"controller_manager_config.yaml", kReleaseConfig}}}};
  json other = config_map;
  other["metadata"]["name"] = "something-else";
  const json before = other;
  edit_for_fair_sharing(config_map);
  edit_for_fair_sharing(other);
  EXPECT_TRUE(has_admission_fair_sharing(config_map["data"]["controller_manager_config.yaml"]));
  EXPECT_EQ(other, before);
}

TEST(KueueFairSharing, AConfigurationThatIsNotAMappingIsNamedWithItsFix) {
  try {
    (void)with_admission_fair_sharing("- a\n- list\n");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kueue-manager-config"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kubectl -n kueue-system edit"), std::string::npos);
  }
}

TEST(KueueFairSharing, EachClusterQueueAsksForTheModeOnlyWhenFair) {
  PoolRow row;
  row.pool.name = "v5litepod-4";
  row.pool.max_nodes = 1;
  row.accelerator = "v5litepod-4";
  for (const bool fair : {false, true})
    for (const auto& o : queue_objects({row}, "default", fair)) {
      if (o["kind"] != "ClusterQueue") continue;
      if (!fair) {
        EXPECT_FALSE(o["spec"].contains("admissionScope"));
        continue;
      }
      EXPECT_EQ(o["spec"]["admissionScope"],
                json({{"admissionMode", "UsageBasedAdmissionFairSharing"}}));
    }
}

}  // namespace
}  // namespace kinetic::gke
