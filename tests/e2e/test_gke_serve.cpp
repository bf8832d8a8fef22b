// kinetic serve on a gke context (issue #31 point 3, docs/serving.md "Servers on gke"): the
// serve-http example in a Deployment of the fake cluster, reached through the URL `serve` prints
// (the port-forward engine to its Ready pod); --detach then `serve status`; a new connection
// after the pod is deleted reaching the pod the Deployment made instead; `serve stop` leaving no
// Deployment, Service, pod, Secret or record.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "gke_fixture.h"
#include "port_forward_job.h"

namespace kinetic::test {
namespace {

constexpr auto kNpos = std::string::npos;
const fs::path kServeHttpExample = fs::path(KINETIC_SOURCE_DIR) / "examples" / "serve-http";
const std::string kServeNs = "/api/v1/namespaces/default";
const std::string kServeDeployments = "/apis/apps/v1/namespaces/default/deployments";

// A wait_for_pods predicate: server ID's pod OLD_POD is gone and another of its pods is Ready
// (the Deployment replaced it).
std::function<bool(const std::vector<nlohmann::json>&)> replaced_and_ready(
    const std::string& id, const std::string& old_pod) {
  return [id, old_pod](const std::vector<nlohmann::json>& all) {
    bool old_gone = true, new_ready = false;
    for (const auto& p : all) {
      if (p["metadata"]["labels"].value("kinetic.dev/job", "") != id) continue;
      if (p["metadata"]["name"] == old_pod)
        old_gone = false;
      else if (fakes::pod_ready(p))
        new_ready = true;
    }
    return old_gone && new_ready;
  };
}

class GkeServe : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    fs::copy_file(kServeHttpExample / "server.py", proj / "server.py");
    port = std::to_string(unused_loopback_port());
  }
  std::vector<nlohmann::json> server_pods(const std::string& id) {
    std::vector<nlohmann::json> mine;
    cloud_->kube().wait_for_pods(
        "default",
        [&](const std::vector<nlohmann::json>& pods) {
          for (const auto& p : pods)
            if (p["metadata"]["labels"].value("kinetic.dev/job", "") == id) mine.push_back(p);
          return true;
        },
        0);
    return mine;
  }
  // Nothing of server ID left in the cluster or the bucket.
  void expect_nothing_left(const std::string& id) {
    const std::string name = "kinetic-" + id;
    EXPECT_FALSE(exists(kServeDeployments + "/" + name));
    EXPECT_FALSE(exists(kServeNs + "/services/" + name));
    EXPECT_FALSE(exists(kServeNs + "/secrets/" + name));
    EXPECT_TRUE(cloud_->kube().wait_for_pods(
        "default",
        [&](const std::vector<nlohmann::json>& pods) {
          for (const auto& p : pods)
            if (p["metadata"]["labels"].value("kinetic.dev/job", "") == id) return false;
          return true;
        },
        60000));
    EXPECT_EQ(kin({"status", id}).exit_code, 1);
  }
  std::string port;
};

TEST_F(GkeServe, TheExampleAnswersThroughTheUrlAndCtrlCLeavesNothing) {
  const int pid = spawn({"serve", "server.py", "--port", port, "-o", "json"}, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find('\n') != kNpos; }, 120)) << slurp(err);
  const auto ready = nlohmann::json::parse(first_line(slurp(out)));
  const std::string id = ready["id"];
  const int local = ready["local_port"];
  const auto hello = nlohmann::json::parse(body_of(http_get(local, "/")));
  EXPECT_EQ(hello["message"], "hello from kinetic serve");
  // The objects of docs/serving.md: a Deployment of one ready replica, and a Service on P.
  const auto d = cloud_->kube().object(kServeDeployments + "/kinetic-" + id);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ((*d)["status"].value("readyReplicas", 0), 1);
  const auto svc = cloud_->kube().object(kServeNs + "/services/kinetic-" + id);
  ASSERT_TRUE(svc.has_value());
  EXPECT_EQ((*svc)["spec"]["ports"][0]["port"], std::stoi(port));
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  expect_nothing_left(id);
}

