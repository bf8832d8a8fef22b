// Polling of GKE and google.longrunning operations with a scripted `get` and an injected sleeper
// (no real sleeps), the JSON decoders of the control-plane clients, and the GKE client's handling
// of "Cluster is running incompatible operation" and 409 over a scripted transport.
#include <gtest/gtest.h>

#include <deque>

#include "core/checksum.h"
#include "gcp/artifact_registry.h"
#include "gcp/cloud_build.h"
#include "gcp/gke.h"
#include "gcp/operations.h"

using namespace std::chrono_literals;
using nlohmann::json;

namespace kinetic::gcp {
namespace {

// A GET that answers from a script, counting its calls.
struct Script {
  std::deque<json> answers;
  int calls = 0;
  std::function<json()> get() {
    return [this] {
      ++calls;
      if (answers.empty()) throw std::logic_error("script exhausted");
      json next = answers.front();
      if (answers.size() > 1) answers.pop_front();  // the last answer repeats
      return next;
    };
  }
};

struct Sleeps {
  std::vector<std::chrono::milliseconds> waits;
  PollOptions options(std::chrono::milliseconds initial = 1000ms,
                      std::chrono::milliseconds max = 10000ms, double factor = 1.5,
                      std::chrono::seconds deadline = 3600s) {
    PollOptions o;
    o.initial = initial;
    o.max = max;
    o.factor = factor;
    o.deadline = deadline;
    o.sleep = [this](std::chrono::milliseconds d) { waits.push_back(d); };
    return o;
  }
};

json gke_op(const std::string& status) {
  return {{"name", "operation-1712345678901-1a2b3c4d"},
          {"operationType", "CREATE_NODE_POOL"},
          {"status", status},
          {"location", "us-west4-a"},
          {"targetLink",
           "https://container.googleapis.com/v1/projects/acme/zones/us-west4-a/clusters/"
           "kinetic/nodePools/v5e-4"}};
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

Errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no Error thrown";
  return Errc::internal;
}

// ---- GKE operations -----------------------------------------------------------------------------

TEST(GkeOperation, PollsUntilDoneAndReportsEachPoll) {
  Script script{{gke_op("RUNNING"), gke_op("RUNNING"), gke_op("DONE")}};
  Sleeps sleeps;
  PollOptions opt = sleeps.options();
  std::vector<std::string> seen;
  opt.on_poll = [&](const json& op) { seen.push_back(op["status"]); };
  json done = wait_gke_operation(script.get(), gke_op("PENDING"), opt, "creating node pool v5e-4");
  EXPECT_EQ(done["status"], "DONE");
  EXPECT_EQ(script.calls, 3);
  EXPECT_EQ(seen, (std::vector<std::string>{"RUNNING", "RUNNING", "DONE"}));
  EXPECT_EQ(sleeps.waits, (std::vector<std::chrono::milliseconds>{1000ms, 1500ms, 2250ms}));
}

TEST(GkeOperation, AlreadyDoneNeedsNoPoll) {
  Script script{{gke_op("RUNNING")}};
  Sleeps sleeps;
  json done = wait_gke_operation(script.get(), gke_op("DONE"), sleeps.options(), "x");
  EXPECT_EQ(done["status"], "DONE");
  EXPECT_EQ(script.calls, 0);
  EXPECT_TRUE(sleeps.waits.empty());
}

TEST(GkeOperation, BackoffGrowsByTheFactorUpToTheCap) {
  Script script{{gke_op("RUNNING"), gke_op("RUNNING"), gke_op("RUNNING"), gke_op("RUNNING"),
                 gke_op("RUNNING"), gke_op("DONE")}};
  Sleeps sleeps;
  wait_gke_operation(script.get(), gke_op("RUNNING"), sleeps.options(1000ms, 5000ms, 2.0), "x");
  EXPECT_EQ(sleeps.waits, (std::vector<std::chrono::milliseconds>{1000ms, 2000ms, 4000ms, 5000ms,
                                                                  5000ms, 5000ms}));
}

TEST(GkeOperation, ErrorFailsWithGkesMessage) {
  json failed = gke_op("DONE");
  failed["error"] = {{"code", 3}, {"message", "Invalid machine type foo-1 in zone us-west4-a."}};
  Script script{{failed}};
  Sleeps sleeps;
  std::string m = message_of([&] {
    wait_gke_operation(script.get(), gke_op("RUNNING"), sleeps.options(),
                       "creating node pool v5e-4");
  });
  EXPECT_EQ(m, "creating node pool v5e-4: GKE: Invalid machine type foo-1 in zone us-west4-a");
  EXPECT_EQ(code_of([&] {
              wait_gke_operation(script.get(), failed, sleeps.options(), "creating node pool");
            }),
            Errc::api);
}

TEST(GkeOperation, NonEmptyStatusMessageIsAFailure) {
  json failed = gke_op("DONE");
  failed["statusMessage"] = "Deploy error: node pool v5e-4 could not be created.";
  Sleeps sleeps;
  std::string m = message_of([&] {
    wait_gke_operation([] { return json(); }, failed, sleeps.options(), "creating node pool v5e-4");
  });
  EXPECT_EQ(m, "creating node pool v5e-4: GKE: Deploy error: node pool v5e-4 could not be created");
}

TEST(GkeOperation, StockoutSaysToTryAnotherZone) {
  json failed = gke_op("DONE");
  failed["statusMessage"] =
      "GCE_STOCKOUT: Try a different location, or try again later. Google Compute Engine does not "
      "have enough resources available to fulfill request: us-west4-a.";
  Sleeps sleeps;
  std::string m = message_of([&] {
    wait_gke_operation([] { return json(); }, failed, sleeps.options(), "creating node pool v5e-4");
  });
  EXPECT_EQ(m.rfind("creating node pool v5e-4: GKE: no capacity", 0), 0u) << m;
  EXPECT_NE(m.find("in us-west4-a"), std::string::npos) << m;
  EXPECT_NE(m.find("try another zone"), std::string::npos) << m;
  EXPECT_NE(m.find("GCE_STOCKOUT"), std::string::npos) << m;  // GKE's own words are kept
}

TEST(GkeOperation, StockoutInANodePoolConditionIsRecognised) {
  json failed = gke_op("DONE");
  failed["error"] = {{"code", 8}, {"message", "Operation failed."}};
  failed["nodepoolConditions"] = {{{"code", "GCE_STOCKOUT"}, {"message", "no TPUs left"}}};
  Sleeps sleeps;
  std::string m = message_of(
      [&] { wait_gke_operation([] { return json(); }, failed, sleeps.options(), "creating"); });
  EXPECT_NE(m.find("try another zone"), std::string::npos) << m;
}

TEST(GkeOperation, QuotaNamesTheQuotaAndWhereToAskForMore) {
  json failed = gke_op("DONE");
  failed["statusMessage"] =
      "GCE_QUOTA_EXCEEDED: Instance 'gke-v5e-4' creation failed: Quota 'TPU_V5_LITEPOD_CORES' "
      "exceeded.  Limit: 0.0 in region us-west4.";
  Sleeps sleeps;
  std::string m = message_of([&] {
    wait_gke_operation([] { return json(); }, failed, sleeps.options(), "creating node pool v5e-4");
  });
  EXPECT_EQ(m.rfind("creating node pool v5e-4: GKE: quota TPU_V5_LITEPOD_CORES exceeded", 0), 0u)
      << m;
  EXPECT_NE(m.find("https://console.cloud.google.com/iam-admin/quotas?project=acme"),
            std::string::npos)
      << m;
}

TEST(GkeOperation, RegionalQuotaMessageNamesTheResource) {
  json failed = gke_op("DONE");
  failed["error"] = {
      {"code", 8},
      {"message",
       "Insufficient regional quota to satisfy request: resource \"CPUS\": request requires "
       "'48.0' and is short '24.0'."}};
  Sleeps sleeps;
  std::string m = message_of(
      [&] { wait_gke_operation([] { return json(); }, failed, sleeps.options(), "creating"); });
  EXPECT_NE(m.find("quota CPUS exceeded"), std::string::npos) << m;
}

TEST(GkeOperation, DeadlineStopsPollingAndSaysSo) {
  Script script{{gke_op("RUNNING")}};
  Sleeps sleeps;
  std::string m = message_of([&] {
    wait_gke_operation(script.get(), gke_op("RUNNING"), sleeps.options(1000ms, 4000ms, 2.0, 10s),
                       "creating cluster kinetic");
  });
  // 1 + 2 + 4 = 7 s, then the last wait is cut to the 3 s left.
  EXPECT_EQ(sleeps.waits, (std::vector<std::chrono::milliseconds>{1000ms, 2000ms, 4000ms, 3000ms}));
  EXPECT_EQ(script.calls, 4);  // one last poll at the deadline
  EXPECT_EQ(m.rfind("creating cluster kinetic: GKE operation operation-1712345678901-1a2b3c4d "
                    "did not finish within 10s",
                    0),
            0u)
      << m;
}

TEST(GkeOperation, NullSleepUsesARealSleep) {
  // With a 1 ms backoff the real sleeper is harmless; it must not crash on a null function.
  Script script{{gke_op("DONE")}};
  PollOptions opt;
  opt.initial = 1ms;
  opt.max = 1ms;
  EXPECT_EQ(wait_gke_operation(script.get(), gke_op("RUNNING"), opt, "x")["status"], "DONE");
}

// ---- google.longrunning -------------------------------------------------------------------------

json lro(bool done) {
  return {{"name", "operations/acf.p2-123"}, {"done", done}};
}

TEST(LongRunning, PollsUntilDoneAndReturnsTheResponse) {
  json finished = lro(true);
  finished["response"] = {{"name", "projects/p/locations/us/repositories/kinetic"}};
  Script script{{lro(false), finished}};
  Sleeps sleeps;
  int polls = 0;
  PollOptions opt = sleeps.options(2000ms, 10000ms, 1.1);
  opt.on_poll = [&](const json&) { ++polls; };
  json op = wait_long_running(script.get(), {{"name", "operations/acf.p2-123"}}, opt, "x");
  EXPECT_EQ(op["response"]["name"], "projects/p/locations/us/repositories/kinetic");
  EXPECT_EQ(polls, 2);
  EXPECT_EQ(sleeps.waits, (std::vector<std::chrono::milliseconds>{2000ms, 2200ms}));
}

TEST(LongRunning, DoneAtOnceNeedsNoPoll) {
  Script script{{lro(false)}};
  Sleeps sleeps;
  wait_long_running(script.get(), lro(true), sleeps.options(), "x");
  EXPECT_EQ(script.calls, 0);
}

TEST(LongRunning, ErrorCarriesItsMessageAndCodeName) {
  json failed = lro(true);
  failed["error"] = {{"code", 9}, {"message", "Repository is being deleted."}};
  Sleeps sleeps;
  std::string m = message_of([&] {
    wait_long_running([] { return json(); }, failed, sleeps.options(),
                      "creating repository kinetic");
  });
  EXPECT_EQ(m, "creating repository kinetic: Repository is being deleted (FAILED_PRECONDITION)");
}

TEST(LongRunning, PermissionErrorReadsLikeTheSynchronousOne) {
  json failed = lro(true);
  failed["error"] = {{"code", 7},
                     {"message", "Permission 'serviceusage.services.enable' denied on project."}};
  Sleeps sleeps;
  auto call = [&] {
    wait_long_running([] { return json(); }, failed, sleeps.options(), "enabling x");
  };
  EXPECT_EQ(code_of(call), Errc::auth);
  EXPECT_NE(message_of(call).find("serviceusage.services.enable"), std::string::npos);
}

TEST(LongRunning, DeadlineIsAnError) {
  Script script{{lro(false)}};
  Sleeps sleeps;
  std::string m = message_of([&] {
    wait_long_running(script.get(), lro(false), sleeps.options(1000ms, 1000ms, 1.0, 3s),
                      "enabling");
  });
  EXPECT_EQ(sleeps.waits.size(), 3u);
  EXPECT_NE(m.find("did not finish within 3s"), std::string::npos) << m;
}

TEST(RpcCode, Names) {
  EXPECT_EQ(rpc_code_name(8), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(rpc_code_name(16), "UNAUTHENTICATED");
  EXPECT_EQ(rpc_code_name(99), "");
}

// ---- Cloud Build --------------------------------------------------------------------------------

TEST(CloudBuildJson, DockerBuildRequestShape) {
  json got = docker_build_request("acme-kinetic-k", "builds/abc.tar.gz",
                                  "us-docker.pkg.dev/acme/kinetic/base:tpu-0123456789ab",
                                  "gs://acme-kinetic-k/build-logs", 1800);
  json want = json::parse(R"({
    "source": {"storageSource": {"bucket": "acme-kinetic-k", "object": "builds/abc.tar.gz"}},
    "steps": [{"name": "gcr.io/cloud-builders/docker",
               "args": ["build", "--network", "cloudbuild", "-t",
                        "us-docker.pkg.dev/acme/kinetic/base:tpu-0123456789ab", "."]}],
    "images": ["us-docker.pkg.dev/acme/kinetic/base:tpu-0123456789ab"],
    "timeout": "1800s",
    "logsBucket": "gs://acme-kinetic-k/build-logs",
    "options": {"logging": "GCS_ONLY"},
    "tags": ["kinetic"]})");
  EXPECT_EQ(got, want) << got.dump(2);
}

TEST(CloudBuildJson, BuildInfoFindsTheFailedStep) {
  json build = json::parse(R"({
    "id": "b-1", "status": "FAILURE", "statusDetail": "Build step failure: build step 1 failed",
    "failureInfo": {"type": "USER_BUILD_STEP", "detail": "Step #1 - \"docker\": exit status 1"},
    "logUrl": "https://console.cloud.google.com/cloud-build/builds/b-1",
    "logsBucket": "gs://acme-kinetic-k/build-logs",
    "steps": [{"name": "gcr.io/cloud-builders/gsutil", "status": "SUCCESS"},
              {"name": "gcr.io/cloud-builders/docker", "status": "FAILURE", "exitCode": 1},
              {"name": "gcr.io/cloud-builders/docker", "status": "QUEUED"}]})");
  BuildInfo b = build_info_from_json(build);
  EXPECT_EQ(b.id, "b-1");
  EXPECT_TRUE(b.terminal());
  EXPECT_FALSE(b.succeeded());
  EXPECT_EQ(b.failed_step, 1);
  EXPECT_EQ(b.failed_step_name, "gcr.io/cloud-builders/docker");
  EXPECT_EQ(b.failed_step_exit_code, 1);
  EXPECT_EQ(b.failure_type, "USER_BUILD_STEP");
  EXPECT_EQ(b.logs_bucket, "gs://acme-kinetic-k/build-logs");
  EXPECT_EQ(b.failure_message(),
            "image build b-1 failed in step 1 (gcr.io/cloud-builders/docker) with exit code 1: "
            "Step #1 - \"docker\": exit status 1; see the log at "
            "https://console.cloud.google.com/cloud-build/builds/b-1");
}

TEST(CloudBuildJson, BuildInfoStatuses) {
  BuildInfo working = build_info_from_json({{"id", "b"}, {"status", "WORKING"}});
  EXPECT_FALSE(working.terminal());
  EXPECT_EQ(working.failed_step, -1);
  EXPECT_EQ(working.failure_message(), "");
  BuildInfo ok = build_info_from_json({{"id", "b"}, {"status", "SUCCESS"}});
  EXPECT_TRUE(ok.terminal());
  EXPECT_TRUE(ok.succeeded());
  EXPECT_EQ(ok.failure_message(), "");
  for (const char* s : {"INTERNAL_ERROR", "TIMEOUT", "CANCELLED", "EXPIRED"})
    EXPECT_TRUE(build_info_from_json({{"status", s}}).terminal()) << s;
  for (const char* s : {"STATUS_UNKNOWN", "PENDING", "QUEUED"})
    EXPECT_FALSE(build_info_from_json({{"status", s}}).terminal()) << s;
  BuildInfo timeout =
      build_info_from_json({{"id", "b"}, {"status", "TIMEOUT"}, {"logsBucket", "gs://l/logs"}});
  EXPECT_EQ(timeout.failure_message(),
            "image build b timed out; see the log at gs://l/logs/log-b.txt");
}

// ---- GKE decoding -------------------------------------------------------------------------------

TEST(GkeJson, NodePoolWithPoolWideAutoscaling) {
  json pool = json::parse(R"({
    "name": "v5e-4", "status": "RUNNING", "initialNodeCount": 0,
    "config": {"machineType": "ct5lp-hightpu-4t", "spot": true,
               "labels": {"kinetic.dev/pool": "v5e-4", "app.kubernetes.io/managed-by": "kinetic"}},
    "autoscaling": {"enabled": true, "totalMinNodeCount": 0, "totalMaxNodeCount": "8"}})");
  NodePoolInfo p = node_pool_from_json(pool);
  EXPECT_EQ(p.name, "v5e-4");
  EXPECT_EQ(p.status, "RUNNING");
  EXPECT_EQ(p.machine_type, "ct5lp-hightpu-4t");
  EXPECT_TRUE(p.spot);
  EXPECT_EQ(p.labels.at("kinetic.dev/pool"), "v5e-4");
  EXPECT_EQ(p.min_nodes, 0);
  EXPECT_EQ(p.max_nodes, 8);
  EXPECT_EQ(p.tpu_topology, "");
  EXPECT_EQ(p.raw, pool);
}

