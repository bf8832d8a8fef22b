// The fake Kubernetes API server (tests/fakes/fake_kube.h) driven over HTTPS through kinetic's own
// curl transport: TLS pinning, authentication, the REST verbs and their Status errors, the
// scheduler and cluster autoscaler, the Job controller, the kubelet running real processes,
// watches and log streams. The waits block on the fake's state changes (no sleeps); the only
// wall-clock wait is the one-second activeDeadlineSeconds test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/fake_cloud.h"
#include "fakes/fake_kube.h"
#include "http/transport.h"
#include "integration/fake_kube_fixture.h"

namespace {

using json = nlohmann::json;
using kinetic::fakes::FakeKube;
using kinetic::fakes::FakeKubeOptions;
using kinetic::fakes::FakeNodePool;
using kinetic::http::Request;
using kinetic::http::Response;
using kinetic::http::TransportError;

constexpr int kWait = 10000;  // ms; a generous bound, never a delay
const std::string kJobs = "/apis/batch/v1/namespaces/default/jobs";
const std::string kPods = "/api/v1/namespaces/default/pods";

json job_body(const std::string& name, std::vector<std::string> command, int backoff_limit = 0) {
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", name}, {"labels", {{"app", "kinetic-test"}}}}},
      {"spec",
       {{"backoffLimit", backoff_limit},
        {"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"containers", {{{"name", "main"}, {"image", "app:1"}, {"command", command}}}}}}}}}}};
}

bool has_condition(const json& obj, const std::string& type, const std::string& reason = {}) {
  if (obj.is_null() || !obj.contains("status")) return false;
  for (auto& c : obj["status"].value("conditions", json::array()))
    if (c.value("type", "") == type && c.value("status", "") == "True" &&
        (reason.empty() || c.value("reason", "") == reason))
      return true;
  return false;
}

class FakeKubeTest : public kinetic::test::FakeKubeFixture {
 protected:
  FakeKubeTest() : FakeKubeFixture("fake-kube-test-") {}
  json create_job(const json& body) {
    auto r = call("POST", kJobs, body);
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body);
  }
  bool wait_job(const std::string& name, const std::string& condition,
                const std::string& reason = {}) {
    return kube_->wait_for_object(
        kJobs + "/" + name, [&](const json& j) { return has_condition(j, condition, reason); },
        kWait);
  }
  std::vector<json> job_pods(const std::string& job) {
    return get(kPods + "?labelSelector=job-name%3D" + job)["items"].get<std::vector<json>>();
  }
  // Streams a follow=true log until ON_CHUNK returns false or the stream ends.
  std::string follow(const std::string& pod,
                     const std::function<bool(const std::string&)>& on_chunk) {
    std::string got;
    Request r;
    r.url = kube_->url() + kPods + "/" + pod + "/log?follow=true&container=main";
    r.headers.push_back({"Authorization", "Bearer test-token"});
    r.on_body = [&](std::string_view chunk) {
      got += chunk;
      return on_chunk(got);
    };
    try {
      auto res = http_->send(r);
      EXPECT_EQ(res.status, 200) << res.body;
    } catch (const TransportError&) {
      // aborted by ON_CHUNK, or cut by the server
    }
    return got;
  }
  bool has_event(const std::string& object, const std::string& reason, json* out = nullptr) {
    for (auto& e : kube_->events_for("default", object))
      if (e.value("reason", "") == reason) {
        if (out) *out = e;
        return true;
      }
    return false;
  }
};

TEST_F(FakeKubeTest, TlsIsPinnedAndATokenIsRequired) {
  start();
  auto v = call("GET", "/version");
  ASSERT_EQ(v.status, 200);
  EXPECT_EQ(json::parse(v.body)["major"], "1");

  auto unpinned = kinetic::http::make_curl_transport();
  Request r;
  r.url = kube_->url() + "/version";
  r.headers.push_back({"Authorization", "Bearer test-token"});
  EXPECT_THROW(unpinned->send(r), TransportError);

  auto anon = call("GET", kPods, nullptr, "");
  EXPECT_EQ(anon.status, 401);
  EXPECT_EQ(json::parse(anon.body),
            json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                            "message":"Unauthorized","reason":"Unauthorized","code":401})"));
}

TEST_F(FakeKubeTest, ExpectedTokenIsEnforced) {
  FakeKubeOptions o;
  o.expected_token = "right";
  start(o);
  EXPECT_EQ(call("GET", "/api/v1", nullptr, "wrong").status, 401);
  EXPECT_EQ(call("GET", "/api/v1", nullptr, "right").status, 200);
}

TEST_F(FakeKubeTest, CreateGetListDeleteJob) {
  start();
  auto created = create_job(job_body("crud", {"true"}));
  EXPECT_FALSE(created["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE(created["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_FALSE(created["metadata"]["creationTimestamp"].get<std::string>().empty());
  EXPECT_EQ(created["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
            created["metadata"]["uid"]);

  auto again = call("POST", kJobs, job_body("crud", {"true"}));
  EXPECT_EQ(again.status, 409);
  auto conflict = json::parse(again.body);
  EXPECT_EQ(conflict["reason"], "AlreadyExists");
  EXPECT_EQ(conflict["message"], "jobs.batch \"crud\" already exists");

  auto bad = job_body("no-containers", {"true"});
  bad["spec"]["template"]["spec"].erase("containers");
  auto invalid = call("POST", kJobs, bad);
  EXPECT_EQ(invalid.status, 422);
  auto inv = json::parse(invalid.body);
  EXPECT_EQ(inv["reason"], "Invalid");
  EXPECT_EQ(inv["details"]["causes"][0]["field"], "spec.template.spec.containers");
  EXPECT_EQ(call("POST", kJobs, job_body("Bad_Name", {"true"})).status, 422);
  EXPECT_EQ(call("POST", kJobs, json("not an object")).status, 400);

  auto got = get(kJobs + "/crud");
  EXPECT_EQ(got["metadata"]["uid"], created["metadata"]["uid"]);
  auto list = get(kJobs + "?labelSelector=app%3Dkinetic-test");
  EXPECT_EQ(list["kind"], "JobList");
  EXPECT_FALSE(list["metadata"]["resourceVersion"].get<std::string>().empty());
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(get(kJobs + "?labelSelector=app%20notin%20(kinetic-test)")["items"].size(), 0u);
  EXPECT_EQ(get(kJobs + "?labelSelector=app%2Cjob-name")["items"].size(), 0u);
  EXPECT_EQ(get(kJobs + "?labelSelector=app%21%3Dother")["items"].size(), 1u);
  ASSERT_TRUE(wait_job("crud", "Complete"));
  auto counts = kube_->request_counts();
  EXPECT_EQ(counts["POST /apis/batch/v1/namespaces/{ns}/jobs"], 5);
  EXPECT_EQ(counts["GET /apis/batch/v1/namespaces/{ns}/jobs/{name}"], 1);

  // Without a propagation policy the Job's pods are orphaned, with the server's warning.
  auto del = call("DELETE", kJobs + "/crud");
  EXPECT_EQ(del.status, 200);
  auto warning = del.header("Warning");
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("child pods are preserved by default"), std::string::npos);
  EXPECT_EQ(job_pods("crud").size(), 1u);
  auto gone = call("GET", kJobs + "/crud");
  EXPECT_EQ(gone.status, 404);
  auto nf = json::parse(gone.body);
  EXPECT_EQ(nf["message"], "jobs.batch \"crud\" not found");
  EXPECT_EQ(nf["details"], json({{"name", "crud"}, {"group", "batch"}, {"kind", "jobs"}}));
}

TEST_F(FakeKubeTest, FailingCommandFailsTheJobWithItsExitCodeAndLogs) {
  start();
  create_job(job_body("fails", {"sh", "-c", "echo hi; exit 3"}));
  ASSERT_TRUE(wait_job("fails", "Failed", "BackoffLimitExceeded"));
  auto pods = job_pods("fails");
  ASSERT_EQ(pods.size(), 1u);
  auto& pod = pods[0];
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  auto term = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(term["exitCode"], 3);
  EXPECT_EQ(term["reason"], "Error");
  auto name = pod["metadata"]["name"].get<std::string>();
  EXPECT_EQ(name.rfind("fails-", 0), 0u);
  EXPECT_EQ(pod["metadata"]["labels"]["batch.kubernetes.io/job-name"], "fails");
  auto log = call("GET", kPods + "/" + name + "/log?container=main");
  EXPECT_EQ(log.status, 200);
  EXPECT_EQ(log.body, "hi\n");
  auto job = get(kJobs + "/fails");
  EXPECT_EQ(job["status"]["failed"], 1);
  EXPECT_FALSE(job["status"].contains("active"));
  // events of the pod, by field selector
  auto events =
      get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DPod%2C"
          "involvedObject.name%3D" +
          name)["items"];
  std::set<std::string> reasons;
  for (auto& e : events) reasons.insert(e["reason"].get<std::string>());
  for (auto* want : {"Scheduled", "Pulling", "Pulled", "Created", "Started"})
    EXPECT_TRUE(reasons.count(want)) << want;
}

TEST_F(FakeKubeTest, BackoffLimitOneRunsTwoPods) {
  start();
  create_job(job_body("retry", {"sh", "-c", "exit 1"}, 1));
  ASSERT_TRUE(wait_job("retry", "Failed", "BackoffLimitExceeded"));
  EXPECT_EQ(job_pods("retry").size(), 2u);
  EXPECT_EQ(get(kJobs + "/retry")["status"]["failed"], 2);
}

TEST_F(FakeKubeTest, IndexedJobCompletes) {
  start();
  auto body = job_body("indexed", {"sh", "-c", "echo index=$JOB_COMPLETION_INDEX"});
  body["spec"]["completionMode"] = "Indexed";
  body["spec"]["completions"] = 2;
  body["spec"]["parallelism"] = 2;
  create_job(body);
  ASSERT_TRUE(wait_job("indexed", "Complete"));
  auto job = get(kJobs + "/indexed");
  EXPECT_EQ(job["status"]["succeeded"], 2);
  EXPECT_EQ(job["status"]["completedIndexes"], "0-1");
  std::set<std::string> logs;
  for (auto& p : job_pods("indexed"))
    logs.insert(call("GET", kPods + "/" + p["metadata"]["name"].get<std::string>() + "/log").body);
  EXPECT_EQ(logs, (std::set<std::string>{"index=0\n", "index=1\n"}));
}

TEST_F(FakeKubeTest, SecretKeyRefReachesTheProcess) {
  FakeKubeOptions o;
  o.pod_env["FROM_NODE"] = "node-env";
  start(o);
  auto body = job_body("secret", {"sh", "-c", "echo $TOKEN $FROM_NODE; pwd; echo $HOME"});
  body["spec"]["template"]["spec"]["containers"][0]["env"] = {
      {{"name", "TOKEN"},
       {"valueFrom", {{"secretKeyRef", {{"name", "creds"}, {"key", "token"}}}}}}};
  create_job(body);
  // No secret yet: the container waits in CreateContainerConfigError.
  ASSERT_TRUE(kube_->wait_for_event("default", "Failed", kWait));
  auto pods = job_pods("secret");
  ASSERT_EQ(pods.size(), 1u);
  auto pod_name = pods[0]["metadata"]["name"].get<std::string>();
  auto waiting = pods[0]["status"]["containerStatuses"][0]["state"]["waiting"];
  EXPECT_EQ(waiting["reason"], "CreateContainerConfigError");
  EXPECT_EQ(waiting["message"], "secret \"creds\" not found");
  auto early = call("GET", kPods + "/" + pod_name + "/log");
  EXPECT_EQ(early.status, 400);
  EXPECT_EQ(json::parse(early.body)["message"],
            "container \"main\" in pod \"" + pod_name +
                "\" is waiting to start: CreateContainerConfigError");

  json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "creds"}}},
                 {"data", {{"token", "czNjcjN0"}}}};  // "s3cr3t"
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/secrets", secret).status, 201);
  ASSERT_TRUE(wait_job("secret", "Complete"));
  auto log = call("GET", kPods + "/" + pod_name + "/log").body;
  auto lines = log.substr(0, log.find('\n'));
  EXPECT_EQ(lines, "s3cr3t node-env");
  // cwd and HOME are the pod's own directory under work_root
  EXPECT_NE(log.find(dir_ + "/pods/"), std::string::npos) << log;
}

