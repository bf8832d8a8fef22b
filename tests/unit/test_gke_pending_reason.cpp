// pending_reason over realistic pods and events (message shapes from docs/gcp-api.md §7.3, §7.4).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/gke/pending_reason.h"
#include "job/catalog.h"

namespace kinetic::gke {
namespace {

using nlohmann::json;

const std::string kImage = "us-central1-docker.pkg.dev/my-proj/kinetic/base:tpu-0123456789ab";

json tpu_selector(const std::string& topology = "2x2") {
  return {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
          {"cloud.google.com/gke-tpu-topology", topology}};
}

// A Job's pod: SELECTOR and a request for N of RESOURCE.
json pod(json selector = tpu_selector(), const std::string& resource = "google.com/tpu",
         int n = 4) {
  json container = {{"name", "main"}, {"image", kImage}, {"command", {"python3", "train.py"}}};
  if (!resource.empty()) {
    container["resources"] = {{"limits", {{resource, std::to_string(n)}}},
                              {"requests", {{resource, std::to_string(n)}}}};
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "kinetic-j1-abcde"},
            {"namespace", "default"},
            {"labels", {{"batch.kubernetes.io/job-name", "kinetic-j1"}}}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"nodeSelector", selector},
            {"containers", json::array({container})}}},
          {"status", {{"phase", "Pending"}, {"qosClass", "BestEffort"}}}};
}

json unschedulable(json p, const std::string& message) {
  p["status"]["conditions"] = json::array({{{"type", "PodScheduled"},
                                            {"status", "False"},
                                            {"reason", "Unschedulable"},
                                            {"message", message},
                                            {"lastProbeTime", nullptr},
                                            {"lastTransitionTime", "2025-06-01T10:00:00Z"}}});
  return p;
}

json scheduled(json p, const std::string& node = "gke-kinetic-v5e-4-1a2b3c4d-x1y2") {
  p["spec"]["nodeName"] = node;
  p["status"]["conditions"] = json::array({{{"type", "PodScheduled"},
                                            {"status", "True"},
                                            {"lastTransitionTime", "2025-06-01T10:01:00Z"}}});
  return p;
}

json waiting(json p, const std::string& reason, const std::string& message) {
  p = scheduled(std::move(p));
  p["status"]["containerStatuses"] =
      json::array({{{"name", "main"},
                    {"ready", false},
                    {"started", false},
                    {"restartCount", 0},
                    {"image", kImage},
                    {"imageID", ""},
                    {"state", {{"waiting", {{"reason", reason}}}}}}});
  if (!message.empty())
    p["status"]["containerStatuses"][0]["state"]["waiting"]["message"] = message;
  return p;
}

json event(const std::string& type, const std::string& reason, const std::string& message,
           const std::string& component, const std::string& last) {
  return {
      {"kind", "Event"},
      {"apiVersion", "v1"},
      {"metadata", {{"name", "kinetic-j1-abcde.17f" + reason}, {"namespace", "default"}}},
      {"involvedObject", {{"kind", "Pod"}, {"name", "kinetic-j1-abcde"}, {"namespace", "default"}}},
      {"type", type},
      {"reason", reason},
      {"message", message},
      {"source", {{"component", component}}},
      {"firstTimestamp", last},
      {"lastTimestamp", last},
      {"eventTime", nullptr},
      {"count", 1}};
}

const std::string kNoMatch =
    "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 "
    "nodes are available: 3 Preemption is not helpful for scheduling.";

json failed_scheduling(const std::string& at = "2025-06-01T10:00:00Z") {
  return event("Warning", "FailedScheduling", kNoMatch, "default-scheduler", at);
}

json not_triggered(const std::string& why, const std::string& at = "2025-06-01T10:00:12Z") {
  return event("Normal", "NotTriggerScaleUp", "pod didn't trigger scale-up: " + why,
               "cluster-autoscaler", at);
}

json triggered(const std::string& at = "2025-06-01T10:00:12Z") {
  return event("Normal", "TriggeredScaleUp",
               "pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/my-proj/"
               "zones/us-central1-a/instanceGroups/gke-kinetic-v5e-4-1a2b3c4d-grp 0->1 (max: 4)}]",
               "cluster-autoscaler", at);
}