TEST_F(GkeServe, DetachedItIsRunningAndSurvivesItsPodsDeletion) {
  auto r = kin({"serve", "server.py", "-p", port, "--detach"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  r = kin({"serve", "status", id, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["state"], "running");
  r = kin({"serve", "ls", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto servers = nlohmann::json::parse(r.out)["servers"];
  ASSERT_EQ(servers.size(), 1u) << r.out;
  EXPECT_EQ(servers[0]["id"], id);
  EXPECT_EQ(servers[0]["port"], std::stoi(port));
  r = kin({"status"});
  EXPECT_NE(r.out.find(id + "\trunning (server :" + port + ")\t"), kNpos) << r.out;
  r = kin({"serve", "logs", id});
  EXPECT_NE(r.out.find("serving on port " + port), kNpos) << r.out << r.err;

  const int fwd = spawn_until_output({"port-forward", id, ":" + port, "-o", "json"}, "\"ports\"");
  const int local = forwarded_port(first_line(slurp(out)));
  ASSERT_GT(local, 0) << slurp(err);
  const auto before = nlohmann::json::parse(body_of(http_get(local, "/")));
  auto pods = server_pods(id);
  ASSERT_EQ(pods.size(), 1u);
  const std::string old_pod = pods[0]["metadata"]["name"];
  ASSERT_TRUE(cloud_->kube().remove(kServeNs + "/pods/" + old_pod));
  // The Deployment makes another pod; once the old one is gone and the new one Ready, a new
  // connection through the same forward reaches the new server.
  ASSERT_TRUE(cloud_->kube().wait_for_pods("default", replaced_and_ready(id, old_pod), 60000));
  std::string after;
  EXPECT_TRUE(eventually([&] {
    after = body_of(http_get(local, "/"));
    const auto j = nlohmann::json::parse(after, nullptr, false);
    return j.is_object() && j.value("pid", 0) != before.value("pid", 0);
  })) << after
      << slurp(err);
  ::kill(fwd, SIGINT);
  EXPECT_EQ(Sandbox::wait(fwd), 0) << slurp(err);

  r = kin({"serve", "stop", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_nothing_left(id);
}

// A server's pods are its Deployment's to restart (docs/serving.md "Servers on gke"): deleted
// more times than --max-preemptions (10), its next pod still serves, where a run's bootstrap
// would end the run (exit 197) and the Deployment would crash-loop. Each deletion is ordered on
// the new pod's attempt being in the record (so each deleted pod counts as a preempted
// attempt), then on the old pod being gone and the new one Ready.
TEST_F(GkeServe, ItsPodDeletedMoreOftenThanMaxPreemptionsStillServes) {
  auto r = kin({"serve", "server.py", "-p", port, "--detach"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  for (int deleted = 1; deleted <= 11; ++deleted) {
    const std::string attempt =
        "jobs/" + id + "/results/attempts/" + std::to_string(deleted) + "/status.json";
    ASSERT_TRUE(
        eventually([&] { return cloud_->gcs().object_data(kGkeBucket, attempt).has_value(); }, 60))
        << attempt;
    auto pods = server_pods(id);
    ASSERT_EQ(pods.size(), 1u);
    const std::string old_pod = pods[0]["metadata"]["name"];
    ASSERT_TRUE(cloud_->kube().remove(kServeNs + "/pods/" + old_pod));
    ASSERT_TRUE(cloud_->kube().wait_for_pods("default", replaced_and_ready(id, old_pod), 60000))
        << "no Ready pod after deletion " << deleted;
  }
  r = kin({"serve", "status", id, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["state"], "running") << r.out;
  const int fwd = spawn_until_output({"port-forward", id, ":" + port, "-o", "json"}, "\"ports\"");
  const int local = forwarded_port(first_line(slurp(out)));
  ASSERT_GT(local, 0) << slurp(err);
  // The fake's probe may have been answered by the old pod's server (docs/fakes.md
  // "Deployments"): the new one answers once it listens.
  std::string body;
  EXPECT_TRUE(eventually([&] {
    body = body_of(http_get(local, "/"));
    const auto hello = nlohmann::json::parse(body, nullptr, false);
    return hello.is_object() && hello.value("message", "") == "hello from kinetic serve";
  })) << body
      << slurp(err);
  ::kill(fwd, SIGINT);
  EXPECT_EQ(Sandbox::wait(fwd), 0) << slurp(err);
  EXPECT_EQ(kin({"serve", "stop", id}).exit_code, 0);
  expect_nothing_left(id);
}

// Without the auto-down controller nothing would delete the idle server, which holds its node
// (docs/decisions.md): refused, naming the fix.
TEST_F(GkeServe, IdleStopWithoutAutoDownIsRefusedBeforeAnythingStarts) {
  auto r = kin({"serve", "server.py", "-p", port, "--idle-stop", "10m"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--idle-stop on gke needs the cluster's auto-down controller"), kNpos)
      << r.err;
  EXPECT_NE(r.err.find("`kinetic up --auto-down 1h`"), kNpos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace kinetic::test