TEST_F(FakeKubeTest, NoMatchingPoolIsUnschedulable) {
  start();
  auto body = job_body("nowhere", {"true"});
  body["spec"]["template"]["spec"]["nodeSelector"] = {
      {"cloud.google.com/gke-accelerator", "nvidia-l4"}};
  create_job(body);
  ASSERT_TRUE(kube_->wait_for_event("default", "NotTriggerScaleUp", kWait));
  auto pods = job_pods("nowhere");
  ASSERT_EQ(pods.size(), 1u);
  auto name = pods[0]["metadata"]["name"].get<std::string>();
  json sched;
  for (auto& c : pods[0]["status"]["conditions"])
    if (c["type"] == "PodScheduled") sched = c;
  EXPECT_EQ(sched["status"], "False");
  EXPECT_EQ(sched["reason"], "Unschedulable");
  EXPECT_EQ(sched["message"],
            "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  json ev;
  ASSERT_TRUE(has_event(name, "NotTriggerScaleUp", &ev));
  EXPECT_EQ(ev["message"],
            "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector");
  EXPECT_EQ(ev["source"]["component"], "cluster-autoscaler");
  ASSERT_TRUE(has_event(name, "FailedScheduling", &ev));
  EXPECT_EQ(ev["type"], "Warning");
}

FakeNodePool tpu_pool() {
  FakeNodePool pool;
  pool.name = "tpu";
  pool.labels = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                 {"cloud.google.com/gke-tpu-topology", "2x2"}};
  pool.taints = {{"google.com/tpu", "present", "NoSchedule"}};
  pool.allocatable = {{"google.com/tpu", "4"}};
  pool.nodes = 0;
  pool.max_nodes = 1;
  return pool;
}