json failed_scale_up(const std::string& cause, const std::string& at = "2025-06-01T10:02:00Z") {
  return event("Warning", "FailedScaleUp",
               "Node scale up in zones us-west4-a associated with this pod failed: " + cause +
                   ". Pod is at risk of not being scheduled.",
               "cluster-autoscaler", at);
}

TEST(K8sPendingReason, RunningOrDoneSaysNothing) {
  for (const char* phase : {"Running", "Succeeded", "Failed"}) {
    json p = scheduled(pod());
    p["status"]["phase"] = phase;
    auto r = pending_reason(p, {triggered()});
    EXPECT_EQ(r.kind, PendingKind::none) << phase;
    EXPECT_FALSE(r.fatal);
    EXPECT_EQ(r.message, "");
  }
}

TEST(K8sPendingReason, ScheduledAndCreatingSaysNothing) {
  auto r = pending_reason(waiting(pod(), "ContainerCreating", ""), {triggered()});
  EXPECT_EQ(r.kind, PendingKind::none);
}

// A --data bucket the pods may not read: the kubelet's latest FailedMount says why (the watch
// gives up after its grace, job_watch.cpp).
TEST(K8sPendingReason, AVolumeThatCannotMount) {
  const std::string denied =
      "MountVolume.SetUp failed for volume \"data-0\" : rpc error: code = PermissionDenied desc "
      "= failed to get GCS bucket \"b1\": googleapi: Error 403: Caller does not have "
      "storage.objects.list access to the Google Cloud Storage bucket.";
  auto r = pending_reason(
      scheduled(pod()),
      {event("Warning", "FailedMount", "MountVolume.SetUp failed for volume \"data-0\" : old",
             "kubelet", "2025-06-01T10:01:00Z"),
       event("Warning", "FailedMount", denied, "kubelet", "2025-06-01T10:02:00Z")});
  EXPECT_EQ(r.kind, PendingKind::mount_failed);
  EXPECT_FALSE(r.fatal);
  EXPECT_EQ(r.detail, denied);
  EXPECT_EQ(r.message, "cannot mount the job's volumes: " + denied.substr(0, denied.size() - 1));
}

TEST(K8sPendingReason, NoPoolWithNotTriggerScaleUp) {
  auto r = pending_reason(
      unschedulable(pod(), kNoMatch),
      {failed_scheduling(), not_triggered("3 node(s) didn't match Pod's node affinity/selector")});
  EXPECT_EQ(r.kind, PendingKind::no_pool);
  EXPECT_FALSE(r.fatal);
  EXPECT_EQ(r.message,
            "no node pool fits this job (0/3 nodes: 3 node(s) didn't match Pod's node "
            "affinity/selector); add one with `kinetic pool add --accelerator v5litepod-4`");
  EXPECT_EQ(r.accelerator, "v5litepod-4");
  EXPECT_EQ(r.node_selector.at("cloud.google.com/gke-tpu-topology"), "2x2");
  EXPECT_EQ(r.detail, kNoMatch);
}

TEST(K8sPendingReason, NoPoolWithoutAnyAutoscalerEvent) {
  auto r = pending_reason(unschedulable(pod(), kNoMatch), {failed_scheduling()});
  EXPECT_EQ(r.kind, PendingKind::no_pool);
  // Without the condition, the FailedScheduling event is enough.
  auto r2 = pending_reason(pod(), {failed_scheduling()});
  EXPECT_EQ(r2.kind, PendingKind::no_pool);
  EXPECT_EQ(r2.message, r.message);
}

