// What `up --queue on` writes (backend/gke/kueue.h): per accelerator a ResourceFlavor of its node
// labels, a ClusterQueue whose quota is what its pools hold at most, a LocalQueue in the jobs'
// namespace; how a job is put in a queue, and how its place in line is said.
#include <gtest/gtest.h>

#include "backend/gke/kueue.h"

namespace kinetic::gke {
namespace {

using json = nlohmann::json;

PoolRow pool_row(const std::string& name, const std::string& accelerator, int max_nodes) {
  PoolRow row;
  row.pool.name = name;
  row.pool.max_nodes = max_nodes;
  row.accelerator = accelerator;
  return row;
}

TEST(KueueQueues, AQueuePerAcceleratorWithThePoolsChipsAsItsQuota) {
  // Two slices' pools of v5litepod-16 (4 hosts of 4 chips each), an L4 pool of 3 nodes, and the
  // default pool, which Kueue does not count.
  const auto objects = queue_objects({pool_row("v5litepod-16", "v5litepod-16", 4),
                                      pool_row("v5litepod-16-slice-2", "v5litepod-16", 4),
                                      pool_row("l4", "l4", 3), pool_row("default-pool", "", 3)},
                                     "team");
  ASSERT_EQ(objects.size(), 9u);
  std::map<std::string, json> by_kind_name;
  for (const auto& o : objects)
    by_kind_name[o.value("kind", "") + "/" + o["metadata"].value("name", "")] = o;
  const json& cq = by_kind_name.at("ClusterQueue/kinetic-v5litepod-16");
  EXPECT_EQ(cq["apiVersion"], "kueue.x-k8s.io/v1beta2");
  const json& group = cq["spec"]["resourceGroups"][0];
  EXPECT_EQ(group["coveredResources"], json({"google.com/tpu"}));
  EXPECT_EQ(group["flavors"][0]["name"], "kinetic-v5litepod-16");
  EXPECT_EQ(group["flavors"][0]["resources"][0]["nominalQuota"], "32");  // 2 slices x 16 chips
  EXPECT_EQ(cq["spec"]["preemption"]["withinClusterQueue"], "LowerPriority");
  EXPECT_EQ(cq["spec"]["namespaceSelector"], json::object());
  EXPECT_EQ(
      by_kind_name.at(
          "ClusterQueue/kinetic-l4")["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0],
      json({{"name", "nvidia.com/gpu"}, {"nominalQuota", "3"}}));
  const json& flavor = by_kind_name.at("ResourceFlavor/kinetic-v5litepod-16");
  EXPECT_EQ(flavor["spec"]["nodeLabels"].value("cloud.google.com/gke-tpu-accelerator", ""),
            "tpu-v5-lite-podslice");
  EXPECT_EQ(flavor["spec"]["nodeLabels"].value("cloud.google.com/gke-tpu-topology", ""), "4x4");
  const json& lq = by_kind_name.at("LocalQueue/kinetic-v5litepod-16");
  EXPECT_EQ(lq["metadata"]["namespace"], "team");
  EXPECT_EQ(lq["spec"]["clusterQueue"], "kinetic-v5litepod-16");
  EXPECT_EQ(by_kind_name.at("WorkloadPriorityClass/kinetic-high")["value"], 750);
  EXPECT_EQ(by_kind_name.at("WorkloadPriorityClass/kinetic-normal")["value"], 500);
  EXPECT_EQ(by_kind_name.at("WorkloadPriorityClass/kinetic-low")["value"], 250);
  for (const auto& o : objects)
    EXPECT_EQ(o["metadata"]["labels"].value("app.kubernetes.io/managed-by", ""), "kinetic");
}

TEST(KueueQueues, AQueuedJobIsLabelledAndCreatedSuspended) {
  json job = {{"kind", "Job"}, {"metadata", {{"name", "kinetic-job-1"}}}, {"spec", json::object()}};
  EXPECT_EQ(waiting_queue(job), "");
  enqueue(job, "kinetic-v5litepod-1", "");
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "kinetic-v5litepod-1");
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "kinetic-normal");
  EXPECT_EQ(job["spec"]["suspend"], true);
  EXPECT_EQ(waiting_queue(job), "kinetic-v5litepod-1");
  job["spec"]["suspend"] = false;  // admitted
  EXPECT_EQ(waiting_queue(job), "");
  enqueue(job, "kinetic-v5litepod-1", "high");
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "kinetic-high");
}

TEST(KueueQueues, APlaceInLineIsAnOrdinal) {
  EXPECT_EQ(queued_text("q", 1), "queued: 1st in line in q");
  EXPECT_EQ(queued_text("q", 2), "queued: 2nd in line in q");
  EXPECT_EQ(queued_text("q", 3), "queued: 3rd in line in q");
  EXPECT_EQ(queued_text("q", 11), "queued: 11th in line in q");
  EXPECT_EQ(queued_text("q", 22), "queued: 22nd in line in q");
  EXPECT_EQ(queued_text("q", 0), "queued in q");
}

TEST(KueueQueues, AJobEvictedForAHigherOneSaysSoWhereItStands) {
  EXPECT_EQ(queued_text("q", 1, true),
            "queued: preempted by a higher-priority job; 1st in line in q");
  EXPECT_EQ(queued_text("q", 0, true), "queued: preempted by a higher-priority job; waiting in q");
}

// Only the job reconciler's Stopped events that carry a preemption's message count, each by its
// count: a Stopped event for another eviction (a deactivation, say) is not a preemption.
TEST(KueueQueues, EvictionsForAHigherPriorityJobAreCountedFromTheJobsEvents) {
  using json = nlohmann::json;
  const std::string preempted =
      "Preempted to accommodate a workload (UID: u, JobUID: j) due to prioritization in the "
      "ClusterQueue; preemptor path: /q; preemptee path: /q";
  EXPECT_EQ(preemption_evictions({}), 0);
  EXPECT_EQ(preemption_evictions({json{{"reason", "Started"}, {"message", "Admitted by q"}},
                                  json{{"reason", "Stopped"},
                                       {"message",
                                        "The workload is "
                                        "deactivated"}}}),
            0);
  EXPECT_EQ(
      preemption_evictions({json{{"reason", "Stopped"}, {"message", preempted}},
                            json{{"reason", "Stopped"}, {"message", preempted}, {"count", 2}}}),
      3);
}

}  // namespace
}  // namespace kinetic::gke