json tpu_job(const std::string& name) {
  auto body = job_body(name, {"sh", "-c", "echo on tpu"});
  auto& spec = body["spec"]["template"]["spec"];
  spec["nodeSelector"] = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                          {"cloud.google.com/gke-tpu-topology", "2x2"}};
  spec["tolerations"] = {
      {{"key", "google.com/tpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  spec["containers"][0]["resources"] = {{"limits", {{"google.com/tpu", "4"}}}};
  return body;
}

TEST_F(FakeKubeTest, ScaleUpFromZeroThenRuns) {
  FakeKubeOptions o;
  o.cluster = "c1";
  o.project = "p1";
  start(o);
  kube_->set_node_pool(tpu_pool());
  create_job(tpu_job("scale"));
  ASSERT_TRUE(wait_job("scale", "Complete"));
  auto pods = job_pods("scale");
  ASSERT_EQ(pods.size(), 1u);
  auto name = pods[0]["metadata"]["name"].get<std::string>();
  json ev;
  ASSERT_TRUE(has_event(name, "TriggeredScaleUp", &ev));
  auto msg = ev["message"].get<std::string>();
  EXPECT_EQ(msg.rfind("pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/p1/"
                      "zones/us-central1-a/instanceGroups/gke-c1-tpu-",
                      0),
            0u)
      << msg;
  EXPECT_NE(msg.find("-grp 0->1 (max: 1)}]"), std::string::npos) << msg;
  auto node = pods[0]["spec"]["nodeName"].get<std::string>();
  EXPECT_EQ(node.rfind("gke-c1-tpu-", 0), 0u);
  auto nodes = get("/api/v1/nodes?labelSelector=cloud.google.com%2Fgke-nodepool%3Dtpu")["items"];
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]["status"]["allocatable"]["google.com/tpu"], "4");
  EXPECT_EQ(kube_->node_pools().size(), 2u);
  // A second TPU job cannot fit while... the first is done, so it reuses the node.
  create_job(tpu_job("scale2"));
  ASSERT_TRUE(wait_job("scale2", "Complete"));
  EXPECT_EQ(
      get("/api/v1/nodes?labelSelector=cloud.google.com%2Fgke-nodepool%3Dtpu")["items"].size(), 1u);
}