TEST(K8sPendingReason, NoPoolAcceleratorHints) {
  struct Case {
    json selector;
    std::string resource;
    int n;
    std::string accelerator;
    std::string suffix;
  };
  std::vector<Case> cases = {
      {tpu_selector("4x4"), "google.com/tpu", 4, "v5litepod-16", "--accelerator v5litepod-16`"},
      {{{"cloud.google.com/gke-accelerator", "nvidia-l4"}},
       "nvidia.com/gpu",
       1,
       resolve_accelerator("l4").name,
       "--accelerator " + resolve_accelerator("l4").name + "`"},
      {{{"cloud.google.com/gke-accelerator", "nvidia-l4"}},
       "nvidia.com/gpu",
       2,
       resolve_accelerator("l4x2").name,
       "--accelerator " + resolve_accelerator("l4x2").name + "`"},
      {{{"cloud.google.com/gke-accelerator", "nvidia-l4"}, {"cloud.google.com/gke-spot", "true"}},
       "nvidia.com/gpu",
       1,
       resolve_accelerator("l4").name,
       "--accelerator " + resolve_accelerator("l4").name + " --spot`"},
      {json::object(), "", 0, "cpu", "--accelerator cpu`"},
      {{{"cloud.google.com/gke-accelerator", "nvidia-made-up"}},
       "nvidia.com/gpu",
       1,
       "",
       "--accelerator ACCELERATOR`"},
  };
  for (const auto& k : cases) {
    auto r = pending_reason(unschedulable(pod(k.selector, k.resource, k.n), kNoMatch),
                            {failed_scheduling()});
    EXPECT_EQ(r.kind, PendingKind::no_pool);
    EXPECT_EQ(r.accelerator, k.accelerator) << k.selector.dump();
    ASSERT_GE(r.message.size(), k.suffix.size());
    EXPECT_EQ(r.message.substr(r.message.size() - k.suffix.size()), k.suffix) << r.message;
  }
}

TEST(K8sPendingReason, NoNodesAtAll) {
  auto r = pending_reason(unschedulable(pod(), "no nodes available to schedule pods"), {});
  EXPECT_EQ(r.kind, PendingKind::no_pool);
  EXPECT_EQ(r.message,
            "no node pool fits this job (the cluster has no nodes); add one with `kinetic pool add "
            "--accelerator v5litepod-4`");
}

TEST(K8sPendingReason, ScalingUp) {
  auto r = pending_reason(unschedulable(pod(), kNoMatch), {failed_scheduling(), triggered()});
  EXPECT_EQ(r.kind, PendingKind::scaling_up);
  EXPECT_FALSE(r.fatal);
  EXPECT_EQ(r.message, "waiting for a node: scale-up of pool kinetic-v5e-4 triggered (0->1)");
  EXPECT_NE(r.detail.find("instanceGroups/gke-kinetic-v5e-4-1a2b3c4d-grp"), std::string::npos);
}

TEST(K8sPendingReason, ScalingUpUsesTheSelectedPoolName) {
  json selector = tpu_selector();
  selector["cloud.google.com/gke-nodepool"] = "v5e-4";
  auto r = pending_reason(unschedulable(pod(selector), kNoMatch), {triggered()});
  EXPECT_EQ(r.message, "waiting for a node: scale-up of pool v5e-4 triggered (0->1)");
}

TEST(K8sPendingReason, ScalingUpOnlyWhenItIsTheLatestAutoscalerEvent) {
  // Scale-up, then the autoscaler changed its mind: the latest word counts.
  auto r = pending_reason(unschedulable(pod(), kNoMatch),
                          {triggered("2025-06-01T10:00:10Z"),
                           not_triggered("3 node(s) didn't match Pod's node affinity/selector",
                                         "2025-06-01T10:05:00Z")});
  EXPECT_EQ(r.kind, PendingKind::no_pool);
  // Given out of order, the timestamps decide.
  auto r2 = pending_reason(unschedulable(pod(), kNoMatch),
                           {triggered("2025-06-01T10:06:00Z"),
                            not_triggered("3 node(s) didn't match Pod's node affinity/selector",
                                          "2025-06-01T10:05:00Z")});
  EXPECT_EQ(r2.kind, PendingKind::scaling_up);
}