TEST(GkeJson, NodePoolWithPerZoneAutoscalingAndTopology) {
  json pool = json::parse(R"({
    "name": "v5e-16", "status": "ERROR", "statusMessage": "stockout", "initialNodeCount": 4,
    "config": {"machineType": "ct5lp-hightpu-4t"},
    "placementPolicy": {"tpuTopology": "4x4"},
    "autoscaling": {"enabled": true, "minNodeCount": 1, "maxNodeCount": 4,
                    "locationPolicy": "ANY"}})");
  NodePoolInfo p = node_pool_from_json(pool);
  EXPECT_EQ(p.status_message, "stockout");
  EXPECT_FALSE(p.spot);
  EXPECT_EQ(p.tpu_topology, "4x4");
  EXPECT_EQ(p.min_nodes, 1);
  EXPECT_EQ(p.max_nodes, 4);
  EXPECT_EQ(p.initial_nodes, 4);
  EXPECT_TRUE(p.labels.empty());
}

TEST(GkeJson, NodePoolWithoutOptionalParts) {
  NodePoolInfo p = node_pool_from_json({{"name", "default-pool"}});
  EXPECT_EQ(p.name, "default-pool");
  EXPECT_EQ(p.min_nodes, 0);
  EXPECT_EQ(p.max_nodes, 0);
}