TEST_F(FakeKubeTest, FailedScaleUp) {
  start();
  kube_->set_node_pool(tpu_pool());
  kube_->fail_scale_up("tpu", "GCE quota exceeded");
  create_job(tpu_job("quota"));
  ASSERT_TRUE(kube_->wait_for_event("default", "FailedScaleUp", kWait));
  auto pods = job_pods("quota");
  ASSERT_EQ(pods.size(), 1u);
  json ev;
  ASSERT_TRUE(has_event(pods[0]["metadata"]["name"], "FailedScaleUp", &ev));
  EXPECT_EQ(ev["message"],
            "Node scale up in zones us-central1-a associated with this pod failed: GCE quota "
            "exceeded. Pod is at risk of not being scheduled.");
  EXPECT_EQ(ev["type"], "Warning");
  EXPECT_TRUE(pods[0]["spec"].value("nodeName", "").empty());
}

// A pool of a machine type Compute Engine does not sell on demand, made without Spot or a
// reservation, exists but never gets a node: each scale-up fails, as GCE refuses the VM.
TEST_F(FakeKubeTest, APoolNotSoldOnDemandNeverScalesUp) {
  const auto from_gke = [](const json& config) {
    return kinetic::fakes::node_pool_from_gke("c1", {{"name", "h100"}, {"config", config}});
  };
  const json a3 = {{"machineType", "a3-highgpu-1g"}};
  EXPECT_NE(from_gke(a3).unobtainable, "");
  EXPECT_EQ(from_gke({{"machineType", "a3-highgpu-1g"}, {"spot", true}}).unobtainable, "");
  const json reserved = {{"consumeReservationType", "SPECIFIC_RESERVATION"}};
  EXPECT_NE(
      from_gke({{"machineType", "a3-highgpu-1g"}, {"reservationAffinity", reserved}}).unobtainable,
      "")
      << "A3 High reservations are for 8 GPUs";
  EXPECT_EQ(
      from_gke({{"machineType", "a4-highgpu-8g"}, {"reservationAffinity", reserved}}).unobtainable,
      "");
  EXPECT_EQ(from_gke({{"machineType", "a3-highgpu-8g"}}).unobtainable, "");

  start();
  FakeNodePool pool = tpu_pool();
  pool.unobtainable = from_gke(a3).unobtainable;
  kube_->set_node_pool(pool);
  create_job(tpu_job("standard"));
  ASSERT_TRUE(kube_->wait_for_event("default", "FailedScaleUp", kWait));
  auto pods = job_pods("standard");
  ASSERT_EQ(pods.size(), 1u);
  json ev;
  ASSERT_TRUE(has_event(pods[0]["metadata"]["name"], "FailedScaleUp", &ev));
  EXPECT_NE(ev["message"].get<std::string>().find(
                "machine type a3-highgpu-1g is not available with the STANDARD provisioning model"),
            std::string::npos)
      << ev["message"];
  EXPECT_TRUE(pods[0]["spec"].value("nodeName", "").empty());
}

