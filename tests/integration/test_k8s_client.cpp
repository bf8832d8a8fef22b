// The Kubernetes client against the fake Kubernetes API (tests/fakes/fake_kube.h): TLS with the
// cluster CA pinned and a bearer token, Jobs created, read, listed and deleted, watches from a
// list's resourceVersion (and 410 when the history expires), logs followed across cut
// connections, and pending_reason on pods the fake's scheduler and autoscaler could not place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "auth/sources.h"
#include "auth/token_cache.h"
#include "backend/gke/pending_reason.h"
#include "core/fs.h"
#include "fakes/fake_kube.h"
#include "k8s/client.h"
#include "k8s/log_follower.h"

namespace kinetic::k8s {
namespace {

using nlohmann::json;
// GKE's reading of a pending pod (backend/gke), checked here on pods the fake placed.
using gke::pending_reason;
using gke::PendingKind;
using gke::PendingReason;

const std::string kToken = "ya29.test-token";
const std::string kNs = "default";

std::shared_ptr<auth::TokenCache> fixed_token(const std::string& token) {
  return std::make_shared<auth::TokenCache>(auth::fixed_token_source(token, "test"));
}

fakes::FakeNodePool cpu_pool() {
  fakes::FakeNodePool pool;
  pool.name = "default-pool";
  pool.min_nodes = 1;
  pool.max_nodes = 1;
  pool.nodes = 1;
  return pool;
}

fakes::FakeNodePool tpu_pool() {
  fakes::FakeNodePool pool;
  pool.name = "v5e-4";
  pool.labels = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                 {"cloud.google.com/gke-tpu-topology", "2x2"}};
  pool.taints = {{"google.com/tpu", "present", "NoSchedule"}};
  pool.allocatable = {{"google.com/tpu", "4"}};
  pool.min_nodes = 0;
  pool.max_nodes = 1;
  pool.nodes = 0;
  pool.zone = "us-west4-a";
  return pool;
}

json job_manifest(const std::string& name, const std::string& script,
                  const json& node_selector = json::object(), const json& resources = {}) {
  json container = {
      {"name", "main"}, {"image", "python:3.12-slim"}, {"command", {"sh", "-c", script}}};
  if (!resources.is_null()) container["resources"] = resources;
  json pod_spec = {{"restartPolicy", "Never"}, {"containers", json::array({container})}};
  if (!node_selector.empty()) {
    pod_spec["nodeSelector"] = node_selector;
    pod_spec["tolerations"] = json::array(
        {{{"key", "google.com/tpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  }
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"namespace", kNs},
            {"labels", {{"app.kubernetes.io/managed-by", "kinetic"}, {"kinetic.dev/job", name}}}}},
          {"spec",
           {{"backoffLimit", 0},
            {"template",
             {{"metadata", {{"labels", {{"kinetic.dev/job", name}}}}}, {"spec", pod_spec}}}}}};
}

std::string job_pods(const std::string& job) {
  return "batch.kubernetes.io/job-name=" + job;
}

class K8sClientFake : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir(fs::temp_directory_path(), "kinetic-k8s-test-");
    fakes::FakeKubeOptions options;
    options.expected_token = kToken;
    options.pod_env = {{"GATE", (dir_ / "go").string()}};
    options.default_grace_seconds = 1;
    kube_ = std::make_unique<fakes::FakeKube>(options);
    kube_->set_node_pool(cpu_pool());
    transport_ = make_kube_transport(kube_->ca_pem(), fixed_token(kToken), 0);
    client_ = std::make_unique<Client>(*transport_, kube_->url());
  }
  void TearDown() override {
    client_.reset();
    transport_.reset();
    kube_.reset();
    remove_all_quiet(dir_);
  }

  // Watches COLLECTION from RV until PRED holds for an event's object; returns it (null after
  // a few rounds of 30 s without it).
  json watch_from(const std::string& collection, const std::string& selector, std::string rv,
                  const std::function<bool(const json&)>& pred) {
    json found;
    for (int round = 0; round < 4 && found.is_null(); ++round) {
      rv = client_->watch(collection, selector, rv, 30, [&](const WatchEvent& e) {
        if (e.type == "BOOKMARK" || !pred(e.object)) return true;
        found = e.object;
        return false;
      });
    }
    if (found.is_null()) ADD_FAILURE() << "watch on " << collection << " never saw the object";
    return found;
  }

