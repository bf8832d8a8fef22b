// Deployments on the fake Kubernetes API (fake_kube_deployments.cpp): a pod from the template,
// owned by the Deployment's ReplicaSet and named DEPLOY-HASH-SUFFIX; Ready only once its
// tcpSocket readiness probe's port accepts; remade when deleted; status.readyReplicas; the pods
// going with the Deployment; Services stored and listed. The readiness port is a socket this test
// binds first and listens on only when the test says so: the order is the test's, not a timing.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_kube_fixture.h"

namespace kinetic::test {
namespace {

using nlohmann::json;

const std::string kDeployments = "/apis/apps/v1/namespaces/default/deployments";
const std::string kDeploymentPods = "/api/v1/namespaces/default/pods";
constexpr int kDeploymentWait = 20000;

// A TCP socket bound to a free port of 127.0.0.1, not yet listening (connections refused).
struct BoundPort {
  int fd = -1;
  int port = 0;
  BoundPort() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~BoundPort() { ::close(fd); }
};

json deployment_body(int port) {
  json container = {{"name", "main"},
                    {"image", "app:1"},
                    {"command", {"sh", "-c", "sleep 300"}},
                    {"ports", {{{"containerPort", port}}}},
                    {"readinessProbe", {{"tcpSocket", {{"port", port}}}, {"periodSeconds", 2}}}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "web"}, {"labels", {{"app", "web"}}}}},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"matchLabels", {{"app", "web"}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", "web"}}}}},
              {"spec",
               {{"restartPolicy", "Always"},
                {"terminationGracePeriodSeconds", 0},
                {"containers", {container}}}}}}}}};
}

class FakeKubeDeploymentTest : public FakeKubeFixture {
 protected:
  FakeKubeDeploymentTest() : FakeKubeFixture("fake-kube-deploy-") {}
  std::vector<json> web_pods() {
    return get(kDeploymentPods + "?labelSelector=app%3Dweb")["items"].get<std::vector<json>>();
  }
  bool wait_ready_replicas(int n) {
    return kube_->wait_for_object(
        kDeployments + "/web",
        [n](const json& d) { return !d.is_null() && d["status"].value("readyReplicas", 0) == n; },
        kDeploymentWait);
  }
};

TEST_F(FakeKubeDeploymentTest, APodIsReadyOnlyOnceItsProbePortAccepts) {
  start();
  BoundPort port;
  ASSERT_EQ(call("POST", kDeployments, deployment_body(port.port)).status, 201);
  ASSERT_TRUE(kube_->wait_for_object(
      kDeployments + "/web", [](const json& d) { return d["status"].value("replicas", 0) == 1; },
      kDeploymentWait));
  auto pods = web_pods();
  ASSERT_EQ(pods.size(), 1u);
  const std::string pod = pods[0]["metadata"]["name"];
  EXPECT_EQ(pod.rfind("web-", 0), 0u) << pod;
  EXPECT_EQ(pod.size(), std::string("web-").size() + 10 + 1 + 5) << pod;
  EXPECT_EQ(pods[0]["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
  EXPECT_TRUE(pods[0]["metadata"]["labels"].contains("pod-template-hash"));
  ASSERT_TRUE(kube_->wait_for_object(
      kDeploymentPods + "/" + pod,
      [](const json& p) { return p["status"].value("phase", "") == "Running"; }, kDeploymentWait));
  // Running, but nothing listens: not Ready, and the Deployment has no ready replica.
  json running = get(kDeploymentPods + "/" + pod);
  EXPECT_FALSE(running["status"]["containerStatuses"][0]["ready"].get<bool>());
  EXPECT_FALSE(get(kDeployments + "/web")["status"].contains("readyReplicas"));

  ASSERT_EQ(::listen(port.fd, 8), 0);
  ASSERT_TRUE(wait_ready_replicas(1));
  json d = get(kDeployments + "/web");
  EXPECT_EQ(d["status"]["availableReplicas"], 1);
  EXPECT_EQ(d["status"]["observedGeneration"], d["metadata"]["generation"]);
}

TEST_F(FakeKubeDeploymentTest, ADeletedPodIsRemadeAndTheDeploymentTakesItsPodsWithIt) {
  start();
  BoundPort port;
  ASSERT_EQ(::listen(port.fd, 8), 0);
  ASSERT_EQ(call("POST", kDeployments, deployment_body(port.port)).status, 201);
  ASSERT_TRUE(wait_ready_replicas(1));
  const std::string first = web_pods()[0]["metadata"]["name"];
  ASSERT_EQ(call("DELETE", kDeploymentPods + "/" + first).status, 200);
  // Another pod, made by the Deployment, Ready on the same port.
  ASSERT_TRUE(kube_->wait_for_pods(
      "default",
      [&](const std::vector<json>& pods) {
        return pods.size() == 1 && pods[0]["metadata"]["name"] != first &&
               fakes::pod_ready(pods[0]);
      },
      kDeploymentWait));
  ASSERT_TRUE(wait_ready_replicas(1));
  auto pods = web_pods();
  ASSERT_EQ(pods.size(), 1u);

  ASSERT_EQ(call("DELETE", kDeployments + "/web").status, 200);
  ASSERT_TRUE(kube_->wait_for_object(
      kDeploymentPods + "/" + pods[0]["metadata"]["name"].get<std::string>(),
      [](const json& p) { return p.is_null(); }, kDeploymentWait));
  EXPECT_TRUE(web_pods().empty());
}

TEST_F(FakeKubeDeploymentTest, ServicesAreStoredAndListed) {
  start();
  json svc = {{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", "web"}, {"labels", {{"app", "web"}}}}},
              {"spec",
               {{"type", "ClusterIP"},
                {"selector", {{"app", "web"}}},
                {"ports", {{{"port", 8000}, {"targetPort", 8000}}}}}}};
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/services", svc).status, 201);
  auto items = get("/api/v1/namespaces/default/services?labelSelector=app%3Dweb")["items"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["spec"]["selector"]["app"], "web");
  ASSERT_EQ(call("DELETE", "/api/v1/namespaces/default/services/web").status, 200);
  EXPECT_TRUE(get("/api/v1/namespaces/default/services?labelSelector=app%3Dweb")["items"].empty());
}

}  // namespace
}  // namespace kinetic::test