TEST_F(FakeKubeTest, UnpullableImageBacksOff) {
  FakeKubeOptions o;
  o.image_pullable = [](const std::string& image, std::string* why) {
    if (image != "missing:1") return true;
    *why = "manifest unknown";
    return false;
  };
  start(o);
  auto body = job_body("pull", {"true"});
  body["spec"]["template"]["spec"]["containers"][0]["image"] = "missing:1";
  create_job(body);
  ASSERT_TRUE(kube_->wait_for_event("default", "BackOff", kWait));
  auto pods = job_pods("pull");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["status"]["phase"], "Pending");
  EXPECT_EQ(pods[0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ImagePullBackOff");
  bool found = false;
  for (auto& e : kube_->events_for("default", pods[0]["metadata"]["name"]))
    found = found || e["message"] == "Failed to pull image \"missing:1\": manifest unknown";
  EXPECT_TRUE(found);
  EXPECT_EQ(kube_->running_pods(), 0);
}

TEST_F(FakeKubeTest, ActiveDeadlineTerminatesThePod) {
  FakeKubeOptions o;
  o.default_grace_seconds = 5;
  start(o);
  auto body = job_body("deadline", {"sleep", "60"});
  body["spec"]["activeDeadlineSeconds"] = 1;
  create_job(body);
  ASSERT_TRUE(wait_job("deadline", "Failed", "DeadlineExceeded"));
  EXPECT_TRUE(kube_->wait_idle(kWait));
  auto job = get(kJobs + "/deadline");
  EXPECT_EQ(job["status"]["failed"], 1);
  EXPECT_TRUE(job_pods("deadline").empty());  // the controller deleted it
}

TEST_F(FakeKubeTest, WatchReplaysFromAResourceVersionAndExpires) {
  start(FakeKubeOptions{}, false);
  const std::string secrets = "/api/v1/namespaces/default/secrets";
  auto rv0 = get(secrets)["metadata"]["resourceVersion"].get<std::string>();
  for (const char* n : {"a", "b"})
    ASSERT_EQ(
        call("POST", secrets, {{"metadata", {{"name", n}}}, {"stringData", {{"k", "v"}}}}).status,
        201);
  ASSERT_EQ(call("DELETE", secrets + "/a").status, 200);

  // timeoutSeconds=0: the replay, a bookmark, and the end of the stream
  auto r = call("GET", secrets + "?watch=1&resourceVersion=" + rv0 +
                           "&allowWatchBookmarks=true&timeoutSeconds=0");
  ASSERT_EQ(r.status, 200);
  std::vector<json> events;
  std::stringstream ss(r.body);
  for (std::string line; std::getline(ss, line);) events.push_back(json::parse(line));
  ASSERT_EQ(events.size(), 4u) << r.body;
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "a");
  EXPECT_EQ(events[1]["object"]["metadata"]["name"], "b");
  EXPECT_EQ(events[2]["type"], "DELETED");
  EXPECT_EQ(events[3]["type"], "BOOKMARK");
  auto last_rv = events[2]["object"]["metadata"]["resourceVersion"].get<std::string>();

  // A live watch gets an in-stream 410 when the history expires.
  std::string live;
  std::thread watcher([&] {
    auto t = kinetic::http::make_curl_transport({.ca_pem = kube_->ca_pem()});
    Request w;
    w.url = kube_->url() + secrets + "?watch=true&resourceVersion=" + last_rv;
    w.headers.push_back({"Authorization", "Bearer t"});
    w.on_body = [&](std::string_view chunk) {
      live += chunk;
      if (live.find("\"c\"") != std::string::npos && live.find("ERROR") == std::string::npos)
        kube_->expire_watches();
      return true;
    };
    t->send(w);
  });
  ASSERT_EQ(call("POST", secrets, {{"metadata", {{"name", "c"}}}}).status, 201);
  watcher.join();
  auto nl = live.find('\n');
  ASSERT_NE(nl, std::string::npos);
  EXPECT_EQ(json::parse(live.substr(0, nl))["object"]["metadata"]["name"], "c");
  auto err = json::parse(live.substr(nl + 1));
  EXPECT_EQ(err["type"], "ERROR");
  EXPECT_EQ(err["object"]["code"], 410);
  EXPECT_EQ(err["object"]["reason"], "Expired");

  auto old = call("GET", secrets + "?watch=1&resourceVersion=" + rv0);
  EXPECT_EQ(old.status, 410);
  EXPECT_EQ(json::parse(old.body)["reason"], "Expired");
}

TEST_F(FakeKubeTest, FollowStreamsLinesAsTheyAreProduced) {
  start();
  auto fifo = dir_ + "/go";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  create_job(job_body("follow", {"sh", "-c", "echo one; read x < " + fifo + "; echo two"}));
  std::string pod;
  ASSERT_TRUE(kube_->wait_for_object(
      kJobs + "/follow", [](const json& j) { return j["status"].value("active", 0) == 1; }, kWait));
  pod = job_pods("follow")[0]["metadata"]["name"].get<std::string>();
  ASSERT_TRUE(kube_->wait_for_object(
      kPods + "/" + pod, [](const json& p) { return p["status"].value("phase", "") == "Running"; },
      kWait));
  bool released = false;
  auto got = follow(pod, [&](const std::string& so_far) {
    if (!released && so_far == "one\n") {  // "two" cannot exist before we open the fifo
      released = true;
      int fd = ::open(fifo.c_str(), O_WRONLY);
      EXPECT_EQ(::write(fd, "go\n", 3), 3);
      ::close(fd);
    }
    return true;
  });
  EXPECT_TRUE(released);
  EXPECT_EQ(got, "one\ntwo\n");

  // timestamps=true and sinceTime (inclusive, as the kubelet filters)
  auto stamped = call("GET", kPods + "/" + pod + "/log?timestamps=true").body;
  std::vector<std::string> lines;
  std::stringstream ss(stamped);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u);
  auto stamp2 = lines[1].substr(0, lines[1].find(' '));
  EXPECT_EQ(stamp2.size(), 30u) << stamp2;  // 2025-01-01T00:00:00.123456789Z
  EXPECT_EQ(lines[1].substr(stamp2.size()), " two");
  EXPECT_EQ(call("GET", kPods + "/" + pod + "/log?sinceTime=" + stamp2).body, "two\n");
  EXPECT_EQ(call("GET", kPods + "/" + pod + "/log?tailLines=1").body, "two\n");
  EXPECT_EQ(call("GET", kPods + "/" + pod + "/log?limitBytes=2").body, "on");
}