TEST(K8sPendingReason, ScaleFailed) {
  struct Case {
    std::string cause;
    std::string message;
  };
  std::vector<Case> cases = {
      {"GCE quota exceeded",
       "cannot add a node: GCE quota exceeded in us-west4-a; request more quota or try another "
       "zone"},
      {"GCE out of resources",
       "cannot add a node: GCE out of resources in us-west4-a; the zone has no free capacity for "
       "this machine type now; try another zone, a reservation or --spot, or wait"},
      {"IP space exhausted",
       "cannot add a node: IP space exhausted in us-west4-a; the cluster has no free IP addresses "
       "for new nodes; enlarge its IP ranges"},
  };
  for (const auto& k : cases) {
    auto r = pending_reason(unschedulable(pod(), kNoMatch),
                            {failed_scheduling(), triggered(), failed_scale_up(k.cause)});
    EXPECT_EQ(r.kind, PendingKind::scale_failed);
    EXPECT_FALSE(r.fatal);
    EXPECT_EQ(r.message, k.message);
    EXPECT_NE(r.detail.find("Pod is at risk of not being scheduled"), std::string::npos);
  }
}

TEST(K8sPendingReason, ScaleFailedOutranksALaterScaleUp) {
  auto r = pending_reason(unschedulable(pod(), kNoMatch),
                          {failed_scale_up("GCE quota exceeded", "2025-06-01T10:02:00Z"),
                           triggered("2025-06-01T10:03:00Z")});
  EXPECT_EQ(r.kind, PendingKind::scale_failed);
}

TEST(K8sPendingReason, ScaleFailedWithABareMessage) {
  // A FailedScaleUp whose message is just the cause.
  json e = event("Warning", "FailedScaleUp", "GCE quota exceeded", "cluster-autoscaler",
                 "2025-06-01T10:02:00Z");
  auto r = pending_reason(unschedulable(pod(), kNoMatch), {e});
  EXPECT_EQ(r.kind, PendingKind::scale_failed);
  EXPECT_EQ(r.message,
            "cannot add a node: GCE quota exceeded; request more quota or try another zone");
}

TEST(K8sPendingReason, BackoffAfterFailedScaleUp) {
  auto r = pending_reason(
      unschedulable(pod(), kNoMatch),
      {not_triggered("1 in backoff after failed scale-up, 2 node(s) didn't match Pod's node "
                     "affinity/selector")});
  EXPECT_EQ(r.kind, PendingKind::scale_failed);
  EXPECT_NE(r.message.find("in backoff"), std::string::npos) << r.message;
}

TEST(K8sPendingReason, PoolAtMaxSizeIsWaitingNotNoPool) {
  auto r = pending_reason(
      unschedulable(pod(),
                    "0/3 nodes are available: 1 Insufficient google.com/tpu, 2 node(s) "
                    "didn't match Pod's node affinity/selector."),
      {not_triggered("1 max node group size reached, 2 node(s) didn't match Pod's node "
                     "affinity/selector")});
  EXPECT_EQ(r.kind, PendingKind::scheduling);
  EXPECT_FALSE(r.fatal);
  EXPECT_NE(r.message.find("maximum size"), std::string::npos) << r.message;
}

TEST(K8sPendingReason, ImagePull) {
  const std::string registry =
      "rpc error: code = NotFound desc = failed to pull and unpack image \"" + kImage +
      "\": failed to resolve reference \"" + kImage + "\": " + kImage + ": not found";
  // ErrImagePull: the waiting message.
  auto r = pending_reason(waiting(pod(), "ErrImagePull", registry), {triggered()});
  EXPECT_EQ(r.kind, PendingKind::image_pull);
  EXPECT_TRUE(r.fatal);
  EXPECT_EQ(r.message, "cannot pull image " + kImage + ": " + registry);

  // ImagePullBackOff: the kubelet's Failed event says more than "Back-off pulling image".
  json failed = event("Warning", "Failed", "Failed to pull image \"" + kImage + "\": " + registry,
                      "kubelet", "2025-06-01T10:03:00Z");
  json backoff = event("Normal", "BackOff", "Back-off pulling image \"" + kImage + "\"", "kubelet",
                       "2025-06-01T10:03:30Z");
  auto r2 = pending_reason(
      waiting(pod(), "ImagePullBackOff", "Back-off pulling image \"" + kImage + "\""),
      {triggered(), failed, backoff});
  EXPECT_EQ(r2.kind, PendingKind::image_pull);
  EXPECT_TRUE(r2.fatal);
  EXPECT_EQ(r2.message, "cannot pull image " + kImage + ": " + registry);

  // Without events, the waiting message.
  auto r3 = pending_reason(
      waiting(pod(), "ImagePullBackOff", "Back-off pulling image \"" + kImage + "\""), {});
  EXPECT_EQ(r3.kind, PendingKind::image_pull);
  EXPECT_EQ(r3.message,
            "cannot pull image " + kImage + ": Back-off pulling image \"" + kImage + "\"");

  auto r4 = pending_reason(waiting(pod(), "InvalidImageName",
                                   "Failed to apply default image tag \"Bad:Name\": couldn't "
                                   "parse image name"),
                           {});
  EXPECT_EQ(r4.kind, PendingKind::image_pull);
  EXPECT_TRUE(r4.fatal);
}