TEST(GkeJson, ClusterDecodesTheCaCertificate) {
  const std::string pem =
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUK\n-----END CERTIFICATE-----\n";
  json cluster = {{"name", "kinetic"},
                  {"location", "us-west4-a"},
                  {"status", "RUNNING"},
                  {"endpoint", "127.0.0.1:6443"},
                  {"currentMasterVersion", "1.30.5-gke.1014001"},
                  {"masterAuth", {{"clusterCaCertificate", base64_encode(pem)}}}};
  ClusterInfo c = cluster_from_json(cluster);
  EXPECT_EQ(c.name, "kinetic");
  EXPECT_EQ(c.location, "us-west4-a");
  EXPECT_EQ(c.status, "RUNNING");
  EXPECT_EQ(c.endpoint, "127.0.0.1:6443");
  EXPECT_EQ(c.ca_pem, pem);
  EXPECT_EQ(c.version, "1.30.5-gke.1014001");
}

TEST(GkeJson, ClusterWithoutMasterAuthOrWithABadCa) {
  ClusterInfo c = cluster_from_json({{"name", "k"}, {"status", "PROVISIONING"}});
  EXPECT_EQ(c.ca_pem, "");
  EXPECT_EQ(c.endpoint, "");
  EXPECT_THROW(cluster_from_json({{"masterAuth", {{"clusterCaCertificate", "not base64!"}}}}),
               Error);
}

