// Multislice (issue #32, docs/multihost.md "Multislice"): `up --slices 2` makes a v5litepod-16
// pool a slice, and `run --slices 2` spans both: one JobSet replica a slice, each slice alone on
// its pool, every host with the environment of its slice and GKE's MEGASCALE_* variables, one
// fate for the whole run, and every price twice one slice's.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

class GkeMultislice : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    auto r = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--accelerator",
                  "v5litepod-16", "--slices", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    up_err = r.err;
  }
  // The node pool the pod NAME runs on.
  std::string pool_of(const std::string& pod) {
    auto p = cloud_->kube().object("/api/v1/namespaces/default/pods/" + pod);
    if (!p) return "";
    auto node =
        cloud_->kube().object("/api/v1/nodes/" + (*p)["spec"].value("nodeName", std::string()));
    if (!node) return "";
    return (*node)["metadata"]["labels"].value("cloud.google.com/gke-nodepool", "");
  }
  std::string up_err;
};

// A pool a slice, each saying which slice it is and what it costs.
TEST_F(GkeMultislice, UpMakesAPoolASlice) {
  EXPECT_NE(up_err.find("node pool v5litepod-16 (slice 1 of 2, ct5lp-hightpu-4t"),
            std::string::npos)
      << up_err;
  EXPECT_NE(up_err.find("node pool v5litepod-16-slice-2 (slice 2 of 2, ct5lp-hightpu-4t"),
            std::string::npos)
      << up_err;
  auto pools = kin({"pool", "list"});
  EXPECT_NE(pools.out.find("v5litepod-16-slice-2\t"), std::string::npos) << pools.out;
}

