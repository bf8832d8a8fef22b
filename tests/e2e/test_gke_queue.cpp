// A shared cluster (issue #32 point 3, docs/capacity.md "Queueing"): `up --queue on` installs
// Kueue with a queue per accelerator whose quota is its pools' size, and two people's jobs on it
// take turns whole: the second waits, suspended, with no pod holding a node, `status` says where
// it stands in line, and it runs once the first has ended. `up --queue fair` admits another
// namespace's job ahead of one namespace's sweep.
#include <gtest/gtest.h>

#include <map>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

const std::vector<std::string> kQueueUp = {"up", "--accelerator", "v5litepod-4", "--max-nodes",
                                           "1",  "--queue",       "on"};

class GkeQueue : public GkeFixture {
 protected:
  // The second user: a config and state of their own, the same cluster named by hand.
  std::map<std::string, std::string> user_b() const {
    return {{"XDG_CONFIG_HOME", (sb.root() / "config-b").string()},
            {"KINETIC_HOME", (sb.root() / "state-b").string()}};
  }
  CliResult kin_b(const std::vector<std::string>& args) const { return kin(args, user_b()); }
  // The second user's context names the cluster by hand (no `up`): true when every setting took.
  bool user_b_names_the_cluster() const {
    bool all = true;
    for (const auto& [key, value] :
         std::map<std::string, std::string>{{"contexts.acme.backend", "gke"},
                                            {"contexts.acme.project", "acme-ml"},
                                            {"contexts.acme.zone", "us-central1-a"},
                                            {"current-context", "acme"}})
      all = kin_b({"config", "set", key, value}).exit_code == 0 && all;
    return all;
  }
  std::string job_path(const std::string& id) const {
    return "/apis/batch/v1/namespaces/default/jobs/kinetic-" + id;
  }
  // What the eviction tests share: on a queue with room for one v5litepod-4, this user's
  // foreground `run train.py A_ARGS` (a first attempt that saves a checkpoint and runs until
  // stopped; a second that finds it and ends) is running when the second user submits a high
  // priority job gated on the file go-high, which is running once this returns.
  struct Eviction {
    int a_pid = -1;
    std::string a_id, b_id;
  };
  Eviction evict_a_running_job(const std::vector<std::string>& a_args) {
    Eviction e;
    EXPECT_EQ(kin(kQueueUp).exit_code, 0);
    EXPECT_TRUE(user_b_names_the_cluster());
    sb.write("proj/train.py",
             "import os, time\n"
             "ck = os.path.join(os.environ['KINETIC_CHECKPOINT_DIR'], 'step')\n"
             "if os.path.exists(ck):\n"
             "    print('resumed from step', open(ck).read(), flush=True)\n"
             "else:\n"
             "    open(ck, 'w').write('7')\n"
             "    print('first attempt', flush=True)\n"
             "    while True:\n"
             "        time.sleep(0.05)\n");
    const fs::path go_high = sb.root() / "go-high";
    sb.write("proj/urgent.py", "import os, time\nwhile not os.path.exists('" + go_high.string() +
                                   "'):\n    time.sleep(0.05)\nprint('urgent ran')\n");
    std::vector<std::string> a_run = {"run", "train.py", "-a", "v5litepod-4"};
    a_run.insert(a_run.end(), a_args.begin(), a_args.end());
    e.a_pid = spawn_until_output(a_run, "first attempt");
    const auto a_jobs = nlohmann::json::parse(kin({"status", "-o", "json"}).out)["jobs"];
    if (a_jobs.size() == 1) e.a_id = a_jobs[0].value("id", "");
    auto b = kin_b({"run", "urgent.py", "-a", "v5litepod-4", "--priority", "high", "--detach"});
    EXPECT_EQ(b.exit_code, 0) << b.err;
    e.b_id = first_line(b.out);
    EXPECT_TRUE(cloud_->kube().wait_for_object(
        job_path(e.b_id),
        [](const nlohmann::json& j) { return j.is_object() && j["status"].value("ready", 0) > 0; },
        30000))
        << slurp(err);
    return e;
  }
  // What the fair-sharing tests share: `up --queue MODE` for namespace default and team-b, on a
  // queue with room for one v5litepod-4. Namespace default's sweep of three normal jobs comes
  // first (the first one running), then team-b's one job at B_PRIORITY; each runs until its gate
  // file is written. Returns the four ids (a1, a2, a3, b) once the first has ended.
  std::vector<std::string> sweep_then_another_namespace(const std::string& mode,
                                                        const std::string& b_priority) {
    auto up = kin({"up", "--accelerator", "v5litepod-4", "--max-nodes", "1", "--queue", mode});
    EXPECT_EQ(up.exit_code, 0) << up.err;
    auto up_b = kin({"--namespace", "team-b", "up", "--queue", mode});
    EXPECT_EQ(up_b.exit_code, 0) << up_b.err;
    EXPECT_NE(up_b.err.find("LocalQueue kinetic-v5litepod-4 (namespace team-b): created"),
              std::string::npos)
        << up_b.err;
    std::vector<std::string> ids;
    for (const std::string name : {"a1", "a2", "a3", "b"}) {
      sb.write("proj/" + name + ".py", "import os, time\nwhile not os.path.exists('" +
                                           (sb.root() / ("go-" + name)).string() +
                                           "'):\n    time.sleep(0.05)\n");
      std::vector<std::string> args = {"run", name + ".py", "-a", "v5litepod-4", "--detach"};
      if (name == "b")
        args = {"--namespace", "team-b",     "run",      "b.py",    "-a",
                "v5litepod-4", "--priority", b_priority, "--detach"};
      auto submitted = kin(args);
      EXPECT_EQ(submitted.exit_code, 0) << submitted.err;
      ids.push_back(first_line(submitted.out));
      if (name == "a1") {
        EXPECT_TRUE(cloud_->kube().wait_for_object(job_path(ids.back()), running, 30000));
      }
    }
    sb.write("go-a1", "");
    EXPECT_EQ(kin({"wait", ids[0]}).exit_code, 0);
    return ids;
  }
  static bool running(const nlohmann::json& j) {
    return j.is_object() && j["status"].value("ready", 0) > 0;
  }
  std::string job_path_in(const std::string& ns, const std::string& id) const {
    return "/apis/batch/v1/namespaces/" + ns + "/jobs/kinetic-" + id;
  }
  bool suspended(const std::string& ns, const std::string& id) const {
    return (*cloud_->kube().object(job_path_in(ns, id)))["spec"].value("suspend", false);
  }
  void release_all(const std::vector<std::string>& ids) {
    for (const char* name : {"a2", "a3", "b"}) sb.write(std::string("go-") + name, "");
    EXPECT_EQ(kin({"wait", ids[1], ids[2]}).exit_code, 0);
    EXPECT_EQ(kin({"--namespace", "team-b", "wait", ids[3]}).exit_code, 0);
  }
};