// ---- the GKE client over a scripted transport --------------------------------------------------

struct ScriptedTransport : http::Transport {
  std::deque<http::Response> script;
  std::vector<http::Request> seen;
  http::Response send(const http::Request& request) override {
    seen.push_back(request);
    if (script.empty()) throw std::logic_error("script exhausted at " + request.url);
    auto r = script.front();
    script.pop_front();
    return r;
  }
};

http::Response answer(int status, const json& body) {
  http::Response r;
  r.status = status;
  r.body = body.dump();
  return r;
}

http::Response rpc_error(int http, const std::string& status, const std::string& message) {
  return answer(http, {{"error", {{"code", http}, {"status", status}, {"message", message}}}});
}

const char* kBusy =
    "Cluster is running incompatible operation operation-1712345678901-aaaa. Please wait and try "
    "again.";

TEST(GkeClientScripted, IncompatibleOperationIsRetriedThroughTheSleeper) {
  ScriptedTransport t;
  json pool = {{"name", "v5e-4"}, {"status", "RUNNING"}};
  t.script = {rpc_error(400, "FAILED_PRECONDITION", kBusy),
              rpc_error(400, "FAILED_PRECONDITION", kBusy), answer(200, gke_op("DONE")),
              answer(200, pool)};
  Sleeps sleeps;
  GkeClient gke(t, "https://container.example/", sleeps.options(5000ms, 30000ms, 2.0));
  NodePoolInfo p = gke.create_node_pool("acme", "us-west4-a", "kinetic", {{"name", "v5e-4"}});
  EXPECT_EQ(p.status, "RUNNING");
  EXPECT_EQ(sleeps.waits, (std::vector<std::chrono::milliseconds>{5000ms, 10000ms}));
  ASSERT_EQ(t.seen.size(), 4u);
  EXPECT_EQ(t.seen[0].method, "POST");
  EXPECT_EQ(t.seen[0].url,
            "https://container.example/v1/projects/acme/locations/us-west4-a/clusters/kinetic/"
            "nodePools");
  EXPECT_EQ(json::parse(t.seen[0].body), json({{"nodePool", {{"name", "v5e-4"}}}}));
  EXPECT_EQ(t.seen[3].url,
            "https://container.example/v1/projects/acme/locations/us-west4-a/clusters/kinetic/"
            "nodePools/v5e-4");
}