TEST(K8sPendingReason, ConfigError) {
  auto r = pending_reason(
      waiting(pod(), "CreateContainerConfigError", "secret \"kinetic-j1\" not found"),
      {event("Warning", "Failed", "Error: secret \"kinetic-j1\" not found", "kubelet",
             "2025-06-01T10:03:00Z")});
  EXPECT_EQ(r.kind, PendingKind::config_error);
  EXPECT_TRUE(r.fatal);
  EXPECT_EQ(r.message,
            "cannot start container main: secret \"kinetic-j1\" not found; check the job's "
            "secrets and environment");
}

TEST(K8sPendingReason, ContainerProblemsOutrankScaling) {
  json p = waiting(pod(), "ErrImagePull", "rpc error: code = Unknown desc = denied");
  auto r = pending_reason(p, {failed_scale_up("GCE quota exceeded"), triggered()});
  EXPECT_EQ(r.kind, PendingKind::image_pull);
}

TEST(K8sPendingReason, JustCreatedIsScheduling) {
  auto r = pending_reason(pod(), {});
  EXPECT_EQ(r.kind, PendingKind::scheduling);
  EXPECT_EQ(r.message, "waiting for the scheduler");
  EXPECT_FALSE(r.fatal);
}

// A flex-start pod (docs/capacity.md) waiting on its pool's scale-up, or on a scale-up that found
// no capacity, is queued for capacity, which is the normal course; a quota failure is not, and a
// missing pool names the pool add --flex-start that makes one.
TEST(K8sPendingReason, FlexStartWaitsForCapacity) {
  json selector = tpu_selector();
  selector["cloud.google.com/gke-flex-start"] = "true";
  auto r =
      pending_reason(unschedulable(pod(selector), kNoMatch), {failed_scheduling(), triggered()});
  EXPECT_EQ(r.kind, PendingKind::queued);
  EXPECT_EQ(r.message, "waiting for capacity");
  EXPECT_FALSE(r.fatal);
  auto stockout = pending_reason(unschedulable(pod(selector), kNoMatch),
                                 {triggered(), failed_scale_up("GCE out of resources")});
  EXPECT_EQ(stockout.kind, PendingKind::queued);
  auto quota = pending_reason(unschedulable(pod(selector), kNoMatch),
                              {triggered(), failed_scale_up("GCE quota exceeded")});
  EXPECT_EQ(quota.kind, PendingKind::scale_failed);
  auto none = pending_reason(
      unschedulable(pod(selector), kNoMatch),
      {failed_scheduling(), not_triggered("3 node(s) didn't match Pod's node affinity/selector")});
  EXPECT_EQ(none.kind, PendingKind::no_pool);
  EXPECT_NE(none.message.find("`kinetic pool add --accelerator v5litepod-4 --flex-start`"),
            std::string::npos)
      << none.message;
  // The same events without the selector: an ordinary scale-up.
  EXPECT_EQ(pending_reason(unschedulable(pod(), kNoMatch), {triggered()}).kind,
            PendingKind::scaling_up);
}

TEST(K8sPendingReason, MalformedInputDoesNotThrow) {
  for (const json& p : {json(), json::object(), json{{"status", 5}}, json{{"spec", "x"}}}) {
    EXPECT_NO_THROW(pending_reason(p, {json(), json::array(), json{{"reason", 7}}}));
  }
}

}  // namespace
}  // namespace kinetic::gke