TEST_F(FakeKubeTest, LogStreamCanBeCut) {
  start();
  create_job(job_body("cut", {"sh", "-c", "echo hello; echo world"}));
  ASSERT_TRUE(wait_job("cut", "Complete"));
  auto pod = job_pods("cut")[0]["metadata"]["name"].get<std::string>();
  kube_->cut_next_log_stream_after(3);
  std::string got;
  Request r;
  r.url = kube_->url() + kPods + "/" + pod + "/log?follow=true";
  r.headers.push_back({"Authorization", "Bearer t"});
  r.on_body = [&](std::string_view chunk) {
    got += chunk;
    return true;
  };
  EXPECT_THROW(http_->send(r), TransportError);
  EXPECT_EQ(got, "hel");
  http_ = kinetic::http::make_curl_transport({.ca_pem = kube_->ca_pem()});
  EXPECT_EQ(follow(pod, [](const std::string&) { return true; }), "hello\nworld\n");
}

TEST_F(FakeKubeTest, BackgroundDeleteSendsSigterm) {
  start();
  auto marker = dir_ + "/terminated";
  create_job(job_body("term", {"sh", "-c",
                               "trap 'echo term > " + marker +
                                   "; exit 0' TERM; echo ready; "
                                   "sleep 60 & wait"}));
  ASSERT_TRUE(kube_->wait_for_object(
      kJobs + "/term", [](const json& j) { return j["status"].value("active", 0) == 1; }, kWait));
  auto pod = job_pods("term")[0]["metadata"]["name"].get<std::string>();
  ASSERT_TRUE(kube_->wait_for_object(
      kPods + "/" + pod, [](const json& p) { return p["status"].value("phase", "") == "Running"; },
      kWait));
  follow(pod, [](const std::string& so_far) { return so_far.find("ready") == std::string::npos; });
  http_ = kinetic::http::make_curl_transport({.ca_pem = kube_->ca_pem()});
  EXPECT_EQ(kube_->running_pods(), 1);
  auto del =
      call("DELETE", kJobs + "/term",
           {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}});
  EXPECT_EQ(del.status, 200);
  EXPECT_FALSE(del.header("Warning").has_value());
  ASSERT_TRUE(kube_->wait_idle(kWait));
  EXPECT_TRUE(std::filesystem::exists(marker));
  ASSERT_TRUE(kube_->wait_for_object(
      kPods + "/" + pod, [](const json& p) { return p.is_null(); }, kWait));
  EXPECT_FALSE(kube_->object(kJobs + "/term").has_value());
  EXPECT_TRUE(has_event(pod, "Killing"));
}

