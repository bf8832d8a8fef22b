// The gke backend end to end: the kinetic binary against the whole fake cloud (GCS, Service
// Usage, GKE, Cloud Build, Artifact Registry and a Kubernetes API whose pods are local
// processes running the real in-pod bootstrap). up -> run (success, failure, timeout, no pool,
// image pull, build failure, cached second run) -> logs -f -> status -> cancel -> cleanup -> down.
#include <gtest/gtest.h>
#include <signal.h>

#include <set>

#include <nlohmann/json.hpp>

#include "gke_fixture.h"
#include "job/catalog.h"
#include "render/output.h"
#include "schema_check.h"

namespace kinetic::test {
namespace {

using fakes::FakeCloud;
using fakes::FakeCloudOptions;

const std::vector<std::string>& kUp = kGkeUp;

int uploads(FakeCloud& cloud) {
  auto c = cloud.gcs().request_counts();
  return c["upload.media"] + c["upload.multipart"] + c["upload.resumable.start"];
}

class GkeEndToEnd : public GkeFixture {
 protected:
  void SetUp() override {
    sb.write("proj/fail.py", "print('about to fail')\nraise SystemExit(3)\n");
    GkeFixture::SetUp();
  }
};

TEST(GkeUpDown, UpAndDownEachTwice) {
  FakeCloud cloud;
  Sandbox sb;
  auto env = cloud.client_env();

  auto first = sb.run(kUp, {}, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  for (const char* want :
       {"service container.googleapis.com: enabled", "cluster kinetic (us-central1-a",
        "node pool v5litepod-1", "repository us-central1-docker.pkg.dev/acme-ml/kinetic: created",
        "bucket gs://acme-ml-kinetic-kinetic: created"})
    EXPECT_NE(first.err.find(want), std::string::npos) << want << "\n" << first.err;
  EXPECT_TRUE(cloud.gcp().cluster("acme-ml", "us-central1-a", "kinetic").has_value());
  EXPECT_TRUE(cloud.gcs().has_bucket("acme-ml-kinetic-kinetic"));
  // What it costs (docs/cost.md): the control plane and the default pool's e2-standard-4 node;
  // an accelerator pool's node price while one is up.
  EXPECT_NE(first.err.find("node pool v5litepod-1 (ct5lp-hightpu-1t, 1x1; $1.20/h per node on "
                           "demand while up): created"),
            std::string::npos)
      << first.err;
  EXPECT_NE(first.err.find("kinetic up: the cluster costs $0.23/h (the control plane and 1 node) "
                           "while it exists"),
            std::string::npos)
      << first.err;
  // The job pods (Workload Identity, namespace default, service account kinetic-job) may use
  // the bucket; the namespace's other pods (service account default) may not.
  auto policy = cloud.gcs().bucket_iam_policy("acme-ml-kinetic-kinetic");
  ASSERT_TRUE(policy.has_value());
  EXPECT_NE(policy->dump().find("acme-ml.svc.id.goog/subject/ns/default/sa/kinetic-job"),
            std::string::npos)
      << policy->dump();
  EXPECT_EQ(policy->dump().find("/sa/default"), std::string::npos) << policy->dump();
  // The context is written and current.
  auto ctx = sb.run({"config", "get-contexts", "-o", "json"}, {}, env);
  EXPECT_NE(ctx.out.find("acme-ml"), std::string::npos) << ctx.out;

  auto second = sb.run(kUp, {}, env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err.find(": created"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("everything already existed"), std::string::npos) << second.err;

  auto pools = sb.run({"pool", "list", "-o", "json"}, {}, env);
  ASSERT_EQ(pools.exit_code, 0) << pools.err;
  const auto pl = nlohmann::json::parse(pools.out);
  expect_schema("PoolList", pl);
  bool found = false;
  for (const auto& p : pl["pools"]) found = found || p["accelerator"] == "v5litepod-1";
  EXPECT_TRUE(found) << pools.out;

  auto refused = sb.run({"down"}, {}, env);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;

  auto down = sb.run({"down", "--yes"}, {}, env);
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.err.find("kinetic down: deleted 4 resources; $0.23/h (the control plane and 1 "
                          "node) stops"),
            std::string::npos)
      << down.err;
  EXPECT_NE(down.err.find("cluster kinetic (with its node pools): deleted"), std::string::npos)
      << down.err;
  EXPECT_NE(down.err.find("bucket gs://acme-ml-kinetic-kinetic: deleted"), std::string::npos);
  EXPECT_FALSE(cloud.gcp().cluster("acme-ml", "us-central1-a", "kinetic").has_value());
  EXPECT_FALSE(cloud.gcs().has_bucket("acme-ml-kinetic-kinetic"));

  auto again = sb.run({"down", "--yes"}, {}, env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("nothing to delete"), std::string::npos) << again.err;
}

// The nodes run as kinetic-nodes, with GKE's minimal node role, image pulls and image streaming
// and nothing else, on every pool kinetic makes; image streaming's API is on (the fake GKE
// refuses a gcfsConfig pool without it, and a pool naming an account IAM does not have).
// down takes all of it back.
TEST(GkeUpDown, NodesRunAsAnAccountOfTheirOwnHoldingTheLeastTheyNeed) {
  FakeCloud cloud;
  Sandbox sb;
  auto env = cloud.client_env();
  const std::string email = "kinetic-nodes@acme-ml.iam.gserviceaccount.com";
  const std::string member = "serviceAccount:" + email;
  const std::vector<std::string> roles = {"roles/container.defaultNodeServiceAccount",
                                          "roles/artifactregistry.reader",
                                          "roles/serviceusage.serviceUsageConsumer"};
  auto held = [&] {
    std::set<std::string> out;
    const auto policy = cloud.gcp().project_iam_policy("acme-ml");
    for (const auto& b : policy.value("bindings", nlohmann::json::array()))
      for (const auto& m : b["members"])
        if (m == member) out.insert(b["role"].get<std::string>());
    return out;
  };

  auto up = sb.run(kUp, {}, env);
  ASSERT_EQ(up.exit_code, 0) << up.err;
  for (const std::string& want :
       std::vector<std::string>{"service containerfilesystem.googleapis.com: enabled",
                                "node service account " + email + ": created", "node access"})
    EXPECT_NE(up.err.find(want), std::string::npos) << want << "\n" << up.err;
  EXPECT_TRUE(cloud.gcp().service_account(email));
  EXPECT_EQ(held(), std::set<std::string>(roles.begin(), roles.end()));
  auto cluster = cloud.gcp().cluster("acme-ml", "us-central1-a", "kinetic");
  ASSERT_TRUE(cluster);
  ASSERT_EQ((*cluster)["nodePools"].size(), 2u);
  for (const auto& pool : (*cluster)["nodePools"])
    EXPECT_EQ(pool["config"]["serviceAccount"], email) << pool["name"];
  auto added = sb.run({"pool", "add", "--accelerator", "v5litepod-4"}, {}, env);
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(added.err.find("node service account"), std::string::npos) << added.err;
  cluster = cloud.gcp().cluster("acme-ml", "us-central1-a", "kinetic");
  for (const auto& pool : (*cluster)["nodePools"])
    EXPECT_EQ(pool["config"]["serviceAccount"], email) << pool["name"];

  auto again = sb.run(kUp, {}, env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("node service account " + email + ": exists"), std::string::npos)
      << again.err;

  auto down = sb.run({"down", "--yes"}, {}, env);
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.err.find("node service account " + email + ": deleted"), std::string::npos)
      << down.err;
  EXPECT_FALSE(cloud.gcp().service_account(email));
  EXPECT_TRUE(held().empty());
}

TEST(GkeUpDown, RegionalClusterWithRegionalRegistryAndBucket) {
  FakeCloud cloud;
  Sandbox sb;
  auto env = cloud.client_env();
  auto r =
      sb.run({"up", "--project", "p2", "--region", "europe-west4", "--accelerator", "l4"}, {}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(cloud.gcp().cluster("p2", "europe-west4", "kinetic").has_value());
  EXPECT_NE(r.err.find("repository europe-west4-docker.pkg.dev/p2/kinetic: created"),
            std::string::npos)
      << r.err;
  auto view = sb.run({"config", "view", "-o", "json"}, {}, env);
  EXPECT_NE(view.out.find("europe-west4"), std::string::npos) << view.out;
  auto down = sb.run({"down", "--yes"}, {}, env);
  EXPECT_EQ(down.exit_code, 0) << down.err;
  EXPECT_FALSE(cloud.gcp().cluster("p2", "europe-west4", "kinetic").has_value());
}

TEST(GkeUpDown, DefaultPoolFallsBackToAMachineTypeTheZoneOffers) {
  FakeCloudOptions o;
  o.zone_machine_types["us-central2-b"] = {"n2-standard-4", "ct4p-hightpu-4t"};
  FakeCloud cloud(o);
  Sandbox sb;
  auto r = sb.run({"up", "--project", "p1", "--zone", "us-central2-b"}, {}, cloud.client_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("default pool n2-standard-4"), std::string::npos) << r.err;
}

TEST_F(GkeEndToEnd, RunStreamsCollectsAndCachesTheImageAndContext) {
  auto r = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--", "--epochs", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("training --epochs 3"), std::string::npos) << r.out;
  std::string id = job_id_in(r.err);
  ASSERT_FALSE(id.empty()) << r.err;
  EXPECT_EQ(slurp(proj / "kinetic-out" / id / "model.txt"), "weights\n");
  auto st = nlohmann::json::parse(slurp(proj / "kinetic-out" / id / "status.json"));
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_EQ(st["exit_code"], 0);
  // Cleaned: no Job, no staging objects of the job.
  EXPECT_FALSE(
      cloud_->kube().object("/apis/batch/v1/namespaces/default/jobs/kinetic-" + id).has_value());

  // Unchanged requirements and context: no build, no context upload. What is uploaded is the
  // job's spec and its follower heartbeat (by kinetic) and, by the pod, its outputs.tar.gz,
  // status.json and its attempt's record (claimed, then final) and log part
  // (docs/run-record.md).
  const int builds = cloud_->gcp().builds_created();
  const int before = uploads(*cloud_);
  auto again = kin({"run", "train.py", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(cloud_->gcp().builds_created(), builds);
  EXPECT_EQ(uploads(*cloud_) - before, 7) << "the context or build source was uploaded again";
}

TEST_F(GkeEndToEnd, EnvValuesGoInASecretNeverInTheJobOrTheBucket) {
  sb.write("proj/secret.py", "import os\nprint('token is', os.environ['API_TOKEN'])\n");
  auto r = kin({"run", "secret.py", "--accelerator", "v5litepod-1", "--env",
                "API_TOKEN=s3cr3t-v4lue", "--keep"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("token is s3cr3t-v4lue"), std::string::npos) << r.out;
  std::string id = job_id_in(r.err);
  auto job = cloud_->kube().object("/apis/batch/v1/namespaces/default/jobs/kinetic-" + id);
  ASSERT_TRUE(job.has_value()) << "--keep keeps the Job";
  EXPECT_EQ(job->dump().find("s3cr3t"), std::string::npos) << job->dump();
  EXPECT_NE(job->dump().find("secretKeyRef"), std::string::npos);
  auto spec = cloud_->gcs().object_data("acme-ml-kinetic-kinetic", "jobs/" + id + "/spec.json");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->find("s3cr3t"), std::string::npos) << *spec;
  EXPECT_TRUE(
      cloud_->kube().object("/api/v1/namespaces/default/secrets/kinetic-" + id).has_value());
}

// In the pod, gcloud's and Google's control variables would redirect or re-credential the
// bootstrap: a wildcard capture leaves them out, and says so (issue #10 point 5).
TEST_F(GkeEndToEnd, AWildcardCaptureLeavesControlVariablesOut) {
  sb.write("proj/see.py",
           "import os\nprint('wandb', os.environ.get('WANDB_API_KEY'))\n"
           "print('project', os.environ.get('CLOUDSDK_CORE_PROJECT'))\n");
  auto r = kin({"run", "see.py", "-a", "v5litepod-1", "--capture-env", "*", "--keep"},
               {{"WANDB_API_KEY", "w-key"}, {"CLOUDSDK_CORE_PROJECT", "other-project"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wandb w-key"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("project None"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("left out CLOUDSDK_API_ENDPOINT_OVERRIDES_"), std::string::npos) << r.err;
  std::string id = job_id_in(r.err);
  auto secret = cloud_->kube().object("/api/v1/namespaces/default/secrets/kinetic-" + id);
  ASSERT_TRUE(secret.has_value());
  for (const char* field : {"data", "stringData"}) {
    if (!secret->contains(field)) continue;
    const nlohmann::json& values = (*secret)[field];
    for (const auto& [key, value] : values.items()) {
      EXPECT_FALSE(key.rfind("CLOUDSDK_", 0) == 0 || key == "STORAGE_EMULATOR_HOST" ||
                   key.rfind("KINETIC_", 0) == 0 || key == "GCE_METADATA_HOST")
          << key << " was captured";
    }
  }
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// --keep-last N keeps the latest records whole (the kept Job in the cluster and every object
// under jobs/ID/) and removes the rest's, workload and objects (docs/run-record.md).
TEST_F(GkeEndToEnd, CleanupKeepLastKeepsTheLatestRecordsWhole) {
  sb.write("proj/ok.py", "print('ok')\n");
  std::vector<std::string> ids;  // in the order they finished
  for (int i = 0; i < 2; ++i) {
    auto r = kin({"run", "ok.py", "--keep"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ids.push_back(job_id_in(r.err));
  }
  // Cleanup never touches a live job: both must have ended in the cluster, not only in the log.
  ASSERT_TRUE(eventually(
      [&] { return job_finished_in_cluster(ids[0]) && job_finished_in_cluster(ids[1]); }));
  auto c = kin({"cleanup", "--keep-last", "1", "-o", "json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::set<std::string> jobs, records;
  const nlohmann::json doc = nlohmann::json::parse(c.out);
  for (const auto& item : doc["items"]) {
    if (item["kind"] == "job") jobs.insert(item["name"].get<std::string>());
    const std::string name = item["name"].get<std::string>();
    if (const auto at = name.find("/jobs/"); at != std::string::npos)
      records.insert(name.substr(at + 6, name.find('/', at + 6) - at - 6));
  }
  EXPECT_EQ(jobs, (std::set<std::string>{ids[0]})) << c.out;
  EXPECT_EQ(records, (std::set<std::string>{ids[0]})) << c.out;
  EXPECT_EQ(kin({"status", ids[0]}).exit_code, 1);
  auto kept = kin({"logs", ids[1]});
  EXPECT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(kept.out, "ok\n");
  // -o wide says what the kept record holds in the bucket.
  uint64_t bytes = 0;
  for (const auto& name : cloud_->gcs().object_names(kGkeBucket, "jobs/" + ids[1] + "/"))
    bytes += cloud_->gcs().object_data(kGkeBucket, name)->size();
  auto wide = kin({"status", "-o", "wide"});
  EXPECT_NE(wide.out.find("\t" + format_bytes(bytes) + "\t"), std::string::npos) << wide.out;
}

// An --env value of any bytes reaches the job exactly (base64 in the Secret's data), and a
// context file whose name is not UTF-8 is shipped (issue #10 point 7).
TEST_F(GkeEndToEnd, BytesThatAreNotUtf8RunOnTheCluster) {
  sb.write("proj/see.py",
           "import os\nprint(os.environb[b'BLOB'].hex(), b'tr\\xfc.txt' in os.listdir(b'.'))\n");
  sb.write("proj/tr\xfc.txt", "x");
  auto r = kin({"run", "see.py", "-a", "v5litepod-1", "--env", "BLOB=\xfe\xff-v", "-v", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("feff2d76 True"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("/v8tdg"), std::string::npos) << "the trace showed the value in base64";
}

// -v 8 traces every request and reply in full, and users paste it into bug reports: a job's
// --env values (the Secret's stringData going out, its base64 data coming back) never show, on
// run, on a cleanup that reads live jobs' Secrets, or on the follow-up calls (issue #10 point 1).
TEST_F(GkeEndToEnd, AFullTraceNeverShowsEnvValues) {
  const std::string value = "tr4ce-s3cr3t-v4lue";
  const std::string base64 = "dHI0Y2UtczNjcjN0LXY0bHVl";  // of the value, as the API returns it
  sb.write("proj/quiet.py", "import os\nassert os.environ['API_TOKEN']\nprint('ok')\n");
  auto r = kin(
      {"run", "quiet.py", "-a", "v5litepod-1", "--env", "API_TOKEN=" + value, "--keep", "-v", "8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("/secrets"), std::string::npos) << "the Secret's requests are traced";
  EXPECT_EQ(r.err.find(value), std::string::npos) << "run -v 8 printed the value";
  EXPECT_EQ(r.err.find(base64), std::string::npos) << "run -v 8 printed the value in base64";
  auto c = kin({"cleanup", "--dry-run", "--older-than", "0s", "-v", "8"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err.find(value), std::string::npos);
  EXPECT_EQ(c.err.find(base64), std::string::npos);
  EXPECT_EQ(c.out.find(base64), std::string::npos);
  EXPECT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
}

// Google's libraries send no credentials to STORAGE_EMULATOR_HOST, and neither does kinetic (nor
// its pods' bootstrap): an emulator needs none and is usually plain HTTP (issue #10 point 2).
TEST_F(GkeEndToEnd, NoTokenGoesToTheStorageEmulator) {
  const int before = cloud_->gcs().request_count("with_authorization");
  const int requests = cloud_->gcs().total_requests();
  auto r = kin({"run", "train.py", "-a", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(cloud_->gcs().total_requests(), requests + 5);
  EXPECT_EQ(cloud_->gcs().request_count("with_authorization"), before);
}

// An endpoint override gets the user's token (as gcloud's does): plain HTTP to another machine
// is refused before anything is sent.
TEST_F(GkeEndToEnd, PlainHttpOverrideToAnotherMachineIsRefused) {
  const int requests = cloud_->gcp().total_requests();
  auto r = kin({"run", "train.py", "-a", "v5litepod-1"},
               {{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", "http://192.0.2.7:8080/"}});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_NE(r.err.find("CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER=http://192.0.2.7:8080"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("in clear"), std::string::npos) << r.err;
  EXPECT_EQ(cloud_->gcp().total_requests(), requests);
}

TEST_F(GkeEndToEnd, JobFailureExitsWithTheJobsCode) {
  auto r = kin({"run", "fail.py", "--accelerator", "v5litepod-1"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("about to fail"), std::string::npos) << r.out;
  std::string id = job_id_in(r.err);
  auto st = nlohmann::json::parse(slurp(proj / "kinetic-out" / id / "status.json"));
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 3);
}

TEST_F(GkeEndToEnd, TimeoutExits124) {
  sb.write("proj/slow.py", "import time\nprint('started', flush=True)\ntime.sleep(120)\n");
  auto r = kin({"run", "slow.py", "--accelerator", "v5litepod-1", "--timeout", "1s"});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_NE(r.err.find("timeout"), std::string::npos) << r.err;
}

// The container runtime gives a pod 64 MiB of /dev/shm, which DataLoader workers and NCCL
// outgrow; kinetic mounts a memory-backed emptyDir there. The fake kubelet tells each pod the
// size its /dev/shm would have (docs/fakes.md), as a real job would see it with df.
TEST_F(GkeEndToEnd, AJobsDevShmIsNotTheRuntimes64MiB) {
  sb.write("proj/shm.py",
           "import os\n"
           "print('shm bytes', os.environ['KINETIC_FAKE_DEV_SHM_BYTES'], flush=True)\n"
           "assert int(os.environ['KINETIC_FAKE_DEV_SHM_BYTES']) > 64 << 20, '/dev/shm: 64 MiB'\n");
  for (const char* acc : {"v5litepod-1", "cpu"}) {
    auto r = kin({"run", "shm.py", "--accelerator", acc});
    EXPECT_EQ(r.exit_code, 0) << acc << ": " << r.out << r.err;
    EXPECT_NE(r.out.find("shm bytes"), std::string::npos) << r.out;
  }
}

TEST_F(GkeEndToEnd, ABudgetStopsTheJobWhenItIsSpentWith124) {
  // Two seconds' worth of v5litepod-1 at its list price: the Job's deadline, which the cluster
  // enforces (issue #12).
  sb.write("proj/slow.py", "import time\nprint('started', flush=True)\ntime.sleep(120)\n");
  char dollars[32];
  std::snprintf(dollars, sizeof dollars, "%.6f",
                resolve_accelerator("v5litepod-1").price_per_hour * 2.5 / 3600);
  auto r = kin({"run", "slow.py", "--accelerator", "v5litepod-1", "--max-cost", dollars});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_NE(r.err.find("buys 2.0s of v5litepod-1 at $1.20/h"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stopped at the $0.00083 budget (2.0s of v5litepod-1, --max-cost)"),
            std::string::npos)
      << r.err;
  const std::string id = job_id_in(r.err);
  auto st = nlohmann::json::parse(slurp(proj / "kinetic-out" / id / "status.json"));
  EXPECT_EQ(st["state"], "timeout") << st.dump();
  EXPECT_EQ(st["error"], "stopped at the $0.00083 budget (2.0s of v5litepod-1, --max-cost)");
}

TEST_F(GkeEndToEnd, StatusShowsWhatTheClusterCostsAndWarnsWhenItIdles) {
  auto idle = kin({"status"});
  ASSERT_EQ(idle.exit_code, 0) << idle.err;
  EXPECT_NE(idle.out.find("POOL\tACCELERATOR\tNODES\tMAX\tCOST/H\n"), std::string::npos)
      << idle.out;
  EXPECT_NE(idle.err.find("costs $0.23/h (the control plane and 1 node) now"), std::string::npos)
      << idle.err;
  EXPECT_NE(idle.err.find("warning: no job is pending or running, and cluster kinetic still costs "
                          "$0.23/h"),
            std::string::npos)
      << idle.err;
  auto doc = nlohmann::json::parse(kin({"status", "-o", "json"}).out);
  EXPECT_NEAR(doc["cluster"]["cost_per_hour"].get<double>(), 0.234, 1e-9) << doc.dump();

  // While a job runs (and its accelerator node is up) there is no warning, and the node counts.
  sb.write("proj/wait.sh", "echo started\nsleep 120\n");
  auto detached = kin({"run", "wait.sh", "--accelerator", "v5litepod-1", "--detach"});
  ASSERT_EQ(detached.exit_code, 0) << detached.err;
  const std::string id = first_line(detached.out);
  ASSERT_TRUE(cloud_->kube().wait_for_object(
      "/apis/batch/v1/namespaces/default/jobs/kinetic-" + id,
      [](const nlohmann::json& j) { return j["status"].value("ready", 0) > 0; }, 30000));
  auto busy = kin({"status"});
  EXPECT_EQ(busy.err.find("no job is pending or running"), std::string::npos) << busy.err;
  EXPECT_NE(busy.err.find("costs $1.43/h (the control plane and 2 nodes) now"), std::string::npos)
      << busy.err;
  EXPECT_EQ(kin({"cancel", id}).exit_code, 0);
}

TEST_F(GkeEndToEnd, YourPricesReplaceTheListPrices) {
  // A name that is neither an accelerator nor a machine type is refused, and nothing is saved.
  auto bad = kin({"config", "set", "prices", "v5lite=1"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("prices: 'v5lite' is neither"), std::string::npos) << bad.err;

  auto set =
      kin({"config", "set", "prices", "control-plane=0,e2-standard-4=0.05,v5litepod-1=0.90"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  auto st = kin({"status"});
  EXPECT_NE(st.err.find("costs $0.05/h (the control plane and 1 node) now"), std::string::npos)
      << st.err;
  auto dry = kin({"run", "train.py", "-a", "v5litepod-1", "--max-cost", "0.90", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("$0.90/h (your price, from the prices setting)"), std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find("budget $0.90 buys 1h00m of v5litepod-1 at $0.90/h (your price"),
            std::string::npos)
      << dry.out;

  // A bad value from the environment is a configuration error naming where it came from.
  auto env = kin({"status"}, {{"KINETIC_PRICES", "l4=cheap"}});
  EXPECT_EQ(env.exit_code, 1) << env.err;  // run would exit 125
  EXPECT_NE(env.err.find("the prices setting, from env KINETIC_PRICES"), std::string::npos)
      << env.err;
}

TEST_F(GkeEndToEnd, SpotCostsAreYourSpotPricesOrSaidToBeLess) {
  // No Spot price anywhere: the on-demand price, and how to give yours.
  auto plain = kin({"pool", "add", "--accelerator", "l4", "--spot"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.err.find("on demand while up, Spot costs less (`kinetic config set prices "
                           "l4:spot=USD` shows it)"),
            std::string::npos)
      << plain.err;
  // With yours: that price, in the pool's line and in a Spot job's budget.
  ASSERT_EQ(kin({"config", "set", "prices", "v5litepod-4:spot=1.50"}).exit_code, 0);
  auto priced = kin({"pool", "add", "--accelerator", "v5litepod-4", "--spot"});
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  EXPECT_NE(priced.err.find("$1.50/h per node (your Spot price) while up"), std::string::npos)
      << priced.err;
  auto dry =
      kin({"run", "train.py", "-a", "v5litepod-4", "--spot", "--max-cost", "3", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("budget $3.00 buys 2h00m of v5litepod-4 at $1.50/h (your Spot price"),
            std::string::npos)
      << dry.out;
}

// A shape Compute Engine sells only as Spot or flex-start (a3-highgpu-1g) gets no on-demand pool:
// `pool add` says so and what works before it creates anything; as Spot it is made.
TEST_F(GkeEndToEnd, AShapeNotSoldOnDemandIsRefusedWithTheWayThatWorks) {
  const size_t pools_before = cloud_->kube().node_pools().size();
  auto refused = kin({"pool", "add", "--accelerator", "h100"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("h100 (a3-highgpu-1g) is not sold on demand: Compute Engine offers "
                             "it only as Spot or flex-start VMs; pass --flex-start or --spot"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(cloud_->kube().node_pools().size(), pools_before);
  auto spot = kin({"pool", "add", "--accelerator", "h100:spot"});
  ASSERT_EQ(spot.exit_code, 0) << spot.err;
  EXPECT_EQ(cloud_->kube().node_pools().size(), pools_before + 1);
  auto listed = kin({"accelerators", "-o", "json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  for (const auto& a : nlohmann::json::parse(listed.out)["accelerators"]) {
    const auto machine = a["machine_type"].get<std::string>();
    EXPECT_EQ(a["capacity"],
              machine == "a3-highgpu-1g" || machine == "a3-highgpu-2g" || machine == "a3-highgpu-4g"
                  ? "spot-or-flex-start"
              : machine == "a3-ultragpu-8g" || machine == "a4-highgpu-8g" ? "reservation"
                                                                          : "on-demand")
        << machine;
  }
}

TEST_F(GkeEndToEnd, AFailureQuotesTheJobsOwnLastErrorLine) {
  sb.write("proj/fit.py", "def fit(w):\n    return w.size\n\nprint('training')\nfit(object())\n");
  auto r = kin({"run", "fit.py", "--accelerator", "v5litepod-1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string cause = "AttributeError: 'object' object has no attribute 'size'";
  const std::string last = r.err.substr(r.err.rfind("kinetic: "));
  EXPECT_NE(last.find(" failed (exit 1) after "), std::string::npos) << last;
  EXPECT_NE(last.find(": " + cause + "; outputs in "), std::string::npos) << last;
  const std::string id = last.substr(9, last.find(' ', 9) - 9);
  EXPECT_EQ(nlohmann::json::parse(kin({"status", id, "-o", "json"}).out)["error"], cause);
}

TEST_F(GkeEndToEnd, NoMatchingPoolNamesPoolAddAndExits126) {
  auto r = kin({"run", "train.py", "--accelerator", "l4"});
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_NE(r.err.find("kinetic pool add --accelerator l4"), std::string::npos) << r.err;
  // Nothing left behind.
  auto st = kin({"status", "-o", "json"});
  const auto doc = nlohmann::json::parse(st.out);
  for (const auto& j : doc["jobs"]) EXPECT_NE(j["state"], "pending") << st.out;
}

TEST_F(GkeEndToEnd, ImagePullErrorExits126WithTheReason) {
  cloud_->break_image_pulls(true);
  auto r = kin({"run", "train.py", "--accelerator", "v5litepod-1"});
  cloud_->break_image_pulls(false);
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_NE(r.err.find("pull"), std::string::npos) << r.err;
}

TEST_F(GkeEndToEnd, BuildFailureShowsTheFailingStepAndExits126) {
  sb.write("proj/requirements.txt", "numpy\nthis-package-does-not-exist==1.0\n");
  auto r = kin({"run", "train.py", "--accelerator", "v5litepod-1"});
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_NE(r.err.find("No matching distribution found for this-package-does-not-exist"),
            std::string::npos)
      << r.err;
}

TEST_F(GkeEndToEnd, CtrlCCancelsTheJobAndExits130) {
  sb.write("proj/forever.py",
           "import time\n"
           "i = 0\n"
           "while True:\n"
           "    print('beat', i, flush=True)\n"
           "    i += 1\n"
           "    time.sleep(0.05)\n");
  fs::path out = sb.root() / "run.out", err = sb.root() / "run.err";
  int pid = sb.spawn({"run", "forever.py", "--accelerator", "v5litepod-1"}, proj, out, err, env());
  ASSERT_TRUE(eventually([&] { return slurp(out).find("beat 2\n") != std::string::npos; }))
      << slurp(err);
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 130) << slurp(err);
  EXPECT_NE(slurp(err).find("cancelling"), std::string::npos) << slurp(err);
  // The pod is gone with its process, and nothing of the job is left in the cluster.
  EXPECT_TRUE(cloud_->kube().wait_idle(30000));
  std::string id = job_id_in(slurp(err));
  ASSERT_FALSE(id.empty()) << slurp(err);
  EXPECT_FALSE(
      cloud_->kube().object("/apis/batch/v1/namespaces/default/jobs/kinetic-" + id).has_value());
}

// `logs --tail N` of a running job: the last lines of its pod's log so far (the kubelet's own
// tailLines), and with -f it goes on after them.
TEST_F(GkeEndToEnd, TheTailOfARunningJobsLog) {
  sb.write("proj/talk.py",
           "import time\n"
           "for i in range(1, 31):\n"
           "    print('line', i, flush=True)\n"
           "time.sleep(3600)\n");
  auto d = kin({"run", "talk.py", "--accelerator", "v5litepod-1", "--detach"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string id = first_line(d.out);
  ASSERT_TRUE(eventually([&] {
    return kin({"logs", id}).out.find("line 30\n") != std::string::npos;
  }));
  auto tail = kin({"logs", id, "--tail", "2"});
  ASSERT_EQ(tail.exit_code, 0) << tail.err;
  EXPECT_EQ(tail.out, "line 29\nline 30\n");
  // --since from the kubelet's own stamps (sinceTime), with and without -f.
  auto since = kin({"logs", id, "--since", "1h"});
  ASSERT_EQ(since.exit_code, 0) << since.err;
  EXPECT_EQ(since.out.substr(0, 14), "line 1\nline 2\n") << since.out;
  EXPECT_EQ(kin({"logs", id, "--since", "2099-01-01T00:00:00Z"}).out, "");
  fs::path later = sb.root() / "later.out", later_err = sb.root() / "later.err";
  int later_follower = sb.spawn({"logs", "-f", "--since", "2099-01-01T00:00:00Z", id}, proj, later,
                                later_err, env());
  fs::path out = sb.root() / "tail.out", err = sb.root() / "tail.err";
  int follower = sb.spawn({"logs", "-f", "--tail", "1", id}, proj, out, err, env());
  ASSERT_TRUE(eventually([&] { return slurp(out) == "line 30\n"; })) << slurp(out) << slurp(err);
  EXPECT_EQ(kin({"cancel", id}).exit_code, 0);
  EXPECT_EQ(Sandbox::wait(follower), 0) << slurp(err);
  EXPECT_EQ(slurp(out), "line 30\n");
  Sandbox::wait(later_follower);
  EXPECT_EQ(slurp(later), "") << slurp(later_err);
}

TEST_F(GkeEndToEnd, DetachLogsFollowStatusCancelCleanup) {
  sb.write("proj/loop.py",
           "import time\n"
           "for i in range(100000):\n"
           "    print('tick', i, flush=True)\n"
           "    time.sleep(0.05)\n");
  auto d = kin({"run", "loop.py", "--accelerator", "v5litepod-1", "--detach"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  std::string id = first_line(d.out);
  ASSERT_EQ(job_id_in(id), id) << d.out;

  // logs -f from a second process sees the job's output while it runs.
  fs::path out = sb.root() / "logs.out", err = sb.root() / "logs.err";
  int follower = sb.spawn({"logs", "-f", id}, proj, out, err, env());
  ASSERT_TRUE(eventually([&] { return slurp(out).find("tick 3\n") != std::string::npos; }))
      << slurp(err);

  auto st = kin({"status", "-o", "json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  bool running = false;
  const auto doc = nlohmann::json::parse(st.out);
  for (const auto& j : doc["jobs"]) running = running || (j["id"] == id && j["state"] == "running");
  EXPECT_TRUE(running) << st.out;

  auto c = kin({"cancel", id});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(Sandbox::wait(follower), 0) << slurp(err);
  // Lines arrive in order, none twice.
  std::string text = slurp(out);
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    std::string line = "tick " + std::to_string(i) + "\n";
    at = text.find(line, at);
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_EQ(text.find(line, at + 1), std::string::npos) << text;
  }
  EXPECT_TRUE(cloud_->kube().wait_idle(30000));

  auto dry = kin({"cleanup", "--older-than", "0s", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find(id), std::string::npos) << dry.out;
  auto clean = kin({"cleanup", "--older-than", "0s"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  auto after = kin({"cleanup", "--older-than", "0s", "--dry-run"});
  EXPECT_EQ(after.out.find(id), std::string::npos) << after.out;
}

}  // namespace
}  // namespace kinetic::test
