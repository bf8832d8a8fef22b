// Idle auto-down end to end (#12, docs/cost.md): `kinetic up --auto-down` installs the CronJob
// and grants its principal; each check is the CronJob's Job really running the embedded script
// in the fake cluster, as its own service account (held to its Role by the fake's RBAC), and
// deleting the cluster through the fake GKE API with a Workload Identity token (held to the
// project's IAM policy). The fake's CronJob controller fires when the test says
// (FakeKube::trigger_cronjob), and the idle clock is moved by editing what the script recorded:
// the order is the test's, never a wait for wall-clock time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "auth/sources.h"
#include "auth/token_cache.h"
#include "backend/gke/auto_down.h"
#include "gcp/project_iam.h"
#include "gke_fixture.h"
#include "http/transport.h"
#include "k8s/client.h"

namespace kinetic::test {
namespace {

constexpr const char* kCronJob = "kinetic-auto-down";
constexpr const char* kState = "/api/v1/namespaces/kinetic-system/configmaps/kinetic-auto-down";
constexpr const char* kRole = "projects/acme-ml/roles/kineticAutoDown";

// RFC 3339 (whole seconds, UTC) of now + OFFSET seconds.
std::string at_offset(long offset) {
  const time_t t = ::time(nullptr) + offset;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class GkeAutoDown : public GkeFixture {
 protected:
  // One check: the CronJob's next Job, run to its end, which must be SUCCEEDED (else failed).
  void check(bool succeeded = true) {
    const std::string job = cloud_->kube().trigger_cronjob("kinetic-system", kCronJob);
    ASSERT_FALSE(job.empty()) << "the CronJob did not start a Job";
    const bool ended = cloud_->kube().wait_for_object(
        "/apis/batch/v1/namespaces/kinetic-system/jobs/" + job,
        [](const nlohmann::json& j) {
          return j.is_object() &&
                 (j["status"].value("succeeded", 0) > 0 || j["status"].value("failed", 0) > 0);
        },
        60000);
    ASSERT_TRUE(ended) << "the check's Job " << job << " never ended";
    auto j = cloud_->kube().object("/apis/batch/v1/namespaces/kinetic-system/jobs/" + job);
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ((*j)["status"].value(succeeded ? "succeeded" : "failed", 0), 1) << j->dump();
  }
  nlohmann::json recorded() const {
    auto cm = cloud_->kube().object(kState);
    return cm ? (*cm)["data"] : nlohmann::json();
  }
  // Moves the idle clock: the cluster has been idle since SECONDS ago.
  void idle_for(long seconds) {
    ASSERT_TRUE(cloud_->kube().merge_patch(
        kState, {{"data", {{"idle_since", at_offset(-seconds)}, {"state", "idle"}}}}));
  }
  bool granted() const {
    for (const auto& b :
         cloud_->gcp().project_iam_policy("acme-ml").value("bindings", nlohmann::json::array()))
      if (b.value("role", "") == kRole) return true;
    return false;
  }
  // Waits until a pod of server ID has ended with the bootstrap's idle-stop message.
  // `up --auto-down` and examples/serve-http in the project folder; the port the server is to
  // listen on, or "" when `up` failed.
  std::string up_with_the_serve_example() {
    if (kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"})
            .exit_code != 0)
      return "";
    fs::copy_file(fs::path(KINETIC_SOURCE_DIR) / "examples" / "serve-http" / "server.py",
                  proj / "server.py");
    return std::to_string(unused_loopback_port());
  }
  bool wait_for_idle_stop(const std::string& id) {
    return cloud_->kube().wait_for_pods(
        "default",
        [&](const std::vector<nlohmann::json>& pods) {
          for (const auto& p : pods)
            if (p["metadata"]["labels"].value("kinetic.dev/job", "") == id)
              for (const auto& c : p["status"].value("containerStatuses", nlohmann::json::array()))
                if (c["state"].contains("terminated") &&
                    c["state"]["terminated"].value("message", "") == "kinetic: idle-stop")
                  return true;
          return false;
        },
        60000);
  }
  // Takes `delete` on deployments (the ClusterRole's last rule) from auto-down's account.
  void revoke_deployment_deletes() {
    const std::string path =
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + std::string(kCronJob);
    auto role = cloud_->kube().object(path);
    ASSERT_TRUE(role.has_value());
    auto rules = (*role)["rules"];
    ASSERT_EQ(rules.back()["verbs"], nlohmann::json({"delete"})) << rules.dump();
    rules.erase(rules.size() - 1);
    ASSERT_TRUE(cloud_->kube().merge_patch(path, {{"rules", rules}}));
  }
  bool cluster_up() const {
    auto c = cloud_->gcp().cluster("acme-ml", "us-central1-a", "kinetic");
    return c && (*c).value("status", "") == "RUNNING";
  }
};

TEST_F(GkeAutoDown, TheClusterDeletesItselfOnceIdleForThePeriodAndKeepsBucketAndImages) {
  auto up = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_NE(up.err.find("kineticAutoDown (container.clusters.delete only)"), std::string::npos)
      << up.err;
  EXPECT_NE(up.err.find("may delete cluster kinetic and nothing else"), std::string::npos)
      << up.err;
  EXPECT_NE(
      up.err.find("deletes the cluster after 10m with no pod, Job or JobSet pending or running"),
      std::string::npos)
      << up.err;
  // The grant: the custom role with one permission, to this cluster's principal, on a condition
  // naming this cluster.
  auto role = cloud_->gcp().custom_role("acme-ml", "kineticAutoDown");
  ASSERT_TRUE(role.has_value());
  EXPECT_EQ((*role)["includedPermissions"], nlohmann::json({"container.clusters.delete"}));
  ASSERT_TRUE(granted());
  auto st = kin({"status"});
  EXPECT_NE(st.err.find("auto-down after 10m idle (first check within 5 minutes)"),
            std::string::npos)
      << st.err;

  check();
  EXPECT_EQ(recorded()["state"], "idle") << recorded().dump();
  st = kin({"status"});
  EXPECT_NE(st.err.find("; auto-down in 10m (idle since "), std::string::npos) << st.err;
  EXPECT_EQ(st.err.find("let it go by itself"), std::string::npos) << st.err;

  // Idle for longer than the period: the next check deletes the cluster through GKE, with its
  // own Workload Identity token (the user's token is never in the cluster). The check's Job
  // goes with the cluster.
  idle_for(11 * 60);
  const int tokens = cloud_->gcp().workload_identity_tokens();
  ASSERT_FALSE(cloud_->kube().trigger_cronjob("kinetic-system", kCronJob).empty());
  ASSERT_TRUE(eventually([&] { return !cluster_up(); }, 60)) << "the cluster is still up";
  EXPECT_GT(cloud_->gcp().workload_identity_tokens(), tokens);
  EXPECT_EQ(cloud_->gcp().request_counts(
                "container")["DELETE /v1/projects/{name}/locations/{name}/clusters/{name}"],
            1);
  // What is not the cluster's stays: the bucket and the images, for the next up and run.
  EXPECT_TRUE(cloud_->gcs().has_bucket(kGkeBucket));
  for (const auto& [route, n] : cloud_->gcp().request_counts("artifactregistry"))
    EXPECT_NE(route.rfind("DELETE", 0), 0u) << route;

  // `status` still shows the jobs (their records are in the bucket) and says where the
  // cluster went.
  auto gone = kin({"status"});
  EXPECT_EQ(gone.exit_code, 0) << gone.err;
  EXPECT_NE(gone.err.find("cluster kinetic (us-central1-a): not found (deleted by its auto-down"),
            std::string::npos)
      << gone.err;
  EXPECT_EQ(nlohmann::json::parse(kin({"status", "-o", "json"}).out)["cluster"]["exists"], false);

  // `down` afterwards has no cluster to delete, and revokes the grant.
  auto down = kin({"down", "--yes", "--keep-images", "--keep-bucket"});
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.err.find("auto-down access"), std::string::npos) << down.err;
  EXPECT_FALSE(granted());
}

// A foreground serve whose server idles out ends by itself, saying why (exit 1, as a server that
// ends), while its Deployment waits for the controller: no Ctrl-C needed, nothing hangs.
TEST_F(GkeAutoDown, AForegroundServeEndsWhenItsServerIdlesOut) {
  const std::string port = up_with_the_serve_example();
  ASSERT_FALSE(port.empty());
  const int pid =
      spawn_until_output({"serve", "server.py", "-p", port, "--idle-stop", "5s"}, "Serving at");
  ASSERT_GT(pid, 0) << slurp(err);
  EXPECT_EQ(Sandbox::wait(pid), 1) << slurp(err);
  EXPECT_NE(slurp(err).find("stopped after 5.0s without a request (--idle-stop)"),
            std::string::npos)
      << slurp(err);
}

// `serve --idle-stop` on gke (docs/serving.md "Idle stop"): the server's bootstrap stops it once
// nobody has connected for D and says so in its container's termination message; the next
// check, which no longer counts its pods, deletes its Deployment (the Service and the Secret go
// with it: owned by it), not without the right to (the fake's RBAC), and its record says why.
// The order is the test's: it waits on the pod's message, then triggers the check.
TEST_F(GkeAutoDown, AnIdleStoppedServerIsDeletedAndNoLongerKeepsTheCluster) {
  const std::string port = up_with_the_serve_example();
  ASSERT_FALSE(port.empty());
  // 5 s leaves `serve --detach` time to see it answer first (a try every 2 s at most).
  auto r =
      kin({"serve", "server.py", "-p", port, "-e", "GREETING=hi", "--idle-stop", "5s", "--detach"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  const std::string name = "kinetic-" + id;
  const std::string deployment = "/apis/apps/v1/namespaces/default/deployments/" + name;
  const std::string service = "/api/v1/namespaces/default/services/" + name;
  const std::string secret = "/api/v1/namespaces/default/secrets/" + name;
  auto svc = cloud_->kube().object(service);
  ASSERT_TRUE(svc.has_value());
  const auto owner = (*svc)["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Deployment");
  EXPECT_EQ(owner["name"], name);
  EXPECT_EQ(owner["uid"], (*cloud_->kube().object(deployment))["metadata"]["uid"]);
  EXPECT_EQ((*cloud_->kube().object(secret))["metadata"]["ownerReferences"][0]["uid"],
            owner["uid"]);

  // The server idles out: its pod's container ends with kinetic's message.
  ASSERT_TRUE(wait_for_idle_stop(id)) << "the server was never stopped for --idle-stop";
  // The Deployment's status may lag its pod's end by a pass of the fake's controller.
  nlohmann::json st;
  EXPECT_TRUE(eventually([&] {
    st = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out);
    return st["state"] != "running";
  }));
  EXPECT_EQ(st["state"], "cancelled") << st.dump();
  EXPECT_EQ(st["error"], "stopped after 5.0s without a request (--idle-stop)") << st.dump();

  // Without `delete` on deployments the check fails, and says how to grant it.
  ASSERT_NO_FATAL_FAILURE(revoke_deployment_deletes());
  check(/*succeeded=*/false);
  EXPECT_TRUE(cloud_->kube().object(deployment).has_value());
  EXPECT_NE(
      recorded()["message"].get<std::string>().find(
          "cannot delete the idle-stopped server's Deployment default/" + name + ": HTTP 403"),
      std::string::npos)
      << recorded().dump();
  EXPECT_NE(recorded()["message"].get<std::string>().find("run `kinetic up --auto-down D` again"),
            std::string::npos)
      << recorded().dump();
  const std::string said = kin({"status"}).err;
  EXPECT_NE(said.find("its last check: cannot delete the idle-stopped server's Deployment"),
            std::string::npos)
      << said;

  // `up --auto-down` gives the right back; the check deletes the Deployment, and the waiting pod
  // does not keep the cluster.
  ASSERT_EQ(kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"})
                .exit_code,
            0);
  check();
  EXPECT_EQ(recorded()["state"], "idle") << recorded().dump();
  EXPECT_FALSE(cloud_->kube().object(deployment).has_value());
  EXPECT_FALSE(cloud_->kube().object(service).has_value());
  EXPECT_FALSE(cloud_->kube().object(secret).has_value());
  r = kin({"serve", "ls", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto servers = nlohmann::json::parse(r.out)["servers"];
  ASSERT_EQ(servers.size(), 1u) << r.out;
  EXPECT_EQ(servers[0]["state"], "cancelled") << r.out;
  r = kin({"serve", "logs", id});
  EXPECT_NE(r.out.find("serving on port " + port), std::string::npos) << r.out << r.err;
  r = kin({"serve", "stop", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(kin({"status", id}).exit_code, 1);

  // Nothing else runs: the cluster stays idle, its clock counting from the server pods' last
  // events (as any job's), and goes once the period has passed.
  check();
  EXPECT_EQ(recorded()["state"], "idle") << recorded().dump();
  EXPECT_TRUE(cluster_up());
}

// A DELETE that fails (GKE unavailable) is recorded as "error" and retried at the very next
// check: the idle time already counted is kept, so the cluster does not bill for another period.
TEST_F(GkeAutoDown, AfterAFailedDeleteTheNextCheckDeletesTheCluster) {
  ASSERT_EQ(kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"})
                .exit_code,
            0);
  check();
  idle_for(11 * 60);
  const std::string idle_since = recorded()["idle_since"];
  const std::string kDelete = "DELETE /v1/projects/{name}/locations/{name}/clusters/{name}";
  // The fake cloud is shared by the suite's tests: count from here.
  const int deletes = cloud_->gcp().request_counts("container")[kDelete];
  const int injected = cloud_->gcp().request_counts("container")["injected_failures"];
  cloud_->gcp().fail_next("container", 1, 503, "DELETE");
  check(/*succeeded=*/false);
  EXPECT_TRUE(cluster_up());
  EXPECT_EQ(recorded()["state"], "error") << recorded().dump();
  EXPECT_NE(recorded()["message"].get<std::string>().find("HTTP 503"), std::string::npos)
      << recorded().dump();
  EXPECT_EQ(recorded()["idle_since"], idle_since) << recorded().dump();
  auto st = kin({"status"});
  EXPECT_NE(st.err.find("auto-down failed at its last check: deleting cluster kinetic: HTTP 503"),
            std::string::npos)
      << st.err;

  ASSERT_FALSE(cloud_->kube().trigger_cronjob("kinetic-system", kCronJob).empty());
  // Either the cluster goes, or the check records it idle again (the clock restarted).
  ASSERT_TRUE(eventually(
      [&] {
        const auto r = recorded();
        return !cluster_up() || (r.is_object() && r.value("state", "") == "idle");
      },
      60));
  EXPECT_FALSE(cluster_up()) << "the check after a failed delete kept the cluster: "
                             << recorded().dump();
  EXPECT_EQ(cloud_->gcp().request_counts("container")[kDelete], deletes + 2);
  EXPECT_EQ(cloud_->gcp().request_counts("container")["injected_failures"], injected + 1);
}

TEST_F(GkeAutoDown, AJobRunningOrPendingKeepsTheCluster) {
  ASSERT_EQ(kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"})
                .exit_code,
            0);
  // A detached job that runs until the test lets it end.
  const fs::path flag = sb.root() / "go";
  sb.write("proj/wait.py",
           "import os, time\nprint('started', flush=True)\nwhile not os.path.exists('" +
               flag.string() + "'):\n    time.sleep(0.05)\n");
  auto detached = kin({"run", "wait.py", "--accelerator", "v5litepod-1", "--detach"});
  ASSERT_EQ(detached.exit_code, 0) << detached.err;
  const std::string id = first_line(detached.out);
  ASSERT_TRUE(cloud_->kube().wait_for_object(
      "/apis/batch/v1/namespaces/default/jobs/kinetic-" + id,
      [](const nlohmann::json& j) { return j.is_object() && j["status"].value("ready", 0) > 0; },
      30000));

  check();  // a first record, then one that says the cluster is long idle: the job wins
  idle_for(3600);
  check();
  EXPECT_EQ(recorded()["state"], "active") << recorded().dump();
  EXPECT_TRUE(cluster_up());
  auto st = kin({"status"});
  EXPECT_NE(st.err.find("auto-down after 10m idle (a job is pending or running)"),
            std::string::npos)
      << st.err;

  // The job ends: the clock starts again from this check, not from before the job.
  sb.write("go", "");
  ASSERT_TRUE(cloud_->kube().wait_for_object(
      "/apis/batch/v1/namespaces/default/jobs/kinetic-" + id,
      [](const nlohmann::json& j) {
        return j.is_object() && j["status"].value("succeeded", 0) > 0;
      },
      30000));
  check();
  EXPECT_EQ(recorded()["state"], "idle") << recorded().dump();
  EXPECT_TRUE(cluster_up());
}

// Deleting the cluster deletes everything in it: another context's job (another namespace of the
// same cluster) keeps it as much as this one's. The check lists it cluster-wide, as its
// ClusterRole lets it (the fake holds its token to RBAC).
TEST_F(GkeAutoDown, AJobOfAnotherNamespaceKeepsTheCluster) {
  auto up = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_NE(up.err.find("in any namespace but kube-*, gke-*, gmp-*, jobset-system, kueue-system, "
                        "kinetic-system"),
            std::string::npos)
      << up.err;
  const fs::path flag = sb.root() / "go";
  sb.write("proj/wait.py", "import os, time\nwhile not os.path.exists('" + flag.string() +
                               "'):\n    time.sleep(0.05)\n");
  auto detached =
      kin({"--namespace", "team-b", "run", "wait.py", "--accelerator", "v5litepod-1", "--detach"});
  ASSERT_EQ(detached.exit_code, 0) << detached.err;
  const std::string job =
      "/apis/batch/v1/namespaces/team-b/jobs/kinetic-" + first_line(detached.out);
  ASSERT_TRUE(cloud_->kube().wait_for_object(
      job,
      [](const nlohmann::json& j) { return j.is_object() && j["status"].value("ready", 0) > 0; },
      30000));
  check();
  idle_for(3600);
  check();
  EXPECT_EQ(recorded()["state"], "active") << recorded().dump();
  EXPECT_TRUE(cluster_up());
  sb.write("go", "");
  ASSERT_TRUE(cloud_->kube().wait_for_object(
      job,
      [](const nlohmann::json& j) {
        return j.is_object() && j["status"].value("succeeded", 0) > 0;
      },
      30000));
}

// An older kinetic ran auto-down in the job namespace, where whatever may create pods there (a
// pipeline's runner) could run one as its account. The next `up --auto-down` moves it: the old
// CronJob goes, and the grant names the kinetic-system account alone.
TEST_F(GkeAutoDown, AnAutoDownInTheJobNamespaceMovesToItsOwn) {
  ASSERT_EQ(kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"})
                .exit_code,
            0);
  auto cron = cloud_->kube().object("/apis/batch/v1/namespaces/kinetic-system/cronjobs/" +
                                    std::string(kCronJob));
  ASSERT_TRUE(cron.has_value());
  // What the older kinetic left: the CronJob in default, and its principal in the grant.
  nlohmann::json legacy = {{"apiVersion", "batch/v1"},
                           {"kind", "CronJob"},
                           {"metadata", {{"name", kCronJob}, {"namespace", "default"}}},
                           {"spec", (*cron)["spec"]}};
  auto transport = http::make_curl_transport();
  struct WithToken : http::Transport {
    http::Transport& inner;
    explicit WithToken(http::Transport& t) : inner(t) {}
    http::Response send(const http::Request& request) override {
      http::Request r = request;
      r.headers.emplace_back("Authorization", "Bearer fake-access-token");
      return inner.send(r);
    }
  } authed(*transport);
  auto kube_transport = k8s::make_kube_transport(
      cloud_->kube().ca_pem(),
      std::make_shared<auth::TokenCache>(auth::fixed_token_source("fake-access-token", "test")), 0);
  k8s::Client kube(*kube_transport, cloud_->kube().url());
  kube.create("/apis/batch/v1/namespaces/default/cronjobs", legacy);
  const std::string old_principal = fakes::FakeGcp::workload_identity_principal(
      "acme-ml", "default", "kinetic-auto-down-kinetic");
  gcp::PollOptions poll;
  poll.initial = poll.max = std::chrono::milliseconds(1);
  gcp::ProjectIamClient iam(authed, cloud_->gcp().url("cloudresourcemanager"),
                            cloud_->gcp().url("iam"), poll);
  gke::Target t;
  t.project = "acme-ml";
  t.location = "us-central1-a";
  t.cluster = "kinetic";
  ASSERT_TRUE(iam.grant("acme-ml", {kRole,
                                    old_principal,
                                    {gke::auto_down_condition_title(t), "older kinetic",
                                     gke::auto_down_condition(t)}}));

  auto up = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_FALSE(exists("/apis/batch/v1/namespaces/default/cronjobs/kinetic-auto-down"));
  EXPECT_TRUE(exists("/apis/batch/v1/namespaces/kinetic-system/cronjobs/kinetic-auto-down"));
  nlohmann::json members = nlohmann::json::array();
  for (const auto& b :
       cloud_->gcp().project_iam_policy("acme-ml").value("bindings", nlohmann::json::array()))
    if (b.value("role", "") == kRole)
      for (const auto& m : b["members"]) members.push_back(m);
  EXPECT_EQ(members, nlohmann::json::array({fakes::FakeGcp::workload_identity_principal(
                         "acme-ml", "kinetic-system", "kinetic-auto-down-kinetic")}));
  check();  // and it runs, from its own namespace
  EXPECT_EQ(recorded()["state"], "idle") << recorded().dump();
}

TEST_F(GkeAutoDown, AShortJobBetweenTwoChecksRestartsTheClock) {
  ASSERT_EQ(kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"})
                .exit_code,
            0);
  check();
  idle_for(11 * 60);  // due: the next check would delete the cluster...
  // ...but a job runs and is cleaned up before it: only its events are left to see.
  auto r = kin({"run", "train.py", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  check();
  EXPECT_EQ(recorded()["state"], "idle") << recorded().dump();
  EXPECT_TRUE(cluster_up());
  // The clock restarted at the job's last event, within the last minutes.
  EXPECT_GT(recorded()["idle_since"].get<std::string>(), at_offset(-5 * 60)) << recorded().dump();
}

TEST_F(GkeAutoDown, AJobWaitingForANodeKeepsTheCluster) {
  ASSERT_EQ(kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "10m"})
                .exit_code,
            0);
  // The TPU pool cannot scale up: the job's pod stays Pending, which is activity all the same.
  std::string pool;
  for (const auto& p : cloud_->kube().node_pools())
    if (p.labels.count("cloud.google.com/gke-tpu-accelerator")) pool = p.name;
  ASSERT_FALSE(pool.empty());
  cloud_->kube().fail_scale_up(pool, "GCE quota exceeded");
  auto detached = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--detach"});
  ASSERT_EQ(detached.exit_code, 0) << detached.err;
  ASSERT_TRUE(cloud_->kube().wait_for_event("default", "FailedScaleUp", 30000));
  idle_for(3600);
  check();
  EXPECT_EQ(recorded()["state"], "active") << recorded().dump();
  EXPECT_TRUE(cluster_up());
  EXPECT_EQ(kin({"cancel", first_line(detached.out)}).exit_code, 0);
}

TEST_F(GkeAutoDown, OffRemovesItAndRevokesTheGrant) {
  // Never on: off has nothing to remove, and says nothing (Resource Manager is on all the same:
  // the nodes' grants need it).
  auto never = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "off"});
  ASSERT_EQ(never.exit_code, 0) << never.err;
  EXPECT_EQ(never.err.find("auto-down"), std::string::npos) << never.err;
  EXPECT_FALSE(granted());

  ASSERT_EQ(
      kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "2h"}).exit_code,
      0);
  ASSERT_TRUE(granted());
  // The setting is kept in the context: a plain `up` keeps it.
  auto again = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("auto-down access"), std::string::npos) << again.err;
  EXPECT_TRUE(exists("/apis/batch/v1/namespaces/kinetic-system/cronjobs/kinetic-auto-down"));

  auto off = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "off"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_NE(off.err.find("revoked"), std::string::npos) << off.err;
  EXPECT_FALSE(exists("/apis/batch/v1/namespaces/kinetic-system/cronjobs/kinetic-auto-down"));
  EXPECT_FALSE(exists(kState));
  EXPECT_FALSE(granted());
  auto st = kin({"status"});
  EXPECT_EQ(st.err.find("; auto-down"), std::string::npos) << st.err;
  EXPECT_NE(st.err.find("kinetic up --auto-down 2h"), std::string::npos) << st.err;

  auto bad = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a", "--auto-down", "5m"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--auto-down 5m is too short"), std::string::npos) << bad.err;

  // The context's setting is what the next plain `up` applies.
  auto short_setting = kin({"config", "set", "contexts.acme-ml.auto-down", "5m"});
  EXPECT_EQ(short_setting.exit_code, 2) << short_setting.err;
  ASSERT_EQ(kin({"config", "set", "contexts.acme-ml.auto-down", "15m"}).exit_code, 0);
  auto from_setting = kin({"up", "--project", "acme-ml", "--zone", "us-central1-a"});
  ASSERT_EQ(from_setting.exit_code, 0) << from_setting.err;
  EXPECT_NE(from_setting.err.find("deletes the cluster after 15m"), std::string::npos)
      << from_setting.err;
  EXPECT_EQ(recorded()["idle_after"], "900");
}

}  // namespace
}  // namespace kinetic::test