TEST_F(FakeKubeTest, PodIgnoringSigtermIsKilledAfterTheGracePeriod) {
  start();
  // A bare pod (a Job would replace it while it terminates, as TerminatingOrFailed does).
  json pod_body = {{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", {{"name", "stubborn"}}},
                   {"spec",
                    {{"restartPolicy", "Never"},
                     {"containers",
                      {{{"name", "main"},
                        {"image", "app:1"},
                        {"command", {"sh", "-c", "trap '' TERM; echo ready; sleep 60"}}}}}}}};
  ASSERT_EQ(call("POST", kPods, pod_body).status, 201);
  ASSERT_TRUE(kube_->wait_for_object(
      kPods + "/stubborn",
      [](const json& p) { return p["status"].value("phase", "") == "Running"; }, kWait));
  follow("stubborn",
         [](const std::string& so_far) { return so_far.find("ready") == std::string::npos; });
  http_ = kinetic::http::make_curl_transport({.ca_pem = kube_->ca_pem()});
  auto del = call("DELETE", kPods + "/stubborn", {{"gracePeriodSeconds", 1}});
  ASSERT_EQ(del.status, 200);
  auto deleting = json::parse(del.body);
  EXPECT_EQ(deleting["metadata"]["deletionGracePeriodSeconds"], 1);
  EXPECT_TRUE(deleting["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(kube_->running_pods(), 1);   // SIGTERM is ignored
  ASSERT_TRUE(kube_->wait_idle(kWait));  // SIGKILL after one second
  ASSERT_TRUE(kube_->wait_for_object(
      kPods + "/stubborn", [](const json& p) { return p.is_null(); }, kWait));
  EXPECT_TRUE(has_event("stubborn", "Killing"));
}

TEST_F(FakeKubeTest, RemovingANodePoolFailsItsPods) {
  start();
  create_job(job_body("lost", {"sleep", "60"}));
  ASSERT_TRUE(kube_->wait_for_object(
      kJobs + "/lost", [](const json& j) { return j["status"].value("active", 0) == 1; }, kWait));
  auto pod = job_pods("lost")[0]["metadata"]["name"].get<std::string>();
  ASSERT_TRUE(kube_->wait_for_object(
      kPods + "/" + pod, [](const json& p) { return p["status"].value("phase", "") == "Running"; },
      kWait));
  kube_->remove_node_pool("cpu");
  EXPECT_TRUE(kube_->node_pools().empty());
  EXPECT_TRUE(get("/api/v1/nodes")["items"].empty());
  ASSERT_TRUE(wait_job("lost", "Failed", "BackoffLimitExceeded"));
  EXPECT_TRUE(kube_->wait_idle(kWait));
}

TEST_F(FakeKubeTest, FailNextAnswersAStatus) {
  start();
  kube_->fail_next(1, 429, "GET /api/v1/namespaces/{ns}/pods");
  auto r = call("GET", kPods);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.header("Retry-After"), "1");
  EXPECT_EQ(json::parse(r.body)["reason"], "TooManyRequests");
  EXPECT_EQ(call("GET", kPods).status, 200);
}

// The write quota (issue #30 point 3) answers as API Priority and Fairness does: 429, a
// Retry-After and Go's plain text, not a Status. A rate so low that no token comes back during
// the test: what passes is decided by the order of the requests alone.
TEST_F(FakeKubeTest, WriteQuotaAnswersAsPriorityAndFairness) {
  start();
  kube_->set_write_quota(0.001);
  EXPECT_EQ(call("POST", kJobs, job_body("one", {"true"})).status, 201);
  auto r = call("POST", kJobs, job_body("two", {"true"}));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.header("Retry-After"), "1000");
  EXPECT_EQ(r.header("Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(r.body, "Too many requests, please try again later.\n");
  EXPECT_TRUE(r.header("X-Kubernetes-PF-FlowSchema-UID"));
  EXPECT_FALSE(kube_->object(kJobs + "/two"));
  EXPECT_EQ(call("GET", kJobs + "/one").status, 200);  // reads pass
  EXPECT_EQ(kube_->request_counts()["rate_limited"], 1);
  kube_->set_write_quota(0);
  EXPECT_EQ(call("POST", kJobs, job_body("two", {"true"})).status, 201);
}

TEST_F(FakeKubeTest, JobSetCreatesChildJobsAndCompletes) {
  start();
  json js = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
             {"kind", "JobSet"},
             {"metadata", {{"name", "js"}}},
             {"spec",
              {{"replicatedJobs",
                {{{"name", "slice"},
                  {"replicas", 2},
                  {"template", {{"spec", job_body("x", {"true"})["spec"]}}}}}}}}};
  ASSERT_EQ(call("POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets", js).status,
            201);
  ASSERT_TRUE(kube_->wait_for_object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/js",
      [](const json& j) { return j["status"].value("terminalState", "") == "Completed"; }, kWait));
  EXPECT_TRUE(kube_->object(kJobs + "/js-slice-0").has_value());
  EXPECT_TRUE(kube_->object(kJobs + "/js-slice-1").has_value());
  EXPECT_TRUE(kube_->object("/api/v1/namespaces/default/services/js").has_value());
  EXPECT_EQ(call("DELETE", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/js").status,
            200);
  EXPECT_FALSE(kube_->object(kJobs + "/js-slice-0").has_value());
}

// Multislice (docs/multihost.md "Multislice"): a JobSet with JobSet's exclusive-topology
// annotation places each child Job alone on a node pool, though the first pool has room for more
// (pool a's third node would take slice 1's first host without it), and GKE's TPU webhook gives
// every pod of a replicated Job of two replicas the MEGASCALE_* variables of its slice.
TEST_F(FakeKubeTest, ExclusiveTopologyPutsEachSliceOnAPoolOfItsOwnWithMegascale) {
  start();
  for (const char* name : {"tpu-a", "tpu-b"}) {
    FakeNodePool pool = tpu_pool();
    pool.name = name;
    pool.min_nodes = pool.max_nodes = pool.nodes = 3;
    kube_->set_node_pool(pool);
  }
  json job = tpu_job("x");
  job["spec"]["parallelism"] = 2;
  job["spec"]["completions"] = 2;
  job["spec"]["completionMode"] = "Indexed";
  json js = {
      {"apiVersion", "jobset.x-k8s.io/v1alpha2"},
      {"kind", "JobSet"},
      {"metadata",
       {{"name", "ms"},
        {"annotations",
         {{"alpha.jobset.sigs.k8s.io/exclusive-topology", "cloud.google.com/gke-nodepool"}}}}},
      {"spec",
       {{"replicatedJobs",
         {{{"name", "slice"}, {"replicas", 2}, {"template", {{"spec", job["spec"]}}}}}}}}};
  ASSERT_EQ(call("POST", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets", js).status,
            201);
  ASSERT_TRUE(kube_->wait_for_object(
      "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/ms",
      [](const json& j) { return j["status"].value("terminalState", "") == "Completed"; }, kWait));
  std::map<std::string, std::set<std::string>> pools_of_slice;
  for (const char* slice : {"0", "1"}) {
    for (const auto& pod : job_pods(std::string("ms-slice-") + slice)) {
      auto node = kube_->object("/api/v1/nodes/" + pod["spec"].value("nodeName", std::string()));
      ASSERT_TRUE(node);
      pools_of_slice[slice].insert(
          (*node)["metadata"]["labels"].value("cloud.google.com/gke-nodepool", ""));
      std::map<std::string, std::string> env;
      for (const auto& e : pod["spec"]["containers"][0]["env"])
        env[e.value("name", "")] = e.value("value", "");
      EXPECT_EQ(env["MEGASCALE_SLICE_ID"], slice);
      EXPECT_EQ(env["MEGASCALE_NUM_SLICES"], "2");
      EXPECT_EQ(env["MEGASCALE_COORDINATOR_ADDRESS"], "ms-slice-0-0.ms");
      EXPECT_EQ(env["TPU_WORKER_HOSTNAMES"],
                std::string("ms-slice-") + slice + "-0.ms,ms-slice-" + slice + "-1.ms");
    }
  }
  ASSERT_EQ(pools_of_slice["0"].size(), 1u) << "slice 0 on one pool";
  ASSERT_EQ(pools_of_slice["1"].size(), 1u) << "slice 1 on one pool";
  EXPECT_NE(*pools_of_slice["0"].begin(), *pools_of_slice["1"].begin()) << "each on its own";
}

}  // namespace

namespace {

// A Job whose pod mounts a Cloud Storage FUSE CSI volume at MOUNT_PATH and lists it;
// ANNOTATED: the pod template asks GKE for the driver's sidecar.
json gcs_fuse_job(const std::string& name, const std::string& mount_path, bool annotated) {
  json body = job_body(name, {"sh", "-c", "ls \"$KINETIC_DATA_MOUNT_ROOT/in\""});
  json& tmpl = body["spec"]["template"];
  if (annotated) tmpl["metadata"]["annotations"]["gke-gcsfuse/volumes"] = "true";
  tmpl["spec"]["volumes"] = {
      {{"name", "data-0"},
       {"csi",
        {{"driver", "gcsfuse.csi.storage.gke.io"},
         {"readOnly", true},
         {"volumeAttributes", {{"bucketName", "b1"}, {"mountOptions", "implicit-dirs"}}}}}}};
  tmpl["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", "data-0"}, {"mountPath", mount_path}, {"readOnly", true}}};
  return body;
}

}  // namespace