  // The same from a fresh list, whose items count too.
  json watch_until(const std::string& collection, const std::string& selector,
                   const std::function<bool(const json&)>& pred) {
    ObjectList list = client_->list(collection, selector);
    for (const auto& item : list.items) {
      if (pred(item)) return item;
    }
    return watch_from(collection, selector, list.resource_version, pred);
  }

  json wait_for_pod(const std::string& job, const std::function<bool(const json&)>& pred) {
    return watch_until(pods_path(kNs), job_pods(job), pred);
  }

  void open_gate() { std::ofstream(dir_ / "go") << "go\n"; }

  fs::path dir_;
  std::unique_ptr<fakes::FakeKube> kube_;
  std::shared_ptr<http::Transport> transport_;
  std::unique_ptr<Client> client_;
};

std::string phase(const json& pod) {
  return pod.value("status", json::object()).value("phase", "");
}

// ---- TLS and credentials ------------------------------------------------------------------

TEST_F(K8sClientFake, PinnedCaAndTokenAreUsed) {
  EXPECT_NO_THROW(client_->list(jobs_path(kNs)));

  // Another cluster's CA does not vouch for this server.
  fakes::FakeKube other;
  auto wrong_ca = make_kube_transport(other.ca_pem(), fixed_token(kToken), 0);
  Client wrong(*wrong_ca, kube_->url());
  try {
    wrong.list(jobs_path(kNs));
    FAIL() << "a server outside the pinned CA was trusted";
  } catch (const http::TransportError& e) {
    EXPECT_FALSE(e.retryable());
    EXPECT_NE(std::string(e.what()).find("pinned CA"), std::string::npos) << e.what();
  }

  // The right CA with the wrong token: 401, an auth error that says what to do.
  auto bad_token = make_kube_transport(kube_->ca_pem(), fixed_token("ya29.wrong"), 0);
  Client unauthorized(*bad_token, kube_->url());
  try {
    unauthorized.get(job_path(kNs, "x"));
    FAIL() << "a wrong token was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 401);
    EXPECT_EQ(e.Error::code(), Errc::auth);
    EXPECT_NE(std::string(e.what()).find("gcloud auth application-default login"),
              std::string::npos);
  }
}

// ---- objects ------------------------------------------------------------------------------

TEST_F(K8sClientFake, CreateGetListRemoveJob) {
  json created = client_->create(jobs_path(kNs), job_manifest("kinetic-crud", "exit 0"));
  ASSERT_TRUE(created.contains("metadata"));
  std::string uid = created["metadata"].value("uid", "");
  EXPECT_FALSE(uid.empty());

  auto got = client_->get(job_path(kNs, "kinetic-crud"));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ((*got)["metadata"]["uid"], uid);
  EXPECT_EQ((*got)["kind"], "Job");

  ObjectList mine = client_->list(
      jobs_path(kNs), "app.kubernetes.io/managed-by=kinetic,kinetic.dev/job=kinetic-crud");
  ASSERT_EQ(mine.items.size(), 1u);
  EXPECT_EQ(mine.items[0]["metadata"]["name"], "kinetic-crud");
  EXPECT_FALSE(mine.resource_version.empty());
  EXPECT_TRUE(client_->list(jobs_path(kNs), "kinetic.dev/job=someone-else").items.empty());

  // Creating it again: 409 AlreadyExists.
  try {
    client_->create(jobs_path(kNs), job_manifest("kinetic-crud", "exit 0"));
    FAIL() << "created twice";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 409);
    EXPECT_EQ(e.reason(), "AlreadyExists");
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }

  EXPECT_FALSE(client_->get(job_path(kNs, "kinetic-missing")).has_value());
  EXPECT_FALSE(client_->remove(job_path(kNs, "kinetic-missing")));

  EXPECT_TRUE(client_->remove(job_path(kNs, "kinetic-crud")));
  auto after = client_->get(job_path(kNs, "kinetic-crud"));
  EXPECT_TRUE(!after || (*after)["metadata"].contains("deletionTimestamp"));
  EXPECT_GE(kube_->request_counts()["DELETE /apis/batch/v1/namespaces/{ns}/jobs/{name}"], 2);
}

TEST_F(K8sClientFake, InvalidObjectIs422) {
  json job = job_manifest("kinetic-invalid", "exit 0");
  job["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  try {
    client_->create(jobs_path(kNs), job);
    FAIL() << "an invalid Job was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 422);
    EXPECT_EQ(e.reason(), "Invalid");
  }
}

// ---- watch --------------------------------------------------------------------------------

