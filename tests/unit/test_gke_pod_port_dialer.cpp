// When a gke port-forward's pod is no longer one to forward to (backend/gke/pod_port_dialer.h).
#include <gtest/gtest.h>

#include "backend/gke/pod_port_dialer.h"

namespace kinetic::gke {
namespace {

using nlohmann::json;

TEST(PodEnd, RunningIsNoEndAndEachEndSaysWhich) {
  const json running = {{"metadata", json::object()}, {"status", {{"phase", "Running"}}}};
  EXPECT_EQ(pod_end(running, "job-1", "p"), "");
  EXPECT_EQ(pod_end(std::nullopt, "job-1", "p"), "job-1 ended: its pod p is gone");
  EXPECT_EQ(pod_end(json{{"metadata", json::object()}, {"status", {{"phase", "Succeeded"}}}},
                    "job-1", "p"),
            "job-1 ended: its pod p succeeded");
  EXPECT_EQ(
      pod_end(json{{"metadata", json::object()}, {"status", {{"phase", "Failed"}}}}, "job-1", "p"),
      "job-1 ended: its pod p failed");
  json deleting = running;
  deleting["metadata"]["deletionTimestamp"] = "2026-11-27T22:00:00Z";
  EXPECT_EQ(pod_end(deleting, "job-1", "p"), "job-1 ended: its pod p is being deleted");
}

}  // namespace
}  // namespace kinetic::gke