// GKE's Cloud Storage FUSE CSI driver (docs/fakes.md): without the add-on, or without the pod
// annotation that brings its sidecar, the pod waits with a FailedMount event, as on GKE; with
// both, the driver's mount is where the pod looks.
TEST_F(FakeKubeTest, CsiGcsFuseVolumeNeedsTheDriverAndTheAnnotation) {
  start();  // no driver
  create_job(gcs_fuse_job("no-driver", "/mnt/kinetic-data/in", true));
  ASSERT_TRUE(kube_->wait_for_event("default", "FailedMount", kWait));
  json event;
  ASSERT_TRUE(has_event(job_pods("no-driver")[0]["metadata"]["name"], "FailedMount", &event));
  EXPECT_NE(event["message"].get<std::string>().find(
                "driver name gcsfuse.csi.storage.gke.io not found in the list of registered CSI "
                "drivers"),
            std::string::npos)
      << event;
  EXPECT_EQ(job_pods("no-driver")[0]["status"]["phase"], "Pending");
}

TEST_F(FakeKubeTest, CsiGcsFuseVolumeIsMountedWithTheAnnotation) {
  FakeKubeOptions options;
  std::vector<std::string> mounted;
  options.gcs_fuse_mount = [&](const std::string& ns, const std::string& ksa,
                               const json& attributes, const std::string& dir, bool read_only) {
    mounted.push_back(ns + "/" + ksa + " " + attributes.value("bucketName", "") + " " +
                      (read_only ? "ro" : "rw"));
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/a.txt") << "alpha\n";
    return std::string();
  };
  start(options);
  create_job(gcs_fuse_job("no-annotation", "/mnt/kinetic-data/in", false));
  ASSERT_TRUE(kube_->wait_for_event("default", "FailedMount", kWait));
  json event;
  ASSERT_TRUE(has_event(job_pods("no-annotation")[0]["metadata"]["name"], "FailedMount", &event));
  EXPECT_NE(event["message"].get<std::string>().find("failed to find the sidecar container"),
            std::string::npos)
      << event;

  create_job(gcs_fuse_job("mounted", "/mnt/kinetic-data/in", true));
  ASSERT_TRUE(wait_job("mounted", "Complete"));
  const auto pod = job_pods("mounted")[0]["metadata"]["name"].get<std::string>();
  EXPECT_EQ(call("GET", kPods + "/" + pod + "/log?container=main").body, "a.txt\n");
  ASSERT_EQ(mounted.size(), 1u);
  EXPECT_EQ(mounted[0], "default/default b1 ro");
}