TEST_F(GkeQueue, TwoUsersShareAQueueWithRoomForOneSliceAndTakeTurns) {
  auto up = kin(kQueueUp);
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_NE(up.err.find("kueue v0.17.1 (kueue-system): installed"), std::string::npos) << up.err;
  EXPECT_NE(up.err.find("ClusterQueue kinetic-v5litepod-4 (4 google.com/tpu): created"),
            std::string::npos)
      << up.err;
  EXPECT_NE(up.err.find("LocalQueue kinetic-v5litepod-4 (namespace default): created"),
            std::string::npos)
      << up.err;
  ASSERT_TRUE(user_b_names_the_cluster());

  // A's job holds the queue's whole quota until the test lets it end.
  const fs::path go = sb.root() / "go";
  sb.write("proj/wait.py", "import os, time\nwhile not os.path.exists('" + go.string() +
                               "'):\n    time.sleep(0.05)\nprint('a done')\n");
  sb.write("proj/hello.py", "print('b ran')\n");
  auto a = kin({"run", "wait.py", "--accelerator", "v5litepod-4", "--detach"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string a_id = first_line(a.out);
  ASSERT_TRUE(cloud_->kube().wait_for_object(
      job_path(a_id),
      [](const nlohmann::json& j) { return j.is_object() && j["status"].value("ready", 0) > 0; },
      30000));
  const auto a_job = cloud_->kube().object(job_path(a_id));
  EXPECT_EQ((*a_job)["metadata"]["labels"].value("kueue.x-k8s.io/queue-name", ""),
            "kinetic-v5litepod-4");

  // B's waits, whole: suspended, no pod, its Workload pending for want of quota.
  auto b = kin_b({"run", "hello.py", "--accelerator", "v5litepod-4", "--detach"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string b_id = first_line(b.out);
  ASSERT_TRUE(eventually([&] {
    auto st = kin_b({"status", b_id, "-o", "json"});
    return st.out.find("queued: 1st in line in kinetic-v5litepod-4") != std::string::npos;
  })) << kin_b({"status", b_id, "-o", "json"}).out;
  EXPECT_TRUE((*cloud_->kube().object(job_path(b_id)))["spec"].value("suspend", false));
  EXPECT_TRUE(cloud_->kube().pod_names("default", "kinetic.dev/job=" + b_id).empty());
  auto table = kin_b({"status"});
  EXPECT_NE(table.out.find("pending (queued: 1st in line in kinetic-v5litepod-4)"),
            std::string::npos)
      << table.out;

  // A ends: B is admitted, runs, and succeeds.
  sb.write("go", "");
  auto waited = kin_b({"wait", b_id});
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  auto logs = kin_b({"logs", b_id});
  EXPECT_NE(logs.out.find("b ran"), std::string::npos) << logs.out << logs.err;
  EXPECT_EQ(kin({"wait", a_id}).exit_code, 0);
}

// `run --priority high` goes ahead of a normal job that has waited longer: its place in line is
// 1st, and it is admitted first once the quota is free.
TEST_F(GkeQueue, AHighPriorityJobGoesAheadOfAnOlderNormalOne) {
  auto up = kin(kQueueUp);
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_NE(up.err.find("WorkloadPriorityClass kinetic-high (750): created"), std::string::npos)
      << up.err;
  const fs::path go = sb.root() / "go", go_high = sb.root() / "go-high";
  auto gated = [&](const std::string& file, const fs::path& gate) {
    sb.write("proj/" + file, "import os, time\nwhile not os.path.exists('" + gate.string() +
                                 "'):\n    time.sleep(0.05)\n");
  };
  gated("first.py", go);
  gated("high.py", go_high);
  sb.write("proj/normal.py", "print('normal ran')\n");
  // The running job is high too: a lower one would be evicted for the high one (the test below).
  auto first =
      kin({"run", "first.py", "--accelerator", "v5litepod-4", "--priority", "high", "--detach"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string first_id = first_line(first.out);
  ASSERT_TRUE(cloud_->kube().wait_for_object(
      job_path(first_id),
      [](const nlohmann::json& j) { return j.is_object() && j["status"].value("ready", 0) > 0; },
      30000));
  auto normal = kin({"run", "normal.py", "--accelerator", "v5litepod-4", "--detach"});
  ASSERT_EQ(normal.exit_code, 0) << normal.err;
  const std::string normal_id = first_line(normal.out);
  auto high =
      kin({"run", "high.py", "--accelerator", "v5litepod-4", "--priority", "high", "--detach"});
  ASSERT_EQ(high.exit_code, 0) << high.err;
  const std::string high_id = first_line(high.out);
  EXPECT_EQ((*cloud_->kube().object(job_path(high_id)))["metadata"]["labels"].value(
                "kueue.x-k8s.io/priority-class", ""),
            "kinetic-high");
  ASSERT_TRUE(eventually([&] {
    const std::string table = kin({"status"}).out;
    return table.find(high_id + "\tpending (queued: 1st in line") != std::string::npos &&
           table.find(normal_id + "\tpending (queued: 2nd in line") != std::string::npos;
  })) << kin({"status"}).out;

  // The quota frees up: the high one runs while the normal one still waits.
  sb.write("go", "");
  ASSERT_TRUE(cloud_->kube().wait_for_object(
      job_path(high_id),
      [](const nlohmann::json& j) { return j.is_object() && j["status"].value("ready", 0) > 0; },
      30000));
  EXPECT_TRUE((*cloud_->kube().object(job_path(normal_id)))["spec"].value("suspend", false));
  EXPECT_TRUE(cloud_->kube().pod_names("default", "kinetic.dev/job=" + normal_id).empty());
  sb.write("go-high", "");
  EXPECT_EQ(kin({"wait", normal_id}).exit_code, 0);
  EXPECT_EQ(kin({"wait", high_id, first_id}).exit_code, 0);
}

// A higher-priority job takes the queue's only room from a running one (withinClusterQueue:
// LowerPriority): Kueue evicts the running job (its Job suspended again, its pod stopped), runs
// the higher one, then admits the evicted one again. The evicted run is a preemption, not a
// failure: its foreground run waits in the queue, its second attempt resumes from the first's
// checkpoint, and it ends with the job's own exit code, both attempts' logs kept.
TEST_F(GkeQueue, AHigherPriorityJobEvictsARunningOneWhichResumesAfterIt) {
  const Eviction run = evict_a_running_job({});
  ASSERT_GT(run.a_pid, 0);
  ASSERT_FALSE(HasFailure());
  const std::string a_id = run.a_id, b_id = run.b_id;
  const int a_pid = run.a_pid;
  // A waits in the queue again, said to be preempted: its Job suspended, no pod of it left.
  EXPECT_TRUE((*cloud_->kube().object(job_path(a_id)))["spec"].value("suspend", false));
  ASSERT_TRUE(eventually([&] {
    return kin({"status"})
               .out.find(a_id +
                         "\tpending (queued: preempted by a higher-priority job; 1st in line in "
                         "kinetic-v5litepod-4)") != std::string::npos;
  })) << kin({"status"}).out;
  // A's foreground run says so too, before B ends (its line is what orders the test).
  ASSERT_TRUE(eventually([&] {
    return slurp(err).find(
               "queued: preempted by a higher-priority job; 1st in line in "
               "kinetic-v5litepod-4") != std::string::npos;
  })) << slurp(err);

  // B ends; A is admitted again, resumes from its checkpoint and succeeds.
  sb.write("go-high", "");
  EXPECT_EQ(kin_b({"wait", b_id}).exit_code, 0);
  EXPECT_EQ(Sandbox::wait(a_pid), 0) << slurp(err);
  const std::string a_out = slurp(out), a_err = slurp(err);
  EXPECT_NE(a_out.find("first attempt"), std::string::npos) << a_out;
  EXPECT_NE(a_out.find("resumed from step 7"), std::string::npos) << a_out << a_err;
  // The evicted attempt's own line does not say it was cancelled: from the pod it cannot tell.
  EXPECT_EQ(a_err.find("kinetic: cancelled"), std::string::npos) << a_err;
  EXPECT_NE(a_err.find("kinetic: attempt 1 stopped by SIGTERM"), std::string::npos) << a_err;
  EXPECT_NE(a_err.find("preempted by a higher-priority job; attempt 2 now that the queue "
                       "admitted it again, resuming from the checkpoint"),
            std::string::npos)
      << a_err;
  auto logs = kin({"logs", a_id});
  EXPECT_NE(logs.out.find("first attempt"), std::string::npos) << logs.out << logs.err;
  EXPECT_NE(logs.out.find("resumed from step 7"), std::string::npos) << logs.out;
  auto st = nlohmann::json::parse(kin({"status", a_id, "-o", "json"}).out);
  EXPECT_EQ(st.value("state", ""), "succeeded") << st.dump();
  ASSERT_EQ(st["attempt_history"].size(), 2u) << st.dump();
  EXPECT_TRUE(st["attempt_history"][0].value("preempted", false)) << st.dump();
}

// An eviction counts toward --max-preemptions, as a node reclaim does: with none allowed, the
// evicted run gives up once it is admitted again, with the cap's 197 and its line.
TEST_F(GkeQueue, AnEvictionCountsTowardMaxPreemptions) {
  const Eviction run = evict_a_running_job({"--max-preemptions", "0"});
  ASSERT_GT(run.a_pid, 0);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(eventually([&] {
    return slurp(err).find("queued: preempted by a higher-priority job") != std::string::npos;
  })) << slurp(err);
  sb.write("go-high", "");
  EXPECT_EQ(kin_b({"wait", run.b_id}).exit_code, 0);
  EXPECT_EQ(Sandbox::wait(run.a_pid), 197) << slurp(err);
  EXPECT_NE(slurp(err).find("preempted 1 time (--max-preemptions 0)"), std::string::npos)
      << slurp(err);
  EXPECT_EQ(slurp(out), "first attempt\n") << "the job ran once: " << slurp(err);
}

// A slice is admitted whole: the second slice's JobSet and its Jobs wait suspended, with no pod
// on any of the pool's nodes, until the first slice has ended.
TEST_F(GkeQueue, ASliceWaitsWholeUntilTheSliceBeforeItEnds) {
  auto up = kin({"up", "--accelerator", "v5litepod-16", "--queue", "on"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_NE(up.err.find("ClusterQueue kinetic-v5litepod-16 (16 google.com/tpu): created"),
            std::string::npos)
      << up.err;
  const fs::path go = sb.root() / "go";
  sb.write("proj/wait.py", "import os, time\nwhile not os.path.exists('" + go.string() +
                               "'):\n    time.sleep(0.05)\n");
  sb.write("proj/hello.py", "print('second slice ran')\n");
  auto a = kin({"run", "wait.py", "--accelerator", "v5litepod-16", "--detach"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const std::string a_id = first_line(a.out);
  ASSERT_TRUE(eventually(
      [&] { return cloud_->kube().pod_names("default", "kinetic.dev/job=" + a_id).size() == 4; }));
  auto b = kin({"run", "hello.py", "--accelerator", "v5litepod-16", "--detach"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string b_id = first_line(b.out);
  ASSERT_TRUE(eventually([&] {
    return kin({"status", b_id, "-o", "json"})
               .out.find("queued: 1st in line in kinetic-v5litepod-16") != std::string::npos;
  }));
  const auto jobset = cloud_->kube().object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/kinetic-" + b_id);
  ASSERT_TRUE(jobset);
  EXPECT_TRUE((*jobset)["spec"].value("suspend", false));
  EXPECT_TRUE(cloud_->kube().pod_names("default", "kinetic.dev/job=" + b_id).empty());

  sb.write("go", "");
  auto waited = kin({"wait", b_id});
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err;
  EXPECT_NE(kin({"logs", b_id}).out.find("second slice ran"), std::string::npos);
  EXPECT_EQ(kin({"wait", a_id}).exit_code, 0);
}

// A slice evicted for a higher-priority one (issue #32 point 3): Kueue suspends its JobSet, the
// JobSet its Jobs, whose hosts' pods are stopped (exit 143). That is a preemption of the whole
// slice, not a failure of a host: the JobSet restarts whole once admitted again, and the run,
// followed in the foreground, ends with the job's own exit code. Each host remembers its first
// start in a file of its own, so the second start of every host ends at once.
TEST_F(GkeQueue, AnEvictedSliceRestartsWholeOnceAdmittedAgain) {
  auto up = kin({"up", "--accelerator", "v5litepod-16", "--queue", "on"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  ASSERT_TRUE(user_b_names_the_cluster());
  const fs::path marks = sb.root() / "marks", go_high = sb.root() / "go-high";
  fs::create_directories(marks);
  sb.write("proj/train.py",
           "import os, time\n"
           "mark = os.path.join('" +
               marks.string() +
               "', os.environ['JOB_COMPLETION_INDEX'])\n"
               "if os.path.exists(mark):\n"
               "    print('host started again', flush=True)\n"
               "else:\n"
               "    open(mark, 'w').close()\n"
               "    print('first start', flush=True)\n"
               "    while True:\n"
               "        time.sleep(0.05)\n");
  sb.write("proj/urgent.py", "import os, time\nwhile not os.path.exists('" + go_high.string() +
                                 "'):\n    time.sleep(0.05)\nprint('urgent ran')\n");
  const int a_pid = spawn_until_output({"run", "train.py", "-a", "v5litepod-16"}, "first start");
  ASSERT_GT(a_pid, 0) << slurp(err);
  const auto a_jobs = nlohmann::json::parse(kin({"status", "-o", "json"}).out)["jobs"];
  ASSERT_EQ(a_jobs.size(), 1u);
  const std::string a_id = a_jobs[0].value("id", "");
  ASSERT_TRUE(eventually([&] { return fs::exists(marks / "3"); })) << "every host started";

  auto b = kin_b({"run", "urgent.py", "-a", "v5litepod-16", "--priority", "high", "--detach"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string b_id = first_line(b.out);
  ASSERT_TRUE(eventually([&] {
    return kin({"status"})
               .out.find(a_id +
                         "\tpending (queued: preempted by a higher-priority "
                         "job") != std::string::npos;
  })) << kin({"status"}).out
      << slurp(err);
  sb.write("go-high", "");
  EXPECT_EQ(kin_b({"wait", b_id}).exit_code, 0);
  EXPECT_EQ(Sandbox::wait(a_pid), 0) << slurp(err);
  EXPECT_NE(slurp(out).find("host started again"), std::string::npos) << slurp(out) << slurp(err);
  auto st = nlohmann::json::parse(kin({"status", a_id, "-o", "json"}).out);
  EXPECT_EQ(st.value("state", ""), "succeeded") << st.dump();
}

// Quotas follow the pools: `pool add` and `pool remove` on a cluster whose queues are on change
// its ClusterQueues (a new accelerator's queue made, a gone one's deleted) without another
// `up --queue on`.
TEST_F(GkeQueue, PoolAddAndRemoveChangeTheQueuesWithoutUpAgain) {
  ASSERT_EQ(kin(kQueueUp).exit_code, 0);
  const std::string api = "/apis/kueue.x-k8s.io/v1beta2";
  auto quota = [&](const std::string& accelerator) {
    auto cq = cloud_->kube().object(api + "/clusterqueues/kinetic-" + accelerator);
    return cq ? (*cq)["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].value(
                    "nominalQuota", "")
              : "";
  };
  auto spot = kin({"pool", "add", "--accelerator", "v5litepod-4", "--spot", "--max-nodes", "2"});
  ASSERT_EQ(spot.exit_code, 0) << spot.err;
  EXPECT_NE(spot.err.find("ClusterQueue kinetic-v5litepod-4 (12 google.com/tpu): updated"),
            std::string::npos)
      << spot.err;
  EXPECT_EQ(quota("v5litepod-4"), "12");

  auto l4 = kin({"pool", "add", "--accelerator", "l4", "--max-nodes", "2"});
  ASSERT_EQ(l4.exit_code, 0) << l4.err;
  EXPECT_NE(l4.err.find("ClusterQueue kinetic-l4 (2 nvidia.com/gpu): created"), std::string::npos)
      << l4.err;
  EXPECT_NE(l4.err.find("LocalQueue kinetic-l4 (namespace default): created"), std::string::npos)
      << l4.err;
  EXPECT_EQ(l4.err.find("kinetic-v5litepod-4"), std::string::npos) << "unchanged: " << l4.err;

  auto gone = kin({"pool", "remove", "l4"});
  ASSERT_EQ(gone.exit_code, 0) << gone.err;
  EXPECT_NE(gone.err.find("ClusterQueue kinetic-l4: deleted"), std::string::npos) << gone.err;
  EXPECT_EQ(quota("l4"), "");
  EXPECT_FALSE(cloud_->kube().object(api + "/namespaces/default/localqueues/kinetic-l4"));
  EXPECT_FALSE(cloud_->kube().object(api + "/resourceflavors/kinetic-l4"));

  auto back = kin({"pool", "remove", "v5litepod-4-spot"});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_NE(back.err.find("ClusterQueue kinetic-v5litepod-4 (4 google.com/tpu): updated"),
            std::string::npos)
      << back.err;
  EXPECT_EQ(quota("v5litepod-4"), "4");
}

// `up` adding a pool to a cluster whose queues are on gives its accelerator a queue, as `pool add`
// does, without --queue.
TEST_F(GkeQueue, UpAddingAPoolGivesItsAcceleratorAQueue) {
  ASSERT_EQ(kin(kQueueUp).exit_code, 0);
  auto up = kin({"up", "--accelerator", "l4", "--max-nodes", "2"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_NE(up.err.find("ClusterQueue kinetic-l4 (2 nvidia.com/gpu): created"), std::string::npos)
      << up.err;
  EXPECT_EQ(up.err.find("ClusterQueue kinetic-v5litepod-4"), std::string::npos) << up.err;
}

// A cluster whose queues are off gets none from `pool add`.
TEST_F(GkeQueue, PoolAddMakesNoQueuesWhenTheyAreOff) {
  ASSERT_EQ(kin({"up", "--accelerator", "v5litepod-4", "--max-nodes", "1"}).exit_code, 0);
  auto l4 = kin({"pool", "add", "--accelerator", "l4", "--max-nodes", "2"});
  ASSERT_EQ(l4.exit_code, 0) << l4.err;
  EXPECT_EQ(l4.err.find("Queue"), std::string::npos) << l4.err;
  EXPECT_FALSE(
      cloud_->kube().object("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/kinetic-l4").has_value());
}

// The Kueue release is read as JobSet's is (release.h): a copy that is not there is one line
// naming it and the flag, and nothing of Kueue reaches the cluster.
TEST_F(GkeQueue, AMissingReleaseCopyIsOneLineNamingTheFlag) {
  auto r = kin({"up", "--queue", "on", "--kueue-manifests", "/nonexistent/kueue.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: cannot read the Kueue manifests /nonexistent/kueue.yaml: no such "
                       "file; --kueue-manifests takes a file or a URL"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(cloud_->kube().object(
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workloads.kueue.x-k8s.io"));
}

// `up --queue off` takes away what `up --queue on` wrote, and jobs go to the cluster unqueued.
TEST_F(GkeQueue, QueueOffRemovesKineticsQueues) {
  ASSERT_EQ(kin(kQueueUp).exit_code, 0);
  const std::string cq = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/kinetic-v5litepod-4";
  ASSERT_TRUE(cloud_->kube().object(cq));
  auto off = kin({"up", "--queue", "off"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_NE(off.err.find("ClusterQueue kinetic-v5litepod-4: deleted"), std::string::npos)
      << off.err;
  EXPECT_FALSE(cloud_->kube().object(cq));
  EXPECT_FALSE(cloud_->kube().object(
      "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/kinetic-v5litepod-4"));
  sb.write("proj/hello.py", "print('unqueued')\n");
  auto run = kin({"run", "hello.py", "--accelerator", "v5litepod-4"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("unqueued"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace kinetic::test

namespace kinetic::test {
namespace {

// `up --queue fair` (issue #32 point 3): one namespace's sweep does not starve another's job. Its
// three jobs came first, yet team-b's is admitted second: its LocalQueue has used nothing.
TEST_F(GkeQueue, FairSharingAdmitsAnotherNamespacesJobBeforeASweepsRest) {
  const auto ids = sweep_then_another_namespace("fair", "normal");
  ASSERT_EQ(ids.size(), 4u);
  const auto cq = cloud_->kube().object(
      "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/"
      "kinetic-v5litepod-4");
  ASSERT_TRUE(cq.has_value());
  EXPECT_EQ((*cq)["spec"]["admissionScope"].value("admissionMode", ""),
            "UsageBasedAdmissionFairSharing");
  // Installed with it: the configuration was edited before the controller first started, so
  // nothing restarted it.
  EXPECT_FALSE((*cloud_->kube().object(
      "/apis/apps/v1/namespaces/kueue-system/deployments/kueue-controller-manager"))
                   ["spec"]["template"]
                       .value("metadata", nlohmann::json::object())
                       .value("annotations", nlohmann::json::object())
                       .contains("kubectl.kubernetes.io/restartedAt"));
  EXPECT_TRUE(cloud_->kube().wait_for_object(job_path_in("team-b", ids[3]), running, 30000));
  EXPECT_TRUE(suspended("default", ids[1]));
  EXPECT_TRUE(suspended("default", ids[2]));
  release_all(ids);
}

// `--queue fair` on a cluster whose Kueue was installed without it: the configuration gets
// admissionFairSharing (the rest of it kept) and the controller is restarted to read it, as
// `kubectl rollout restart` does; only then does the mode take effect. `--queue on` turns the
// mode off again, the configuration left as it is.
TEST_F(GkeQueue, FairSharingOnAnInstalledKueueRestartsItsController) {
  auto on = kin({"up", "--accelerator", "v5litepod-4", "--max-nodes", "1", "--queue", "on"});
  ASSERT_EQ(on.exit_code, 0) << on.err;
  const std::string deployment =
      "/apis/apps/v1/namespaces/kueue-system/deployments/kueue-controller-manager";
  const std::string config_map = "/api/v1/namespaces/kueue-system/configmaps/kueue-manager-config";
  auto config = [&] {
    return (*cloud_->kube().object(config_map))["data"].value("controller_manager_config.yaml", "");
  };
  EXPECT_EQ(config().find("\nadmissionFairSharing:"), std::string::npos) << config();
  const auto ids = sweep_then_another_namespace("fair", "normal");
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_NE(config().find("\nadmissionFairSharing:"), std::string::npos) << config();
  EXPECT_NE(config().find("usageHalfLifeTime: 168h"), std::string::npos) << config();
  EXPECT_NE(config().find("jobset.x-k8s.io/jobset"), std::string::npos) << config();
  EXPECT_TRUE(
      (*cloud_->kube().object(deployment))["spec"]["template"]["metadata"]["annotations"].contains(
          "kubectl.kubernetes.io/restartedAt"));
  EXPECT_TRUE(cloud_->kube().wait_for_object(job_path_in("team-b", ids[3]), running, 30000));
  EXPECT_TRUE(suspended("default", ids[1]));
  EXPECT_TRUE(suspended("default", ids[2]));
  release_all(ids);

  auto back = kin({"up", "--queue", "on"});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_FALSE(cloud_->kube()
                   .object("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/kinetic-v5litepod-4")
                   ->at("spec")
                   .contains("admissionScope"));
  EXPECT_NE(config().find("\nadmissionFairSharing:"), std::string::npos);
}

// With `--queue on` the order is priority, then age, whatever the namespace: team-b's job is
// admitted after the sweep's. (Of low priority here: jobs of one priority submitted within the
// same second are ordered by their UIDs, at random, in Kueue as in the fake. In fair sharing a
// low one would be admitted second, then evicted by the sweep's next: usage orders admission,
// priority still preempts; docs/capacity.md.)
TEST_F(GkeQueue, WithoutFairSharingASweepGoesFirst) {
  const auto ids = sweep_then_another_namespace("on", "low");
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_FALSE(cloud_->kube()
                   .object("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/kinetic-v5litepod-4")
                   ->at("spec")
                   .contains("admissionScope"));
  ASSERT_TRUE(
      eventually([&] { return !suspended("default", ids[1]) || !suspended("default", ids[2]); }));
  EXPECT_TRUE(suspended("team-b", ids[3]));
  release_all(ids);
}

}  // namespace
}  // namespace kinetic::test