TEST_F(K8sClientFake, WatchFromListSeesPodRunThenSucceed) {
  ObjectList before = client_->list(pods_path(kNs), job_pods("kinetic-watch"));
  EXPECT_TRUE(before.items.empty());
  // The job waits for the test's go-ahead, so Running is observable.
  client_->create(
      jobs_path(kNs),
      job_manifest("kinetic-watch", "while [ ! -e \"$GATE\" ]; do sleep 0.02; done; echo ok"));

  std::vector<std::string> phases;
  std::string rv = before.resource_version;
  bool done = false;
  for (int round = 0; round < 5 && !done; ++round) {
    rv =
        client_->watch(pods_path(kNs), job_pods("kinetic-watch"), rv, 30, [&](const WatchEvent& e) {
          if (e.type == "BOOKMARK") return true;
          std::string p = phase(e.object);
          if (phases.empty() || phases.back() != p) phases.push_back(p);
          if (p == "Running") open_gate();
          done = p == "Succeeded" || p == "Failed";
          return !done;
        });
  }
  ASSERT_TRUE(done);
  ASSERT_GE(phases.size(), 2u);
  EXPECT_EQ(phases.back(), "Succeeded");
  EXPECT_NE(std::find(phases.begin(), phases.end(), "Running"), phases.end());
  EXPECT_EQ(std::find(phases.begin(), phases.end(), "Running") - phases.begin() + 2,
            static_cast<long>(phases.size()))
      << "Running comes right before Succeeded";
  EXPECT_FALSE(rv.empty());
}

TEST_F(K8sClientFake, ExpiredWatchIs410InStreamAndAtConnect) {
  ObjectList before = client_->list(jobs_path(kNs));
  client_->create(jobs_path(kNs), job_manifest("kinetic-expire", "exit 0"));
  int seen = 0;
  try {
    client_->watch(jobs_path(kNs), "", before.resource_version, 30, [&](const WatchEvent& e) {
      if (e.type == "BOOKMARK") return true;
      if (++seen == 1) kube_->expire_watches();
      return true;
    });
    FAIL() << "the watch ended without 410";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 410);
    EXPECT_EQ(e.Error::code(), Errc::api);
  }
  EXPECT_GE(seen, 1);
  // The history is gone: the old resourceVersion is refused at connect.
  try {
    client_->watch(jobs_path(kNs), "", before.resource_version, 30,
                   [](const WatchEvent&) { return true; });
    FAIL() << "an expired resourceVersion was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 410);
  }
  // A fresh list gives a resourceVersion that works again.
  ObjectList again = client_->list(jobs_path(kNs));
  EXPECT_EQ(again.items.size(), 1u);
}

// ---- logs ---------------------------------------------------------------------------------

TEST_F(K8sClientFake, FollowLogAcrossCutConnectionsDeliversEveryLineOnce) {
  const int n = 400;
  // Bursts of lines (many share a timestamp) with short pauses, so the stream is live.
  std::string script =
      "i=1; while [ $i -le " + std::to_string(n) +
      " ]; do echo \"line $i\"; if [ $((i % 50)) -eq 0 ]; then sleep 0.02; fi; i=$((i+1)); done";
  client_->create(jobs_path(kNs), job_manifest("kinetic-logs", script));
  json pod = wait_for_pod("kinetic-logs", [](const json& p) { return phase(p) != "Pending"; });
  ASSERT_FALSE(pod.is_null());
  std::string name = pod["metadata"]["name"];

  int cuts_left = 12;
  kube_->cut_next_log_stream_after(900);
  int reconnects = 0;
  FollowOptions options;
  options.wait = [&](int) {
    ++reconnects;
    if (cuts_left-- > 0) kube_->cut_next_log_stream_after(900);
    return reconnects < 10000;
  };
  options.finished = [&] {
    auto p = client_->get(pod_path(kNs, name));
    if (!p) return true;
    std::string ph = phase(*p);
    return ph == "Succeeded" || ph == "Failed";
  };
  std::string got;
  follow_pod_log(*client_, kNs, name, options, [&](std::string_view line) { got += line; });

  std::string want;
  for (int i = 1; i <= n; ++i) want += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(got, want);
  EXPECT_GE(reconnects, 12);
  EXPECT_GE(kube_->request_counts()["GET /api/v1/namespaces/{ns}/pods/{name}/log"], 13);
}