// Every host of both slices runs with its slice's TPU_* variables (TPU_WORKER_HOSTNAMES names its
// own slice's hosts), GKE's MEGASCALE_* (the same coordinator everywhere, its slice's id) and
// JAX's coordinator; --all-hosts prefixes each line with its slice and host; each slice ran
// alone on a pool of its own.
TEST_F(GkeMultislice, TwoSlicesRunWithTheEnvironmentOfTheirSlice) {
  sb.write("proj/hosts.py",
           "import os\n"
           "e = os.environ\n"
           "print('slice', e['MEGASCALE_SLICE_ID'], 'of', e['MEGASCALE_NUM_SLICES'],\n"
           "      'worker', e['TPU_WORKER_ID'], 'first', e['TPU_WORKER_HOSTNAMES'].split(',')[0],\n"
           "      'megascale', e['MEGASCALE_COORDINATOR_ADDRESS'],\n"
           "      'jax', e['JAX_COORDINATOR_ADDRESS'], 'kinetic', e['KINETIC_SLICE_ID'],\n"
           "      e['KINETIC_SLICES'], flush=True)\n");
  auto r = kin({"run", "hosts.py", "-a", "v5litepod-16", "--slices", "2", "--all-hosts", "--keep"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string job = job_id_in(r.err);
  const std::string name = "kinetic-" + job;
  const std::string coordinator = name + "-slice-0-0." + name;
  for (int slice = 0; slice < 2; ++slice)
    for (int host = 0; host < 4; ++host) {
      const std::string s = std::to_string(slice), h = std::to_string(host);
      const std::string line = "[slice " + s + " host " + h + "] slice " + s + " of 2 worker " + h +
                               " first " + name + "-slice-" + s + "-0." + name + " megascale " +
                               coordinator + " jax " + coordinator + ":8476 kinetic " + s + " 2\n";
      EXPECT_NE(r.out.find(line), std::string::npos) << line << " in:\n" << r.out;
    }

  // The JobSet as JobSet makes it: two child Jobs, kinetic-ID-slice-S, each labelled with its
  // index; each slice's pods on one pool, the two slices on two.
  std::set<std::string> pools;
  for (int slice = 0; slice < 2; ++slice) {
    const std::string s = std::to_string(slice);
    auto child =
        cloud_->kube().object("/apis/batch/v1/namespaces/default/jobs/" + name + "-slice-" + s);
    ASSERT_TRUE(child) << "child Job " << s;
    EXPECT_EQ((*child)["metadata"]["labels"].value("jobset.sigs.k8s.io/job-index", ""), s);
    EXPECT_EQ((*child)["metadata"]["labels"].value("jobset.sigs.k8s.io/replicatedjob-replicas", ""),
              "2");
    std::set<std::string> slice_pools;
    for (const auto& pod : cloud_->kube().pod_names(
             "default", "kinetic.dev/job=" + job + ",jobset.sigs.k8s.io/job-index=" + s))
      slice_pools.insert(pool_of(pod));
    EXPECT_EQ(slice_pools.size(), 1u) << "slice " << s << " spans one pool";
    pools.insert(slice_pools.begin(), slice_pools.end());
  }
  EXPECT_EQ(pools, (std::set<std::string>{"v5litepod-16", "v5litepod-16-slice-2"}));

  // The record has every host's log: `logs --all-hosts` after the run, host by host.
  auto logs = kin({"logs", "--all-hosts", job});
  EXPECT_NE(logs.out.find("[slice 1 host 3] slice 1 of 2 worker 3"), std::string::npos) << logs.out;

  // `status` prices the run at its two slices, from its record.
  double price = 0;
  const auto catalog = nlohmann::json::parse(kin({"accelerators", "-o", "json"}).out);
  for (const auto& a : catalog["accelerators"])
    if (a["name"] == "v5litepod-16") price = a["price_per_hour"];
  ASSERT_GT(price, 0);
  const auto list = nlohmann::json::parse(kin({"status", "-o", "json"}).out);
  bool seen = false;
  for (const auto& j : list["jobs"]) {
    if (j["id"] != job) continue;
    seen = true;
    EXPECT_EQ(j.value("slices", 0), 2) << j.dump();
    EXPECT_NEAR(j["cost_usd"].get<double>(),
                2 * price * j["duration_seconds"].get<double>() / 3600.0, 1e-9)
        << j.dump();
  }
  EXPECT_TRUE(seen) << list.dump();
  const auto table = kin({"status"});
  EXPECT_NE(table.out.find("v5litepod-16 x2"), std::string::npos) << table.out;
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// One fate: slice 1's host 2 fails, every host of both slices is stopped, the run exits with
// its code and names it; with no retries nothing restarts.
TEST_F(GkeMultislice, AFailingSliceStopsTheWholeRun) {
  sb.write("proj/fail.py",
           "import os, sys, time\n"
           "if os.environ['KINETIC_SLICE_ID'] == '1' and os.environ['TPU_WORKER_ID'] == '2':\n"
           "    print('slice 1 host 2 giving up', flush=True)\n"
           "    sys.exit(3)\n"
           "for _ in range(1200):  # a minute at most, never a hang\n"
           "    time.sleep(0.05)\n");
  auto r = kin({"run", "fail.py", "-a", "v5litepod-16", "--slices", "2", "--keep"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("slice 1 host 2 of 2 slices"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("slice 1 host 2 giving up"), std::string::npos) << r.err;
  EXPECT_TRUE(cloud_->kube().wait_idle(20000)) << "every host of both slices was stopped";
  const std::string job = job_id_in(r.err);
  auto js = cloud_->kube().object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/kinetic-" + job);
  ASSERT_TRUE(js);
  EXPECT_EQ((*js)["status"].value("terminalState", ""), "Failed") << js->dump();
  EXPECT_EQ((*js)["status"].value("restarts", 0), 0) << js->dump();
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// --retries 1: slice 1's host 0 saves a checkpoint, then fails the first attempt; the whole
// JobSet restarts, every host of both slices runs again, and that host (host 4 of the run) resumes
// from its own checkpoint, not another slice's.
TEST_F(GkeMultislice, ARetryRestartsEverySliceAndEachHostResumesItsOwnCheckpoint) {
  sb.write("proj/flaky.py",
           "import os, sys\n"
           "e = os.environ\n"
           "me = e['KINETIC_SLICE_ID'] + '/' + e['TPU_WORKER_ID']\n"
           "ckpt = os.path.join(e['KINETIC_CHECKPOINT_DIR'], 'step')\n"
           "if os.path.exists(ckpt):\n"
           "    print(me, 'resumed from', open(ckpt).read(), flush=True)\n"
           "elif me == '1/0':\n"
           "    open(ckpt, 'w').write('step-of-' + me)\n"
           "    sys.exit(5)\n");
  auto r = kin({"run", "flaky.py", "-a", "v5litepod-16", "--slices", "2", "--retries", "1",
                "--all-hosts", "--keep"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[slice 1 host 0] 1/0 resumed from step-of-1/0\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("] 0/0 resumed"), std::string::npos) << "no other host has its checkpoint";
  const std::string job = job_id_in(r.err);
  auto js = cloud_->kube().object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/kinetic-" + job);
  ASSERT_TRUE(js);
  EXPECT_EQ((*js)["status"].value("restarts", 0), 1) << js->dump();
  EXPECT_EQ((*js)["status"].value("terminalState", ""), "Completed") << js->dump();
  EXPECT_EQ(
      cloud_->kube()
          .pod_names("default", "kinetic.dev/job=" + job + ",jobset.sigs.k8s.io/restart-attempt=1")
          .size(),
      8u)
      << "every host of both slices ran again";
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// A pipeline step takes slices as `run --slices` does.
TEST_F(GkeMultislice, APipelineStepRunsOnItsSlices) {
  sb.write("proj/count.py",
           "import os\nprint('slices seen', os.environ['MEGASCALE_NUM_SLICES'], flush=True)\n");
  sb.write("proj/kinetic.yaml",
           "steps:\n  train: {file: count.py, accelerator: v5litepod-16, slices: 2}\n");
  auto r = kin({"pipeline", "run"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("slices seen 2"), std::string::npos) << r.out << r.err;
  const auto list = nlohmann::json::parse(kin({"status", "-o", "json"}).out);
  int multislice = 0;
  for (const auto& j : list["jobs"]) multislice += j.value("slices", 1) == 2 ? 1 : 0;
  EXPECT_EQ(multislice, 1) << list.dump();
}

// Multislice joins multi-host TPU slices (GKE supports no other): a GPU, the CPU or a
// single-host TPU is refused in one line naming the flag and the way out, before anything runs.
TEST_F(GkeMultislice, OnlyMultiHostTpusTakeSlices) {
  for (const char* accel : {"l4", "cpu", "v5litepod-4"}) {
    auto r = kin({"run", "train.py", "-a", accel, "--slices", "2"});
    EXPECT_EQ(r.exit_code, 2) << accel << ": " << r.err;
    EXPECT_NE(r.err.find("--slices 2 joins slices of a multi-host TPU"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("drop --slices"), std::string::npos) << r.err;
  }
  auto zero = kin({"run", "train.py", "-a", "v5litepod-16", "--slices", "0"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  auto pool = kin({"pool", "add", "--accelerator", "l4", "--slices", "2"});
  EXPECT_EQ(pool.exit_code, 2) << pool.err;
  EXPECT_NE(pool.err.find("--slices 2 makes a pool per slice of a multi-host TPU"),
            std::string::npos)
      << pool.err;
  EXPECT_TRUE(cloud_->kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic").empty());
}

// Three slices on two pools would hold both while the third waits forever: refused before
// anything is submitted, naming the `pool add` that adds the missing pool, which then lets it run.
TEST_F(GkeMultislice, MoreSlicesThanPoolsIsRefusedNamingThePoolAdd) {
  auto r = kin({"run", "train.py", "-a", "v5litepod-16", "--slices", "3"});
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_NE(r.err.find("3 slices of v5litepod-16 take 3 node pools of it, one a slice, and the "
                       "cluster has 2; add them with `kinetic pool add --accelerator "
                       "v5litepod-16 --slices 3`"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(cloud_->kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic").empty());
  auto add = kin({"pool", "add", "--accelerator", "v5litepod-16", "--slices", "3"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_NE(add.err.find("node pool v5litepod-16: exists"), std::string::npos) << add.err;
  EXPECT_NE(add.err.find("node pool v5litepod-16-slice-3 (slice 3 of 3"), std::string::npos)
      << add.err;
  EXPECT_EQ(kin({"run", "train.py", "-a", "v5litepod-16", "--slices", "3"}).exit_code, 0);
}

// The preview prices the run at its two slices, the budget buys half the time, and the plan
// says it needs a pool a slice.
TEST_F(GkeMultislice, ThePreviewPricesEverySlice) {
  auto price_in = [](const std::string& text) {
    const auto at = text.find("price:");
    const auto usd = text.find('$', at);
    return std::stod(text.substr(usd + 1, text.find('/', usd) - usd - 1));
  };
  auto one = kin({"run", "train.py", "-a", "v5litepod-16", "--dry-run", "--max-cost", "10"});
  auto two = kin(
      {"run", "train.py", "-a", "v5litepod-16", "--slices", "2", "--dry-run", "--max-cost", "10"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_DOUBLE_EQ(price_in(two.out), 2 * price_in(one.out)) << one.out << two.out;
  EXPECT_NE(two.out.find("for its 2 slices"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("2 slices of v5litepod-16 (tpu"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("one node pool each"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find(" of 2 slices of v5litepod-16 at $"), std::string::npos) << two.out;

  auto yaml =
      kin({"run", "train.py", "-a", "v5litepod-16", "--slices", "2", "--dry-run", "-o", "json"});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_NE(yaml.out.find("\"replicas\": 2"), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("\"kinetic.dev/slices\": \"2\""), std::string::npos) << yaml.out;
}

}  // namespace
}  // namespace kinetic::test
