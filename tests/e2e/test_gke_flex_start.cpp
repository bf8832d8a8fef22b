// Flex-start (issue #32 point 2, docs/capacity.md): `pool add --flex-start` makes a pool of
// GKE's flex-start VMs, `run --flex-start` waits for its capacity, saying so ("waiting for
// capacity: queued <1m"), and `--timeout-from` decides whether that wait counts against the
// run's --timeout. The fake's flex-start pool gets its nodes when the test releases its capacity,
// or never.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

constexpr const char* kFlexPool = "v5litepod-1-flex-start";

class GkeFlexStart : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    auto r = kin({"pool", "add", "--accelerator", "v5litepod-1", "--flex-start"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    pool_add_err = r.err;
  }
  // Waits for the background run PID to end; its exit code, or -1.
  static int exit_code_of(int pid) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
  }
  // The node pool of the node the job's pod ran on (the pod is kept with --keep).
  std::string pool_of_job(const std::string& job) {
    auto names = cloud_->kube().pod_names("default", "kinetic.dev/job=" + job);
    if (names.empty()) return "";
    auto pod = cloud_->kube().object("/api/v1/namespaces/default/pods/" + names[0]);
    if (!pod) return "";
    auto node =
        cloud_->kube().object("/api/v1/nodes/" + (*pod)["spec"].value("nodeName", std::string()));
    if (!node) return "";
    return (*node)["metadata"]["labels"].value("cloud.google.com/gke-nodepool", "");
  }
  std::string pool_add_err;
};

// The pool is GKE's flex-start pool (the fake GKE keeps what was sent), says so where it is
// made, and `pool list` tells it from an on-demand pool of the same accelerator.
TEST_F(GkeFlexStart, PoolAddMakesAFlexStartPool) {
  EXPECT_NE(pool_add_err.find("node pool v5litepod-1-flex-start (ct5lp-hightpu-1t, 1x1, "
                              "flex-start: nodes come when GKE has the capacity"),
            std::string::npos)
      << pool_add_err;
  auto list = kin({"pool", "list", "-o", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::map<std::string, bool> flex;
  const auto doc = nlohmann::json::parse(list.out);
  for (const auto& p : doc["pools"])
    flex[p["name"].get<std::string>()] = p["flex_start"].get<bool>();
  ASSERT_TRUE(flex.count(kFlexPool) && flex.count("v5litepod-1")) << list.out;
  EXPECT_TRUE(flex[kFlexPool]) << list.out;
  EXPECT_FALSE(flex["v5litepod-1"]) << list.out;
}

// No capacity yet: the run waits, saying it is queued for capacity (not failing for want of a
// node), then runs on the flex-start pool, not the on-demand one of the same shape, once the
// capacity comes.
TEST_F(GkeFlexStart, ARunWaitsForCapacityThenRunsOnTheFlexStartPool) {
  cloud_->kube().hold_capacity(kFlexPool);
  int pid = sb.spawn({"run", "train.py", "-a", "v5litepod-1", "--flex-start", "--keep"}, proj, out,
                     err, env());
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(eventually([&] {
    return slurp(err).find("waiting for capacity: queued <1m") != std::string::npos;
  })) << slurp(err);
  cloud_->kube().release_capacity(kFlexPool);
  EXPECT_EQ(exit_code_of(pid), 0) << slurp(err);
  EXPECT_NE(slurp(out).find("training"), std::string::npos) << slurp(out);
  const std::string job = job_id_in(slurp(err));
  EXPECT_EQ(pool_of_job(job), kFlexPool);
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// Capacity that never comes, with --timeout counted from the submit (the default): the wait
// counts, and the run ends at its deadline, exit 124, without ever starting.
TEST_F(GkeFlexStart, ATimeoutFromTheSubmitCountsTheWait) {
  cloud_->kube().hold_capacity(kFlexPool);
  auto r = kin({"run", "train.py", "-a", "v5litepod-1:flex-start", "--timeout", "2s"},
               {{"KINETIC_SCHEDULING_GRACE_SECONDS", "3600"}});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_NE(r.err.find("waiting for capacity: queued"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("training"), std::string::npos) << r.out;
}

// --timeout-from start: the same wait, held past the 2 s deadline, does not count; once the
// capacity comes the job runs to its end (exit 0) within its own 2 s. Ordered by the fake: the
// capacity is released only once the Job has existed longer than the timeout.
TEST_F(GkeFlexStart, ATimeoutFromTheStartLeavesTheWaitOut) {
  cloud_->kube().hold_capacity(kFlexPool);
  int pid = sb.spawn({"run", "train.py", "-a", "v5litepod-1", "--flex-start", "--timeout", "2s",
                      "--timeout-from", "start"},
                     proj, out, err, env());
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(eventually([&] {
    return slurp(err).find("waiting for capacity") != std::string::npos;
  })) << slurp(err);
  // The job's id from its pod (a run prints it on a terminal only).
  const auto pods = cloud_->kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic");
  ASSERT_EQ(pods.size(), 1u);
  auto pod = cloud_->kube().object("/api/v1/namespaces/default/pods/" + pods[0]);
  ASSERT_TRUE(pod);
  const std::string job = (*pod)["metadata"]["labels"].value("kinetic.dev/job", "");
  auto workload = cloud_->kube().object("/apis/batch/v1/namespaces/default/jobs/kinetic-" + job);
  ASSERT_TRUE(workload);
  EXPECT_FALSE((*workload)["spec"].contains("activeDeadlineSeconds")) << workload->dump();
  const auto submitted = std::chrono::steady_clock::now();
  // Past the deadline a wait counted from the submit would have had (polled, not slept on).
  EXPECT_TRUE(eventually(
      [&] { return std::chrono::steady_clock::now() - submitted > std::chrono::seconds(3); }));
  EXPECT_TRUE(process_alive(pid)) << slurp(err);
  cloud_->kube().release_capacity(kFlexPool);
  EXPECT_EQ(exit_code_of(pid), 0) << slurp(err);
  EXPECT_NE(slurp(out).find("training"), std::string::npos) << slurp(out);
}

// What GKE's flex-start pools do not take is refused before anything is created, in one line.
TEST_F(GkeFlexStart, WhatFlexStartDoesNotTakeIsRefused) {
  auto spot = kin({"run", "train.py", "-a", "v5litepod-1:spot", "--flex-start"});
  EXPECT_EQ(spot.exit_code, 2) << spot.err;
  EXPECT_NE(spot.err.find("pick one"), std::string::npos) << spot.err;
  auto v4 = kin({"pool", "add", "--accelerator", "v4-8", "--flex-start"});
  EXPECT_EQ(v4.exit_code, 2) << v4.err;
  EXPECT_NE(v4.err.find("drop --flex-start"), std::string::npos) << v4.err;
  auto from = kin({"run", "train.py", "--timeout-from", "start"});
  EXPECT_EQ(from.exit_code, 2) << from.err;
  EXPECT_NE(from.err.find("pass --timeout"), std::string::npos) << from.err;
}

}  // namespace
}  // namespace kinetic::test
