// The CI contract on gke (issue #34): once a command has seen a job end, `status` says so too,
// even while the cluster is a beat behind; `wait`; and the shell idioms' table, as on local.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ci_idioms.h"
#include "gke_fixture.h"

namespace kinetic::test {
namespace {

class GkeCiContract : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    write_ci_jobs(sb, "proj");
  }
  void TearDown() override { cloud_->kube().release_exit_reports(); }
};

// The race ordered: the log ends (the bootstrap wrote its verdict, then the log's last lines)
// while the kubelet has not reported the container's exit, so the Job is still active. `logs -f`
// returns; `status` and `wait` then say how the job ended, from its final record.
TEST_F(GkeCiContract, WhatLogsFollowSawEndIsWhatStatusSays) {
  cloud_->kube().hold_exit_reports();
  auto started = kin({"run", "ok.py", "--detach"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string id = first_line(started.out);
  auto logs = kin({"logs", "-f", id});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello\n");
  ASSERT_FALSE(job_finished_in_cluster(id)) << "the race was not ordered";

  auto st = kin({"status", id, "-o", "json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  const auto record = nlohmann::json::parse(st.out);
  EXPECT_EQ(record["state"], "succeeded");
  EXPECT_EQ(record["exit_code"], 0);
  auto waited = kin({"wait", id});
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  EXPECT_EQ(waited.out.rfind(id + " succeeded in ", 0), 0u) << waited.out;

  // Once the cluster catches up it says the same.
  cloud_->kube().release_exit_reports();
  ASSERT_TRUE(eventually([&] { return job_finished_in_cluster(id); }));
  EXPECT_EQ(nlohmann::json::parse(kin({"status", id, "-o", "json"}).out)["state"], "succeeded");
}

// A failure the bootstrap judged final (no retry left) is the run's end too, Job active or not.
TEST_F(GkeCiContract, AFinalFailureIsAnEndBeforeTheJobSaysSo) {
  cloud_->kube().hold_exit_reports();
  auto started = kin({"run", "fail3.py", "--detach"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string id = first_line(started.out);
  const std::string record = "jobs/" + id + "/results/status.json";
  ASSERT_TRUE(eventually([&] {
    auto data = cloud_->gcs().object_data(kGkeBucket, record);
    return data && nlohmann::json::parse(*data).value("final", false);
  }));
  ASSERT_FALSE(job_finished_in_cluster(id)) << "the race was not ordered";
  auto st = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out);
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 3);
  auto waited = kin({"wait", id});
  EXPECT_EQ(waited.exit_code, 3) << waited.err;
  EXPECT_EQ(waited.out.rfind(id + " failed (exit 3) after ", 0), 0u) << waited.out;
}

// An attempt's failure that another attempt follows is not the run's end: its record is not
// final, and the cluster's view (still running) stands.
TEST_F(GkeCiContract, AFailedAttemptThatIsRetriedIsNotAnEnd) {
  cloud_->kube().hold_exit_reports();
  auto started = kin({"run", "fail3.py", "--detach", "--retries", "1"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string id = first_line(started.out);
  // The first attempt's record: failed, not the run's end.
  const std::string record = "jobs/" + id + "/results/status.json";
  ASSERT_TRUE(eventually([&] {
    auto data = cloud_->gcs().object_data(kGkeBucket, record);
    return data && nlohmann::json::parse(*data)["state"] == "failed";
  }));
  EXPECT_FALSE(
      nlohmann::json::parse(*cloud_->gcs().object_data(kGkeBucket, record)).value("final", false));
  auto st = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out);
  EXPECT_EQ(st["state"], "running");
  auto early = kin({"wait", id, "--timeout", "1s"});
  EXPECT_EQ(early.exit_code, 124) << early.err;
  cloud_->kube().release_exit_reports();
  auto waited = kin({"wait", id});
  EXPECT_EQ(waited.exit_code, 3) << waited.err;
  EXPECT_NE(waited.out.find("and 2 attempts"), std::string::npos) << waited.out;
}

TEST_F(GkeCiContract, TheIdiomsOfCiScriptsHold) {
  for (const auto& idiom : ci_idioms(/*gke=*/true)) {
    SCOPED_TRACE(idiom.name);
    auto r = sb.shell(idiom.script, proj, env());
    check_idiom(idiom, r, proj);
  }
}

}  // namespace
}  // namespace kinetic::test