TEST_F(K8sClientFake, FollowLogLosesNothingWhenTheStreamEndsCleanlyAfterTheContainerExited) {
  // The container prints 50 lines and exits; only then does the server end the follow stream,
  // cleanly, after 7 of them (log rotation, an API server restart, a proxy).
  client_->create(jobs_path(kNs),
                  job_manifest("kinetic-rotated", "for i in $(seq 1 50); do echo line $i; done"));
  json pod = wait_for_pod("kinetic-rotated", [](const json& p) { return phase(p) != "Pending"; });
  ASSERT_FALSE(pod.is_null());
  std::string name = pod["metadata"]["name"];
  kube_->end_next_log_stream_after_exit(7 * 39);  // 7 stamped lines of 39 bytes or so
  FollowOptions options;
  options.wait = [](int) { return true; };
  options.finished = [&] {
    auto p = client_->get(pod_path(kNs, name));
    return !p || phase(*p) == "Succeeded" || phase(*p) == "Failed";
  };
  std::string got;
  follow_pod_log(*client_, kNs, name, options, [&](std::string_view line) { got += line; });
  std::string want;
  for (int i = 1; i <= 50; ++i) want += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(got, want);
  EXPECT_EQ(kube_->request_counts()["GET /api/v1/namespaces/{ns}/pods/{name}/log"], 2);
}

TEST_F(K8sClientFake, FollowLogWaitsForTheContainerToStart) {
  // A TPU job whose pool scales up from zero: the log is asked for before the container exists.
  kube_->set_node_pool(tpu_pool());
  client_->create(jobs_path(kNs),
                  job_manifest("kinetic-late", "echo first; echo second",
                               {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                                {"cloud.google.com/gke-tpu-topology", "2x2"}},
                               {{"limits", {{"google.com/tpu", "4"}}}}));
  json pod = wait_for_pod("kinetic-late", [](const json&) { return true; });
  std::string name = pod["metadata"]["name"];
  int waits = 0;
  FollowOptions options;
  options.wait = [&](int) {
    ++waits;
    // Block until the pod has moved on instead of spinning.
    wait_for_pod("kinetic-late", [](const json& p) { return phase(p) != "Pending"; });
    return waits < 100;
  };
  options.finished = [&] {
    auto p = client_->get(pod_path(kNs, name));
    return !p || phase(*p) == "Succeeded" || phase(*p) == "Failed";
  };
  std::string got;
  follow_pod_log(*client_, kNs, name, options, [&](std::string_view line) { got += line; });
  EXPECT_EQ(got, "first\nsecond\n");
}

// ---- why pending --------------------------------------------------------------------------

std::vector<json> events_of(Client& client, const std::string& pod) {
  return client.list(events_path(kNs), "", "involvedObject.kind=Pod,involvedObject.name=" + pod)
      .items;
}

bool has_event(const std::vector<json>& events, const std::string& reason) {
  return std::any_of(events.begin(), events.end(),
                     [&](const json& e) { return e.value("reason", "") == reason; });
}

TEST_F(K8sClientFake, PendingReasonNoPoolThenScaleFailed) {
  json selector = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                   {"cloud.google.com/gke-tpu-topology", "2x2"}};
  client_->create(jobs_path(kNs), job_manifest("kinetic-tpu", "echo hi", selector,
                                               {{"limits", {{"google.com/tpu", "4"}}}}));
  json pod = wait_for_pod("kinetic-tpu", [](const json&) { return true; });
  std::string name = pod["metadata"]["name"];

  // The autoscaler's verdict arrives as an event.
  watch_until(events_path(kNs), "", [&](const json& e) {
    return e["involvedObject"].value("name", "") == name &&
           e.value("reason", "") == "NotTriggerScaleUp";
  });
  auto now = client_->get(pod_path(kNs, name));
  ASSERT_TRUE(now.has_value());
  auto events = events_of(*client_, name);
  ASSERT_TRUE(has_event(events, "FailedScheduling"));
  PendingReason r = pending_reason(*now, events);
  EXPECT_EQ(r.kind, PendingKind::no_pool) << r.message;
  EXPECT_FALSE(r.fatal);
  EXPECT_EQ(r.accelerator, "v5litepod-4");
  EXPECT_NE(r.message.find("no node pool fits this job (0/1 nodes: "), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("add one with `kinetic pool add --accelerator v5litepod-4`"),
            std::string::npos)
      << r.message;

  // A pool that fits appears, but its scale-up fails on quota. (fail_scale_up needs the pool to
  // exist: it is first added with a topology that does not fit.)
  fakes::FakeNodePool other_shape = tpu_pool();
  other_shape.labels["cloud.google.com/gke-tpu-topology"] = "2x4";
  kube_->set_node_pool(other_shape);
  kube_->fail_scale_up("v5e-4", "GCE quota exceeded");
  kube_->set_node_pool(tpu_pool());
  watch_until(events_path(kNs), "", [&](const json& e) {
    return e["involvedObject"].value("name", "") == name &&
           e.value("reason", "") == "FailedScaleUp";
  });
  now = client_->get(pod_path(kNs, name));
  ASSERT_TRUE(now.has_value());
  r = pending_reason(*now, events_of(*client_, name));
  EXPECT_EQ(r.kind, PendingKind::scale_failed) << r.message;
  EXPECT_EQ(
      r.message,
      "cannot add a node: GCE quota exceeded in us-west4-a; request more quota or try another "
      "zone");
}