TEST(GkeClientScripted, IncompatibleOperationPastTheDeadlineSaysWhatToDo) {
  ScriptedTransport t;
  for (int i = 0; i < 10; ++i) t.script.push_back(rpc_error(400, "FAILED_PRECONDITION", kBusy));
  Sleeps sleeps;
  GkeClient gke(t, "https://c", sleeps.options(1000ms, 1000ms, 1.0, 3s));
  std::string m =
      message_of([&] { gke.delete_node_pool("acme", "us-west4-a", "kinetic", "v5e-4"); });
  EXPECT_EQ(t.seen.size(), 4u);  // the first try and one per second of the deadline
  EXPECT_EQ(
      m.rfind("deleting node pool v5e-4: the cluster is still busy with another operation", 0), 0u)
      << m;
}

TEST(GkeClientScripted, OtherBadRequestsAreNotRetried) {
  ScriptedTransport t;
  t.script = {rpc_error(400, "INVALID_ARGUMENT", "Machine type \"foo\" is not supported.")};
  Sleeps sleeps;
  GkeClient gke(t, "https://c", sleeps.options());
  std::string m = message_of([&] {
    gke.create_node_pool("acme", "us-west4-a", "kinetic", {{"name", "v5e-4"}});
  });
  EXPECT_TRUE(sleeps.waits.empty());
  EXPECT_NE(m.find("creating node pool v5e-4"), std::string::npos) << m;
  EXPECT_NE(m.find("is not supported"), std::string::npos) << m;
}

