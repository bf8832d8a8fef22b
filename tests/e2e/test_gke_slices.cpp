// Multi-host TPU slices on the cluster `kinetic up` just made (issue #9, docs/multihost.md): up
// installs JobSet (the fresh fake cluster has none, as GKE), a v5litepod-16 run spans its four
// hosts with the environment JAX expects, and one slice has one fate: a failing host stops the
// others and names itself, a retry restarts the whole slice from its checkpoint.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

const char* kCrd =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/jobsets.jobset.x-k8s.io";
const char* kController =
    "/apis/apps/v1/namespaces/jobset-system/deployments/jobset-controller-manager";

const std::vector<std::string> kSliceUp = {
    "up", "--project", "acme-ml", "--zone", "us-central1-a", "--accelerator", "v5litepod-16"};

// A cluster of its own: what `up` finds on a cluster GKE has just made.
TEST(GkeJobSetInstall, UpInstallsJobSetOnceAndUpgradesItWhenThePinMoves) {
  fakes::FakeCloud cloud;
  Sandbox sb;
  auto proj = sb.project("proj");
  auto env = cloud.client_env();
  auto up = [&] { return sb.run(kSliceUp, proj, env); };
  EXPECT_FALSE(cloud.kube().object(kCrd)) << "a fresh GKE cluster has no JobSet";

  auto first = up();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("jobset v0.10.1 (jobset-system)"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("installed"), std::string::npos) << first.err;
  EXPECT_TRUE(cloud.kube().object(kCrd));
  auto controller = cloud.kube().object(kController);
  ASSERT_TRUE(controller);
  EXPECT_EQ((*controller)["metadata"]["annotations"].value("kinetic.dev/jobset-version", ""),
            "v0.10.1");

  cloud.kube().reset_counters();
  auto again = up();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("jobset v0.10.1 (jobset-system): exists"), std::string::npos)
      << again.err;
  for (const auto& [route, n] : cloud.kube().request_counts())
    EXPECT_NE(route.rfind("PATCH", 0), 0u) << "installed once: " << route << " x" << n;

  // An older kinetic installed v0.9.0: this one's pin is newer, so up upgrades it.
  cloud.kube().merge_patch(
      kController, {{"metadata", {{"annotations", {{"kinetic.dev/jobset-version", "v0.9.0"}}}}}});
  auto upgrade = up();
  ASSERT_EQ(upgrade.exit_code, 0) << upgrade.err;
  EXPECT_NE(upgrade.err.find("upgraded from v0.9.0"), std::string::npos) << upgrade.err;
  EXPECT_EQ((*cloud.kube().object(kController))["metadata"]["annotations"].value(
                "kinetic.dev/jobset-version", ""),
            "v0.10.1");
}

