// run --hold-on-failure DURATION (issue #13 point 2): a job that fails for good stays up that long
// for `kinetic exec`, its verdict and exit code delivered at once; `kinetic cancel` ends the hold
// sooner. Both backends keep a stand-in with the job's directory and environment for exec to
// find; on gke in the pod, which stays up after the log's end.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "gke_fixture.h"

namespace kinetic::test {
namespace {

using nlohmann::json;

constexpr const char* kFailingJob =
    "open('state.txt', 'w').write('left by the job\\n')\n"
    "raise SystemExit('boom: the loss is nan')\n";

json status_of(const Sandbox& sb, const fs::path& dir, const std::string& id,
               const std::map<std::string, std::string>& env = {}) {
  auto r = sb.run({"status", id, "-o", "json"}, dir, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

TEST(HoldLocal, AFailedJobIsHeldForExecUntilCancelled) {
  Sandbox sb;
  const fs::path proj = sb.project("proj");
  sb.write("proj/fail.py", kFailingJob);
  auto run =
      sb.run({"run", "fail.py", "--env", "API_TOKEN=tok-9", "--hold-on-failure", "1h"}, proj);
  // The verdict comes at once: the run does not wait for the hold.
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const std::string id = job_id_in(run.err);
  EXPECT_NE(run.err.find(id + " is held 1h00m for `kinetic exec " + id + " -it -- bash`"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("failed (exit 1)"), std::string::npos) << run.err;

  json st = status_of(sb, proj, id);
  EXPECT_EQ(st["state"], "failed");
  ASSERT_TRUE(st.contains("held_until")) << st;
  EXPECT_GT(st["held_until"].get<std::string>(), st["finished"].get<std::string>());

  auto in =
      sb.run({"exec", id, "--", "sh", "-c", "cat state.txt; echo \"token=$API_TOKEN\""}, proj);
  EXPECT_EQ(in.exit_code, 0) << in.err;
  EXPECT_EQ(in.out, "left by the job\ntoken=tok-9\n");

  auto cancel = sb.run({"cancel", id}, proj);
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_NE(cancel.err.find(id + " failed; its hold (--hold-on-failure) is released"),
            std::string::npos)
      << cancel.err;
  st = status_of(sb, proj, id);
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 1);
  EXPECT_FALSE(st.contains("held_until")) << st;
  auto after = sb.run({"exec", id, "--", "true"}, proj);
  EXPECT_EQ(after.exit_code, 1);
  EXPECT_NE(after.err.find(id + " is not running (failed)"), std::string::npos) << after.err;
  // The hold's end cleans up as a run's end does: the work directory goes.
  EXPECT_FALSE(fs::exists(sb.state() / "jobs" / id / "work"));
}

TEST(HoldLocal, ASucceededJobIsNotHeld) {
  Sandbox sb;
  const fs::path proj = sb.project("proj");
  sb.write("proj/ok.py", "print('fine')\n");
  auto run = sb.run({"run", "ok.py", "--hold-on-failure", "1h"}, proj);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::string id = job_id_in(run.err);
  EXPECT_EQ(run.err.find("held"), std::string::npos) << run.err;
  EXPECT_FALSE(status_of(sb, proj, id).contains("held_until"));
  EXPECT_FALSE(fs::exists(sb.state() / "jobs" / id / "work"));
}

TEST(HoldLocal, BadHoldsAreRefusedBeforeAnythingRuns) {
  Sandbox sb;
  const fs::path proj = sb.project("proj");
  sb.write("proj/fail.py", kFailingJob);
  auto longer = sb.run({"run", "fail.py", "--hold-on-failure", "2d"}, proj);
  EXPECT_EQ(longer.exit_code, 2);
  EXPECT_EQ(line_count(longer.err), 1u) << longer.err;
  EXPECT_NE(longer.err.find("--hold-on-failure must be between 1s and 24h"), std::string::npos)
      << longer.err;
  auto slice = sb.run({"run", "fail.py", "--hold-on-failure", "15m", "-a", "v5litepod-16"}, proj);
  EXPECT_EQ(slice.exit_code, 2);
  EXPECT_EQ(line_count(slice.err), 1u) << slice.err;
  EXPECT_NE(slice.err.find("--hold-on-failure holds a single-host job"), std::string::npos)
      << slice.err;
  EXPECT_FALSE(fs::exists(proj / "kinetic-out"));
}

class HoldGke : public GkeFixture {};

TEST_F(HoldGke, TheFailedPodStaysUpAfterTheVerdictUntilCancelled) {
  sb.write("proj/fail.py", kFailingJob);
  auto run = kin({"run", "fail.py", "-a", "v5litepod-1", "--env", "API_TOKEN=tok-9",
                  "--hold-on-failure", "1h"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const std::string id = job_id_in(run.err);
  EXPECT_NE(run.err.find("holding this pod 1h00m for `kinetic exec " + id + " -it -- bash`"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("boom: the loss is nan"), std::string::npos) << run.err;
  // The pod runs on, held; the Job stays; the Secret (its values are in the pod already) goes.
  const std::string job = "/apis/batch/v1/namespaces/default/jobs/kinetic-" + id;
  ASSERT_TRUE(exists(job));
  EXPECT_FALSE(exists("/api/v1/namespaces/default/secrets/kinetic-" + id));
  EXPECT_EQ(cloud_->kube().pod_names("default", "kinetic.dev/job=" + id).size(), 1u);
  EXPECT_GE(cloud_->kube().running_pods(), 1);

  // status says failed and held, from the record, though the Job is active.
  json st = status_of(sb, proj, id, env());
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 1);
  EXPECT_TRUE(st.contains("held_until")) << st;
  auto list = kin({"status", "-o", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  bool listed_failed = false;
  const json listed = json::parse(list.out);
  for (const auto& j : listed["jobs"])
    if (j["id"] == id) listed_failed = j["state"] == "failed";
  EXPECT_TRUE(listed_failed) << list.out;

  // exec finds the job's directory and environment in the held pod.
  auto in = kin({"exec", id, "--", "sh", "-c", "cat state.txt; echo \"token=$API_TOKEN\""});
  EXPECT_EQ(in.exit_code, 0) << in.err;
  EXPECT_EQ(in.out, "left by the job\ntoken=tok-9\n");

  auto cancel = kin({"cancel", id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_NE(cancel.err.find(id + " failed; its hold (--hold-on-failure) is released"),
            std::string::npos)
      << cancel.err;
  EXPECT_FALSE(exists(job));
  EXPECT_TRUE(cloud_->kube().wait_idle(30000));
  st = status_of(sb, proj, id, env());
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 1);
  EXPECT_FALSE(st.contains("held_until")) << st;  // the pod said so as the hold ended
  auto after = kin({"exec", id, "--", "true"});
  EXPECT_EQ(after.exit_code, 1);
  EXPECT_NE(after.err.find(id + " has ended (failed)"), std::string::npos) << after.err;
}

}  // namespace
}  // namespace kinetic::test