TEST(GkeClientScripted, AlreadyExistsFollowsAProvisioningCluster) {
  ScriptedTransport t;
  t.script = {rpc_error(409, "ALREADY_EXISTS", "Already exists: projects/acme/.../kinetic."),
              answer(200, {{"name", "kinetic"}, {"status", "PROVISIONING"}}),
              answer(200, {{"name", "kinetic"}, {"status", "RUNNING"}, {"endpoint", "10.0.0.1"}})};
  Sleeps sleeps;
  GkeClient gke(t, "https://c", sleeps.options());
  ClusterInfo c = gke.create_cluster("acme", "us-west4-a", {{"name", "kinetic"}});
  EXPECT_EQ(c.status, "RUNNING");
  EXPECT_EQ(c.endpoint, "10.0.0.1");
  EXPECT_EQ(sleeps.waits.size(), 1u);
  EXPECT_TRUE(t.seen[0].idempotent);  // replays are safe: they end here
}

TEST(GkeClientScripted, ClusterInErrorIsAnError) {
  ScriptedTransport t;
  t.script = {answer(200, gke_op("DONE")),
              answer(200, {{"name", "kinetic"}, {"status", "ERROR"}, {"statusMessage", "boom"}})};
  Sleeps sleeps;
  GkeClient gke(t, "https://c", sleeps.options());
  std::string m = message_of([&] {
    gke.create_cluster("acme", "us-west4-a", {{"name", "kinetic"}});
  });
  EXPECT_NE(m.find("in ERROR (boom)"), std::string::npos) << m;
}