TEST_F(K8sClientFake, PendingReasonScalingUp) {
  kube_->set_node_pool(tpu_pool());
  json selector = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                   {"cloud.google.com/gke-tpu-topology", "2x2"}};
  std::string pods_rv = client_->list(pods_path(kNs)).resource_version;
  std::string events_rv = client_->list(events_path(kNs)).resource_version;
  client_->create(jobs_path(kNs), job_manifest("kinetic-up", "echo hi", selector,
                                               {{"limits", {{"google.com/tpu", "4"}}}}));
  // The pod as it was while unschedulable (the watch replays its history from before it
  // existed), and its events up to the scale-up.
  json unschedulable =
      watch_from(pods_path(kNs), job_pods("kinetic-up"), pods_rv, [](const json& p) {
        for (const auto& c : p["status"].value("conditions", json::array()))
          if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
            return true;
        return false;
      });
  ASSERT_FALSE(unschedulable.is_null());
  std::string name = unschedulable["metadata"]["name"];
  std::vector<json> events;
  watch_from(events_path(kNs), "", events_rv, [&](const json& e) {
    if (e["involvedObject"].value("name", "") != name) return false;
    events.push_back(e);
    return e.value("reason", "") == "TriggeredScaleUp";
  });
  ASSERT_TRUE(has_event(events, "TriggeredScaleUp"));
  PendingReason r = pending_reason(unschedulable, events);
  EXPECT_EQ(r.kind, PendingKind::scaling_up) << r.message;
  EXPECT_EQ(r.message, "waiting for a node: scale-up of pool kinetic-v5e-4 triggered (0->1)");
  // And then the job runs on the new node.
  json done = wait_for_pod("kinetic-up", [](const json& p) { return phase(p) == "Succeeded"; });
  EXPECT_EQ(pending_reason(done, events_of(*client_, name)).kind, PendingKind::none);
}

TEST_F(K8sClientFake, PendingReasonImagePull) {
  kube_.reset();
  fakes::FakeKubeOptions options;
  options.expected_token = kToken;
  options.image_pullable = [](const std::string& image, std::string* why) {
    if (image.find("missing") == std::string::npos) return true;
    *why = "rpc error: code = NotFound desc = failed to pull and unpack image \"" + image +
           "\": not found";
    return false;
  };
  kube_ = std::make_unique<fakes::FakeKube>(options);
  kube_->set_node_pool(cpu_pool());
  transport_ = make_kube_transport(kube_->ca_pem(), fixed_token(kToken), 0);
  client_ = std::make_unique<Client>(*transport_, kube_->url());

  json job = job_manifest("kinetic-pull", "echo hi");
  job["spec"]["template"]["spec"]["containers"][0]["image"] =
      "us-docker.pkg.dev/p/kinetic/missing:1";
  client_->create(jobs_path(kNs), job);
  json pod = wait_for_pod("kinetic-pull", [](const json& p) {
    for (const auto& cs : p["status"].value("containerStatuses", json::array())) {
      std::string reason =
          cs.value("state", json::object()).value("waiting", json::object()).value("reason", "");
      if (reason == "ErrImagePull" || reason == "ImagePullBackOff") return true;
    }
    return false;
  });
  PendingReason r = pending_reason(pod, events_of(*client_, pod["metadata"]["name"]));
  EXPECT_EQ(r.kind, PendingKind::image_pull) << r.message;
  EXPECT_TRUE(r.fatal);
  EXPECT_NE(r.message.find("cannot pull image us-docker.pkg.dev/p/kinetic/missing:1: "),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("not found"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace kinetic::k8s