// A cluster of single-host pools never needs JobSet: `up` reads no release at all (here the
// release is an address nothing answers at, as GitHub is from a closed network), installs
// nothing, and a plain `up` again leaves it so. The first slice pool brings it.
TEST(GkeJobSetInstall, ASingleHostClusterNeverReadsTheRelease) {
  fakes::FakeCloud cloud;
  Sandbox sb;
  auto proj = sb.project("proj");
  auto env = cloud.client_env();
  env["KINETIC_JOBSET_MANIFESTS"] = "http://127.0.0.1:9/unreachable/manifests.yaml";
  auto first = sb.run(kGkeUp, proj, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.err.find("jobset"), std::string::npos) << first.err;
  EXPECT_FALSE(cloud.kube().object(kCrd));
  auto again = sb.run({"up"}, proj, env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_FALSE(cloud.kube().object(kCrd));

  // pool add of a slice needs JobSet: the unreachable release is an error naming the way out,
  // and with the release at hand the controller comes up.
  auto offline = sb.run({"pool", "add", "--accelerator", "v5litepod-16"}, proj, env);
  EXPECT_EQ(offline.exit_code, 1) << offline.err;
  EXPECT_NE(offline.err.find("pass --jobset-manifests FILE"), std::string::npos) << offline.err;
  auto added = sb.run({"pool", "add", "--accelerator", "v5litepod-16"}, proj, cloud.client_env());
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_NE(added.err.find("jobset v0.10.1 (jobset-system): installed"), std::string::npos)
      << added.err;
  EXPECT_TRUE(cloud.kube().object(kCrd));
}

// A slice on a cluster without the JobSet API (a pool made by hand, or JobSet removed): the run
// is refused before anything is left behind, naming the `up` that installs it. The run does not
// install it itself: a CRD and a cluster-wide controller are provisioning, which `up` does, and
// a run needs no cluster-admin rights or download.
TEST(GkeJobSetInstall, ASliceRunWithoutJobSetNamesTheUpThatInstallsIt) {
  fakes::FakeCloud cloud;
  Sandbox sb;
  auto proj = sb.project("proj");
  auto env = cloud.client_env();
  ASSERT_EQ(sb.run(kGkeUp, proj, env).exit_code, 0);
  // The slice pool without JobSet: a `pool add` whose release could not be read.
  auto offline = env;
  offline["KINETIC_JOBSET_MANIFESTS"] = "/nonexistent/manifests.yaml";
  auto pool = sb.run({"pool", "add", "--accelerator", "v5litepod-16"}, proj, offline);
  ASSERT_EQ(pool.exit_code, 1) << pool.err;
  ASSERT_FALSE(cloud.kube().object(kCrd));
  sb.write("proj/t.py", "print('ran')\n");
  auto r = sb.run({"run", "t.py", "-a", "v5litepod-16"}, proj, env);
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_NE(r.err.find("has no JobSet API; run `kinetic up --accelerator v5litepod-16`"),
            std::string::npos)
      << r.err;
}

// down deletes the cluster, and JobSet with it: nothing of the release is left, and an `up`
// after it installs JobSet again on the new cluster.
TEST(GkeJobSetInstall, DownLeavesNothingAndUpInstallsItAgain) {
  fakes::FakeCloud cloud;
  Sandbox sb;
  auto proj = sb.project("proj");
  auto env = cloud.client_env();
  ASSERT_EQ(sb.run(kSliceUp, proj, env).exit_code, 0);
  sb.write("proj/t.py", "print('ran')\n");
  ASSERT_EQ(sb.run({"run", "t.py", "-a", "v5litepod-1", "--detach"}, proj, env).exit_code, 0);
  auto down = sb.run({"down", "--yes"}, proj, env);
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_FALSE(cloud.kube().object(kCrd));
  EXPECT_FALSE(cloud.kube().object(kController));
  EXPECT_FALSE(cloud.kube().object("/api/v1/namespaces/jobset-system"));
  EXPECT_TRUE(cloud.kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic").empty());
  EXPECT_TRUE(cloud.kube().wait_idle(20000)) << "no pod process left";
  auto again = sb.run(kSliceUp, proj, env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("jobset v0.10.1 (jobset-system): installed"), std::string::npos)
      << again.err;
}

TEST(GkeJobSetInstall, AnUnreachableReleaseIsOneLineNamingTheWayOut) {
  fakes::FakeCloud cloud;
  Sandbox sb;
  auto env = cloud.client_env();
  env["KINETIC_JOBSET_MANIFESTS"] = "/nonexistent/manifests.yaml";
  auto r = sb.run(kSliceUp, sb.project("proj"), env);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot read the JobSet manifests /nonexistent/manifests.yaml"),
            std::string::npos)
      << r.err;
}

class GkeSlices : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    auto r = kin(
        {"up", "--project", "acme-ml", "--zone", "us-central1-a", "--accelerator", "v5litepod-16"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // The log a host > 0 recorded for ATTEMPT (host 0's is what the run streams).
  std::string worker_log(const std::string& job, int host, int attempt = 1) {
    std::string text;
    auto prefix = "jobs/" + job + "/results/workers/" + std::to_string(host) + "/attempts/" +
                  std::to_string(attempt) + "/log/";
    for (const auto& name : cloud_->gcs().object_names(kGkeBucket, prefix))
      text += cloud_->gcs().object_data(kGkeBucket, name).value_or("");
    return text;
  }
};

// What a slice is, before it costs anything: the catalog marks multi-host entries, and a pool
// for a slice says how many nodes it brings up and its price.
TEST_F(GkeSlices, TheCatalogAndPoolAddSayWhatASliceIs) {
  auto cat = kin({"accelerators"});
  ASSERT_EQ(cat.exit_code, 0);
  EXPECT_NE(cat.out.find("v5litepod-16\ttpu\t16\t4 (multi-host)\t"), std::string::npos) << cat.out;
  EXPECT_NE(cat.out.find("v5litepod-4\ttpu\t4\t1\t"), std::string::npos) << cat.out;
  auto json = kin({"accelerators", "-o", "json"});
  EXPECT_NE(json.out.find("\"multi_host\": true"), std::string::npos);
  auto pool = kin({"pool", "add", "--accelerator", "v6e-16"});
  ASSERT_EQ(pool.exit_code, 0) << pool.err;
  EXPECT_NE(pool.err.find("a slice is 4 nodes, $"), std::string::npos) << pool.err;
  EXPECT_NE(pool.err.find("/h on demand while up"), std::string::npos) << pool.err;
}

// Cold starts: the accelerator pools stream their images (`pool list -o wide` says so; the
// default pool is GKE's own), and `run -v 2` says when the pod got a node, when its container
// started and when its first line came.
TEST_F(GkeSlices, PoolsStreamImagesAndAVerboseRunSaysWhereItsColdStartWent) {
  auto pools = kin({"pool", "list", "-o", "wide"});
  ASSERT_EQ(pools.exit_code, 0) << pools.err;
  std::istringstream lines(pools.out);
  std::map<std::string, std::string> streaming;  // pool -> last column
  for (std::string line; std::getline(lines, line);)
    streaming[line.substr(0, line.find('\t'))] = line.substr(line.rfind('\t') + 1);
  EXPECT_EQ(streaming["NAME"], "IMAGE STREAMING");
  EXPECT_EQ(streaming["v5litepod-16"], "on") << pools.out;
  EXPECT_EQ(streaming["v5litepod-1"], "on") << pools.out;
  EXPECT_EQ(streaming["default-pool"], "off") << pools.out;
  auto json = kin({"pool", "list", "-o", "json"});
  EXPECT_NE(json.out.find("\"image_streaming\": true"), std::string::npos) << json.out;

  auto r = kin({"run", "train.py", "-a", "v5litepod-16", "-v", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.err.find("kinetic: cold start: node after ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  EXPECT_NE(line.find(", image pulled and started after "), std::string::npos) << line;
  EXPECT_NE(line.find(", first log line after "), std::string::npos) << line;
  EXPECT_EQ(line.find('?'), std::string::npos) << "every step measured: " << line;
  EXPECT_EQ(kin({"run", "train.py", "-a", "v5litepod-16"}).err.find("cold start"),
            std::string::npos)
      << "only with -v 2";
}

// Every host runs, with TPU_WORKER_ID and TPU_WORKER_HOSTNAMES as GKE's webhook injects them and
// the coordinator jax.distributed.initialize() reads: host 0's output streams.
TEST_F(GkeSlices, AMultiHostRunSpansTheSliceWithTheEnvironmentJaxExpects) {
  sb.write("proj/hosts.py",
           "import os\n"
           "print('host', os.environ['TPU_WORKER_ID'], 'of', "
           "len(os.environ['TPU_WORKER_HOSTNAMES'].split(',')), "
           "os.environ['TPU_WORKER_HOSTNAMES'].split(',')[0], "
           "os.environ['JAX_COORDINATOR_ADDRESS'], os.environ['KINETIC_SLICE_TOPOLOGY'], "
           "os.environ['KINETIC_SLICE_HOSTS'])\n");
  auto r = kin({"run", "hosts.py", "-a", "v5litepod-16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string job = job_id_in(r.err);
  const std::string host0 = "kinetic-" + job + "-slice-0-0.kinetic-" + job;
  EXPECT_NE(r.out.find("host 0 of 4 " + host0 + " " + host0 + ":8476 4x4 4\n"), std::string::npos)
      << r.out;
  for (int host = 1; host < 4; ++host)
    EXPECT_NE(worker_log(job, host).find("host " + std::to_string(host) + " of 4 " + host0),
              std::string::npos)
        << "host " << host << ": " << worker_log(job, host);
}

// --all-hosts: every host's lines, prefixed, live on `run` and from the record on `logs`.
TEST_F(GkeSlices, AllHostsShowsEveryHostsLinesLiveAndFromTheRecord) {
  sb.write("proj/each.py",
           "import os\n"
           "host = os.environ['TPU_WORKER_ID']\n"
           "for step in range(3):\n"
           "    print('host', host, 'step', step, flush=True)\n");
  auto r = kin({"run", "each.py", "-a", "v5litepod-16", "--all-hosts"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int host = 0; host < 4; ++host)
    for (int step = 0; step < 3; ++step) {
      const std::string line = "[host " + std::to_string(host) + "] host " + std::to_string(host) +
                               " step " + std::to_string(step) + "\n";
      EXPECT_NE(r.out.find(line), std::string::npos) << line << " in:\n" << r.out;
    }
  const std::string job = job_id_in(r.err);

  auto logs = kin({"logs", "--all-hosts", job});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("[host 3] host 3 step 2\n"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("[host 0] host 0 step 0\n"), std::string::npos) << logs.out;
  auto lead = kin({"logs", job});
  EXPECT_EQ(lead.out, "host 0 step 0\nhost 0 step 1\nhost 0 step 2\n") << "default: host 0";
}

// One host's node is preempted: the whole slice restarts (not that host alone), without counting
// against --retries (none here), and every host resumes from its own checkpoint.
// `logs -f --all-hosts --since T`: every host's stream starts at T, not host 0's alone.
TEST_F(GkeSlices, LogsSinceAppliesToEveryHostOfTheSlice) {
  sb.write("proj/talk.py",
           "import os, time\n"
           "print('host', os.environ['TPU_WORKER_ID'], 'early', flush=True)\n"
           "for _ in range(1200):  # until cancelled; a minute at most\n"
           "    time.sleep(0.05)\n");
  auto d = kin({"run", "talk.py", "-a", "v5litepod-16", "--detach"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string id = first_line(d.out);
  ASSERT_TRUE(eventually([&] {
    const std::string all = kin({"logs", "--all-hosts", id}).out;
    for (int host = 0; host < 4; ++host)
      if (all.find("host " + std::to_string(host) + " early") == std::string::npos) return false;
    return true;
  }));
  cloud_->kube().reset_counters();
  const std::string log_route = "GET /api/v1/namespaces/{ns}/pods/{name}/log";
  int follower = sb.spawn({"logs", "-f", "--all-hosts", "--since", "2099-01-01T00:00:00Z", id},
                          proj, out, err, env());
  // Every host's stream asked for (the lines it would send come with the answer) ...
  ASSERT_TRUE(eventually([&] { return cloud_->kube().request_counts()[log_route] >= 4; }));
  // ... and only then the job ends: a line any stream sent is printed before the follower exits.
  ASSERT_EQ(kin({"cancel", id}).exit_code, 0);
  Sandbox::wait(follower);
  EXPECT_EQ(slurp(out).find("early"), std::string::npos) << slurp(out);
}

TEST_F(GkeSlices, APreemptedHostRestartsTheWholeSliceWithoutCountingAsARetry) {
  sb.write("proj/long.py",
           "import os, sys, time\n"
           "host = os.environ['TPU_WORKER_ID']\n"
           "mark = os.path.join(os.environ['KINETIC_CHECKPOINT_DIR'], 'step')\n"
           "if os.path.exists(mark):\n"
           "    print('host', host, 'resumed at', open(mark).read(), flush=True)\n"
           "    sys.exit(0)\n"
           "open(mark, 'w').write('step-3')\n"
           "print('host', host, 'working', flush=True)\n"
           "for _ in range(1200):  # until preempted; a minute at most, never a hang\n"
           "    time.sleep(0.05)\n"
           "sys.exit(9)\n");
  int pid = spawn_until_output({"run", "long.py", "-a", "v5litepod-16", "--all-hosts", "--keep"},
                               "[host 1] host 1 working\n");
  ASSERT_GT(pid, 0);
  // Every host has saved its checkpoint before the preemption: the order the test needs.
  ASSERT_TRUE(eventually([&] {
    for (int host = 0; host < 4; ++host) {
      const std::string h = std::to_string(host);
      if (slurp(out).find("[host " + h + "] host " + h + " working\n") == std::string::npos)
        return false;
    }
    return true;
  })) << slurp(out);
  auto host1 = cloud_->kube().pod_names(
      "default", "app.kubernetes.io/managed-by=kinetic,batch.kubernetes.io/job-completion-index=1");
  ASSERT_EQ(host1.size(), 1u);
  ASSERT_TRUE(cloud_->kube().preempt_node_of("default", host1.front()));
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  for (int host = 0; host < 4; ++host) {
    const std::string h = std::to_string(host);
    EXPECT_NE(slurp(out).find("[host " + h + "] host " + h + " resumed at step-3\n"),
              std::string::npos)
        << slurp(out);
  }
  const std::string job = job_id_in(slurp(err));
  auto js = cloud_->kube().object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/kinetic-" + job);
  ASSERT_TRUE(js);
  EXPECT_EQ((*js)["status"].value("restarts", 0), 1) << js->dump();
  EXPECT_EQ((*js)["status"].value("restartsCountTowardsMax", 0), 0) << "a preemption is no retry";
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// Host 2 fails: the others are stopped, the run exits with host 2's code, names it and shows its
// last lines; with no retries the slice is not restarted.
TEST_F(GkeSlices, AFailingHostFailsTheSliceNamesItselfAndStopsTheOthers) {
  sb.write("proj/fail2.py",
           "import os, sys, time\n"
           "if os.environ['TPU_WORKER_ID'] == '2':\n"
           "    print('host 2 giving up', flush=True)\n"
           "    sys.exit(3)\n"
           "time.sleep(600)\n");
  auto r = kin({"run", "fail2.py", "-a", "v5litepod-16"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("host 2 of 4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("host 2 giving up"), std::string::npos) << "its last lines: " << r.err;
  EXPECT_TRUE(cloud_->kube().wait_idle(20000)) << "the other hosts were stopped";
}

// --retries 1: host 0 saves a checkpoint, then fails its first attempt; the whole slice restarts
// (the JobSet's second attempt runs every host, not host 0 alone) and host 0 resumes from the
// checkpoint. --keep leaves the JobSet and its pods to look at.
TEST_F(GkeSlices, ARetryRestartsTheWholeSliceFromItsCheckpoint) {
  sb.write("proj/flaky.py",
           "import os, sys\n"
           "host = os.environ['TPU_WORKER_ID']\n"
           "print('host', host, 'started', flush=True)\n"
           "if host == '0':\n"
           "    ckpt = os.path.join(os.environ['KINETIC_CHECKPOINT_DIR'], 'step')\n"
           "    if os.path.exists(ckpt):\n"
           "        print('host 0 resumed from', open(ckpt).read(), flush=True)\n"
           "    else:\n"
           "        open(ckpt, 'w').write('step-7')\n"
           "        sys.exit(5)\n");
  auto r = kin({"run", "flaky.py", "-a", "v5litepod-16", "--retries", "1", "--keep"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string job = job_id_in(r.err);
  EXPECT_NE(r.out.find("host 0 resumed from step-7"), std::string::npos) << r.out;
  auto js = cloud_->kube().object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/kinetic-" + job);
  ASSERT_TRUE(js);
  EXPECT_EQ((*js)["status"].value("restarts", 0), 1);
  EXPECT_EQ((*js)["status"].value("terminalState", ""), "Completed");
  auto second = cloud_->kube().pod_names(
      "default", "kinetic.dev/job=" + job + ",jobset.sigs.k8s.io/restart-attempt=1");
  EXPECT_EQ(second.size(), 4u) << "every host ran again with the slice";
  for (int host = 1; host < 4; ++host) {
    std::string logs = worker_log(job, host, 1) + worker_log(job, host, 2);
    EXPECT_NE(logs.find("host " + std::to_string(host) + " started"), std::string::npos)
        << "host " << host << " recorded its run";
  }
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// --timeout with --retries on a slice: the deadline is the run's, not each restart's. When it
// passes every host's bootstrap stops its job and ends the run: exit 124, and the JobSet fails
// with no restart. (Before issue #27 each host was stopped by the child Job's own deadline, which
// matched no failure-policy rule, so JobSet restarted the slice with a fresh deadline, twice.)
TEST_F(GkeSlices, ASliceStopsAtTheRunsDeadlineWithoutARestart) {
  sb.write("proj/forever.py",
           "import os, time\n"
           "print('host', os.environ['TPU_WORKER_ID'], 'working', flush=True)\n"
           "for _ in range(1200):  # a minute at most, never a hang\n"
           "    time.sleep(0.05)\n");
  auto r = kin(
      {"run", "forever.py", "-a", "v5litepod-16", "--timeout", "2s", "--retries", "2", "--keep"});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_NE(r.err.find("timed out after 2s (--timeout)"), std::string::npos) << r.err;
  const std::string job = job_id_in(r.err);
  auto js = cloud_->kube().object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/kinetic-" + job);
  ASSERT_TRUE(js);
  EXPECT_EQ((*js)["status"].value("restarts", 0), 0) << js->dump();
  EXPECT_EQ((*js)["status"].value("terminalState", ""), "Failed") << js->dump();
  auto st = nlohmann::json::parse(slurp(proj / "kinetic-out" / job / "status.json"));
  EXPECT_EQ(st["state"], "timeout") << st.dump();
  EXPECT_EQ(st["attempts"], 1) << st.dump();
  // The JobSet failed as a run that is over; status reads the verdict from the record.
  auto shown = kin({"status", job, "-o", "json"});
  EXPECT_EQ(nlohmann::json::parse(shown.out).value("state", ""), "timeout") << shown.out;
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// A slice whose pods never start (no v6e-16 pool) has no bootstrap to stop it: its child Job's
// own deadline fails it, and the JobSet's DeadlineExceeded rule fails the JobSet instead of
// restarting it (JobSet's default for a failure no rule matches) with a fresh deadline.
TEST_F(GkeSlices, ASlicePendingPastItsDeadlineIsNotRestarted) {
  sb.write("proj/forever.py", "print('never scheduled')\n");
  auto r = kin({"run", "forever.py", "-a", "v6e-16", "--timeout", "1s", "--retries", "2", "--keep"},
               {{"KINETIC_SCHEDULING_GRACE_SECONDS", "3600"}});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_NE(r.err.find("timed out after 1s (--timeout)"), std::string::npos) << r.err;
  const std::string job = job_id_in(r.err);
  auto js = cloud_->kube().object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/kinetic-" + job);
  ASSERT_TRUE(js);
  EXPECT_EQ((*js)["status"].value("restarts", 0), 0) << js->dump();
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

}  // namespace
}  // namespace kinetic::test