TEST(GkeClientScripted, OperationIsPolledAtItsLocation) {
  ScriptedTransport t;
  t.script = {answer(200, gke_op("RUNNING")), answer(200, gke_op("DONE"))};
  Sleeps sleeps;
  GkeClient gke(t, "https://c", sleeps.options());
  EXPECT_TRUE(gke.delete_cluster("acme", "us-west4-a", "kinetic"));
  ASSERT_EQ(t.seen.size(), 2u);
  EXPECT_EQ(t.seen[0].method, "DELETE");
  EXPECT_EQ(t.seen[1].url,
            "https://c/v1/projects/acme/locations/us-west4-a/operations/"
            "operation-1712345678901-1a2b3c4d");
}

TEST(ArtifactRegistryScripted, SlashInAPackageIsSentAsPercent2F) {
  ScriptedTransport t;
  t.script = {answer(200, {{"name", "x"}}), answer(404, json::object())};
  Sleeps sleeps;
  ArtifactRegistryClient ar(t, "https://ar", sleeps.options());
  EXPECT_TRUE(ar.has_tag("acme", "us", "kinetic", "team/base", "tpu-1"));
  EXPECT_FALSE(ar.has_tag("acme", "us", "kinetic", "base", "tpu-2"));
  EXPECT_EQ(t.seen[0].url,
            "https://ar/v1/projects/acme/locations/us/repositories/kinetic/packages/team%2Fbase/"
            "tags/tpu-1");
}

}  // namespace
}  // namespace kinetic::gcp
