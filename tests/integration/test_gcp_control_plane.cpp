// kinetic's control-plane clients (Service Usage, GKE, Cloud Build, Artifact Registry) against
// FakeGcp on 127.0.0.1, through the stack a real run uses (retried(authed(curl)), with a fixed
// token). Operations advance one step per poll, and every wait goes through an injected sleeper,
// so nothing here sleeps.
#include <gtest/gtest.h>

#include "auth/authed.h"
#include "core/fs.h"
#include "fakes/fake_gcp.h"
#include "fakes/fake_gcs.h"
#include "gcp/artifact_registry.h"
#include "gcp/cloud_build.h"
#include "gcp/gke.h"
#include "gcp/service_usage.h"
#include "http/retry.h"
#include "pack/archive.h"

using namespace std::chrono_literals;
using nlohmann::json;

namespace kinetic::gcp {
namespace {

constexpr const char* kProject = "acme";
constexpr const char* kZone = "us-west4-a";
const std::string kCaPem =
    "-----BEGIN CERTIFICATE-----\nMIIBfakefakefakeCA\n-----END CERTIFICATE-----\n";

struct FixedToken : auth::TokenProvider {
  std::string token() override { return "test-token"; }
  void invalidate() override {}
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

class ControlPlaneTest : public ::testing::Test {
 protected:
  static fakes::FakeGcpOptions options() {
    fakes::FakeGcpOptions o;
    o.kube_endpoint = "127.0.0.1:6443";
    o.kube_ca_pem = kCaPem;
    o.zone_machine_types = {{"us-west4-a", {"e2-standard-4", "ct5lp-hightpu-4t"}},
                            {"us-west4-b", {"e2-standard-4"}}};
    return o;
  }
  static std::set<std::string> all_apis() {
    return {"serviceusage.googleapis.com",     "storage.googleapis.com",
            "container.googleapis.com",        "cloudbuild.googleapis.com",
            "artifactregistry.googleapis.com", "compute.googleapis.com"};
  }
  static fakes::FakeGcpOptions enabled_options() {
    auto o = options();
    o.enabled_services = all_apis();
    return o;
  }

  static fakes::FakeGcpOptions reading(fakes::FakeGcpOptions o, fakes::FakeGcs& gcs) {
    o.gcs = &gcs;
    return o;
  }
  explicit ControlPlaneTest(fakes::FakeGcpOptions o = enabled_options())
      : fake(reading(std::move(o), gcs)) {}

  PollOptions poll() {
    PollOptions p;
    p.initial = 1000ms;
    p.max = 5000ms;
    p.factor = 2.0;
    p.deadline = 600s;
    p.sleep = [this](std::chrono::milliseconds d) {
      poll_waits.push_back(d);
      if (on_sleep) on_sleep();
    };
    return p;
  }
  std::string endpoint(const std::string& service) { return fake.url(service); }
  int count(const std::string& service, const std::string& key) {
    auto counts = fake.request_counts(service);
    auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  }

  fakes::FakeGcs gcs;  // Cloud Build's sources and logs; constructed before FAKE
  fakes::FakeGcp fake;
  std::vector<std::chrono::milliseconds> retry_waits;
  std::vector<std::chrono::milliseconds> poll_waits;
  std::function<void()> on_sleep;
  std::unique_ptr<http::Transport> transport = http::retried(
      auth::authed(http::make_curl_transport(), std::make_shared<FixedToken>()),
      http::RetryPolicy{},
      http::RetryEnv{[this](std::chrono::milliseconds d) { retry_waits.push_back(d); }, nullptr,
                     [] { return 0.5; }});
};

// ---- Service Usage ------------------------------------------------------------------------------

class ServiceUsageClientTest : public ControlPlaneTest {
 protected:
  ServiceUsageClientTest() : ControlPlaneTest(options()) {}
  ServiceUsageClient client{*transport, endpoint("serviceusage")};
};

TEST_F(ServiceUsageClientTest, DisabledListsWhatIsOffAndEnableTurnsItOn) {
  std::vector<std::string> wanted = {"container.googleapis.com", "storage.googleapis.com",
                                     "cloudbuild.googleapis.com",
                                     "artifactregistry.googleapis.com"};
  EXPECT_EQ(client.disabled(kProject, wanted),
            (std::vector<std::string>{"container.googleapis.com", "cloudbuild.googleapis.com",
                                      "artifactregistry.googleapis.com"}));
  client.enable(kProject, client.disabled(kProject, wanted), poll());
  EXPECT_TRUE(fake.service_enabled(kProject, "container.googleapis.com"));
  EXPECT_TRUE(fake.service_enabled(kProject, "artifactregistry.googleapis.com"));
  EXPECT_TRUE(client.disabled(kProject, wanted).empty());
  // Another project is untouched.
  EXPECT_EQ(client.disabled("other", {"container.googleapis.com"}).size(), 1u);
}

TEST_F(ServiceUsageClientTest, ADisabledApiSaysHowToEnableIt) {
  GkeClient gke(*transport, endpoint("container"), poll());
  std::string m = message_of([&] { gke.get_cluster(kProject, kZone, "kinetic"); });
  EXPECT_NE(m.find("the container.googleapis.com API is not enabled in project acme"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("gcloud services enable container.googleapis.com --project acme"),
            std::string::npos)
      << m;
  client.enable(kProject, {"container.googleapis.com"}, poll());
  EXPECT_FALSE(gke.get_cluster(kProject, kZone, "kinetic").has_value());
}

TEST_F(ServiceUsageClientTest, BatchesStayWithinTheApiLimits) {
  // The fake refuses more than 30 names per batchGet and 20 ids per batchEnable.
  const std::string names[] = {"logging.googleapis.com", "compute.googleapis.com"};
  std::vector<std::string> many;
  for (int i = 0; i < 31; ++i) many.push_back(names[i % 2]);
  EXPECT_EQ(client.disabled(kProject, many),
            (std::vector<std::string>{"logging.googleapis.com", "compute.googleapis.com"}));
  EXPECT_EQ(count("serviceusage", "GET /v1/projects/{name}/services:batchGet"), 2)
      << json(fake.request_counts("serviceusage")).dump();
  many.resize(21);
  client.enable(kProject, many, poll());
  EXPECT_TRUE(client.disabled(kProject, many).empty());
}

TEST_F(ServiceUsageClientTest, UnknownServiceIsAnError) {
  std::string m = message_of([&] { client.enable(kProject, {"nope.googleapis.com"}, poll()); });
  EXPECT_NE(m.find("enabling nope.googleapis.com in project acme"), std::string::npos) << m;
}

// ---- GKE ----------------------------------------------------------------------------------------

json cluster_request(const std::string& name) {
  return {{"name", name},
          {"releaseChannel", {{"channel", "REGULAR"}}},
          {"nodePools",
           {{{"name", "default-pool"},
             {"initialNodeCount", 1},
             {"config", {{"machineType", "e2-standard-4"}}}}}}};
}

json tpu_pool(const std::string& name) {
  return {{"name", name},
          {"initialNodeCount", 0},
          {"config",
           {{"machineType", "ct5lp-hightpu-4t"},
            {"spot", true},
            {"labels", {{"kinetic.dev/pool", name}}}}},
          {"autoscaling", {{"enabled", true}, {"totalMinNodeCount", 0}, {"totalMaxNodeCount", 2}}}};
}

class GkeClientTest : public ControlPlaneTest {
 protected:
  GkeClient gke{*transport, endpoint("container"), poll()};
  void SetUp() override { gke.create_cluster(kProject, kZone, cluster_request("kinetic")); }
};

TEST_F(ControlPlaneTest, CreateClusterWaitsAndReturnsEndpointAndCa) {
  GkeClient gke(*transport, endpoint("container"), poll());
  std::vector<std::string> statuses;
  PollOptions p = poll();
  p.on_poll = [&](const json& op) { statuses.push_back(op.value("status", "")); };
  GkeClient watched(*transport, endpoint("container"), p);
  EXPECT_FALSE(gke.get_cluster(kProject, kZone, "kinetic").has_value());
  ClusterInfo c = watched.create_cluster(kProject, kZone, cluster_request("kinetic"));
  EXPECT_EQ(c.name, "kinetic");
  EXPECT_EQ(c.status, "RUNNING");
  EXPECT_EQ(c.endpoint, "127.0.0.1:6443");
  EXPECT_EQ(c.ca_pem, kCaPem);
  EXPECT_FALSE(statuses.empty());
  EXPECT_EQ(statuses.back(), "DONE");
  EXPECT_FALSE(poll_waits.empty());
  auto again = gke.get_cluster(kProject, kZone, "kinetic");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, "RUNNING");
}

TEST_F(GkeClientTest, CreatingTheClusterAgainReturnsTheExistingOne) {
  fake.reset_counters();
  ClusterInfo c = gke.create_cluster(kProject, kZone, cluster_request("kinetic"));
  EXPECT_EQ(c.status, "RUNNING");
  EXPECT_EQ(c.ca_pem, kCaPem);
  // One create (answered 409) and one read; no operation to wait for.
  EXPECT_EQ(fake.total_requests(), 2) << json(fake.request_counts("container")).dump();
}

TEST_F(GkeClientTest, NodePoolsCreateListDelete) {
  NodePoolInfo p = gke.create_node_pool(kProject, kZone, "kinetic", tpu_pool("v5e-4"));
  EXPECT_EQ(p.name, "v5e-4");
  EXPECT_EQ(p.status, "RUNNING");
  EXPECT_EQ(p.machine_type, "ct5lp-hightpu-4t");
  EXPECT_TRUE(p.spot);
  EXPECT_EQ(p.max_nodes, 2);
  EXPECT_EQ(p.labels["kinetic.dev/pool"], "v5e-4");

  auto pools = gke.list_node_pools(kProject, kZone, "kinetic");
  std::vector<std::string> names;
  for (auto& pool : pools) names.push_back(pool.name);
  EXPECT_EQ(names, (std::vector<std::string>{"default-pool", "v5e-4"}));

  // Again: the existing pool, no second operation.
  EXPECT_EQ(gke.create_node_pool(kProject, kZone, "kinetic", tpu_pool("v5e-4")).status, "RUNNING");

  EXPECT_TRUE(gke.delete_node_pool(kProject, kZone, "kinetic", "v5e-4"));
  EXPECT_FALSE(gke.delete_node_pool(kProject, kZone, "kinetic", "v5e-4"));
  EXPECT_EQ(gke.list_node_pools(kProject, kZone, "kinetic").size(), 1u);
}

TEST_F(GkeClientTest, StockoutFailsThePoolWithWhatToDo) {
  fake.fail_next_pool("GCE_STOCKOUT",
                      "Google Compute Engine: Not enough resources available to fulfill the "
                      "request: us-west4-a.");
  std::string m =
      message_of([&] { gke.create_node_pool(kProject, kZone, "kinetic", tpu_pool("v5e-4")); });
  EXPECT_EQ(m.rfind("creating node pool v5e-4: GKE: no capacity", 0), 0u) << m;
  EXPECT_NE(m.find("Not enough resources available"), std::string::npos) << m;
  EXPECT_NE(m.find("try another zone"), std::string::npos) << m;
  // The pool is left in ERROR for `kinetic status` to show.
  auto pools = gke.list_node_pools(kProject, kZone, "kinetic");
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[1].status, "ERROR");
}

TEST_F(GkeClientTest, QuotaFailureNamesTheQuota) {
  fake.fail_next_pool("GCE_QUOTA_EXCEEDED",
                      "Insufficient quota to satisfy the request: Quota 'TPU_V5_LITEPOD_CORES' "
                      "exceeded. Limit: 0.0 in region us-west4.");
  std::string m =
      message_of([&] { gke.create_node_pool(kProject, kZone, "kinetic", tpu_pool("v5e-4")); });
  EXPECT_EQ(m.rfind("creating node pool v5e-4: GKE: quota TPU_V5_LITEPOD_CORES exceeded", 0), 0u)
      << m;
  EXPECT_NE(m.find("https://console.cloud.google.com/iam-admin/quotas"), std::string::npos) << m;
}

TEST_F(GkeClientTest, MachineTypeNotInTheZoneIsABadRequest) {
  json pool = tpu_pool("gpu");
  pool["config"]["machineType"] = "g2-standard-8";
  std::string m = message_of([&] { gke.create_node_pool(kProject, kZone, "kinetic", pool); });
  EXPECT_EQ(m.rfind("creating node pool gpu: ", 0), 0u) << m;
  EXPECT_NE(m.find("g2-standard-8"), std::string::npos) << m;
  EXPECT_TRUE(poll_waits.size() < 20u);  // not retried as a busy cluster
}

TEST_F(GkeClientTest, BusyClusterIsWaitedFor) {
  // Another client starts a pool create and never polls it: the cluster stays busy until the
  // operation is polled, which our sleeper does (as time passing would on the real service).
  http::Request start;
  start.method = "POST";
  start.url =
      endpoint("container") + "v1/projects/acme/locations/us-west4-a/clusters/kinetic/nodePools";
  start.headers = {{"Content-Type", "application/json"}};
  start.body = json({{"nodePool", tpu_pool("other")}}).dump();
  auto r = transport->send(start);
  ASSERT_EQ(r.status, 200) << r.body;
  fake.reset_counters();
  std::string op = json::parse(r.body)["name"];
  poll_waits.clear();
  int polled = 0;
  on_sleep = [&] {
    http::Request get;
    get.url = endpoint("container") + "v1/projects/acme/locations/us-west4-a/operations/" + op;
    transport->send(get);
    ++polled;
  };
  NodePoolInfo p = gke.create_node_pool(kProject, kZone, "kinetic", tpu_pool("v5e-4"));
  EXPECT_EQ(p.status, "RUNNING");
  EXPECT_GE(polled, 1);
  // Our refused try, and our try once the cluster was free.
  EXPECT_EQ(
      count("container", "POST /v1/projects/{name}/locations/{name}/clusters/{name}/nodePools"), 2)
      << json(fake.request_counts("container")).dump();
}

TEST_F(GkeClientTest, TransientErrorsOnCreateAreRetried) {
  fake.fail_next("container", 2, 503, "POST /v1/projects/acme/locations/us-west4-a/clusters/");
  NodePoolInfo p = gke.create_node_pool(kProject, kZone, "kinetic", tpu_pool("v5e-4"));
  EXPECT_EQ(p.status, "RUNNING");
  EXPECT_EQ(retry_waits.size(), 2u);
}

TEST_F(GkeClientTest, DeleteClusterWaitsAndIsIdempotent) {
  EXPECT_TRUE(gke.delete_cluster(kProject, kZone, "kinetic"));
  EXPECT_FALSE(fake.cluster(kProject, kZone, "kinetic").has_value());
  EXPECT_FALSE(gke.delete_cluster(kProject, kZone, "kinetic"));
  EXPECT_FALSE(gke.get_cluster(kProject, kZone, "kinetic").has_value());
}

TEST_F(GkeClientTest, ListingPoolsOfAMissingClusterIsNotFound) {
  try {
    gke.list_node_pools(kProject, kZone, "nope");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_NE(std::string(e.what()).find("listing node pools of cluster nope"), std::string::npos);
  }
}

// ---- Cloud Build --------------------------------------------------------------------------------

class CloudBuildClientTest : public ControlPlaneTest {
 protected:
  ~CloudBuildClientTest() override { remove_all_quiet(dir); }

  // Uploads a .tar.gz build context with a Dockerfile and REQUIREMENTS; returns its object.
  std::string upload_source(const std::string& requirements) {
    fs::path src = dir / "src";
    fs::create_directories(src);
    atomic_write(src / "Dockerfile",
                 "FROM python:3.12-slim\nCOPY requirements.txt .\nRUN pip install -r "
                 "requirements.txt\n");
    atomic_write(src / "requirements.txt", requirements);
    fs::path tgz = dir / "src.tar.gz";
    pack_directory(src, IgnoreRules{}, tgz, Compression::gzip);
    std::string object = "builds/" + std::to_string(++uploads) + ".tar.gz";
    gcs.put_object(bucket, object, read_file(tgz).value());
    return object;
  }

  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-cb-");
  std::string bucket = "acme-kinetic-k";
  int uploads = 0;
  CloudBuildClient builds{*transport, endpoint("cloudbuild")};
  void SetUp() override { gcs.create_bucket(bucket, kProject); }
};

TEST_F(CloudBuildClientTest, SuccessfulBuildIsFollowedToTheEnd) {
  ArtifactRegistryClient(*transport, endpoint("artifactregistry"), poll())
      .ensure_repository(kProject, "us", "kinetic", "kinetic images");
  std::string image = "us-docker.pkg.dev/acme/kinetic/base:tpu-0123456789ab";
  json request = docker_build_request(bucket, upload_source("numpy\n"), image,
                                      "gs://" + bucket + "/logs", 600);
  BuildInfo queued = builds.create(kProject, "us-central1", request);
  EXPECT_FALSE(queued.id.empty());
  EXPECT_FALSE(queued.terminal());
  std::vector<std::string> seen;
  BuildInfo done = builds.wait(kProject, "us-central1", queued.id, poll(),
                               [&](const BuildInfo& b) { seen.push_back(b.status); });
  EXPECT_TRUE(done.succeeded()) << done.raw.dump();
  EXPECT_EQ(done.failure_message(), "");
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), "SUCCESS");
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());  // changes only
  EXPECT_TRUE(fake.has_image(image));
  EXPECT_EQ(fake.builds_created(), 1);
  EXPECT_EQ(builds.get(kProject, "us-central1", queued.id).status, "SUCCESS");
}

TEST_F(CloudBuildClientTest, FailedBuildNamesTheFailedStep) {
  std::string image = "us-docker.pkg.dev/acme/kinetic/base:tpu-bad";
  json request = docker_build_request(bucket, upload_source("this-package-does-not-exist\n"), image,
                                      "gs://" + bucket + "/logs", 600);
  BuildInfo queued = builds.create(kProject, "us-central1", request);
  BuildInfo done = builds.wait(kProject, "us-central1", queued.id, poll(), nullptr);
  EXPECT_EQ(done.status, "FAILURE");
  EXPECT_EQ(done.failed_step, 0);
  EXPECT_EQ(done.failed_step_name, "gcr.io/cloud-builders/docker");
  EXPECT_EQ(done.failure_type, "USER_BUILD_STEP");
  std::string m = done.failure_message();
  EXPECT_EQ(
      m.rfind("image build " + done.id + " failed in step 0 (gcr.io/cloud-builders/docker)", 0), 0u)
      << m;
  EXPECT_FALSE(fake.has_image(image));
}

TEST_F(CloudBuildClientTest, PushToAMissingRepositoryExplainsItself) {
  json request = docker_build_request(bucket, upload_source("numpy\n"),
                                      "us-docker.pkg.dev/acme/missing/base:x", "", 600);
  BuildInfo queued = builds.create(kProject, "us-central1", request);
  BuildInfo done = builds.wait(kProject, "us-central1", queued.id, poll(), nullptr);
  EXPECT_EQ(done.status, "FAILURE");
  EXPECT_EQ(done.failed_step, -1);  // the steps ran; the push failed
  EXPECT_EQ(done.failure_type, "PUSH_FAILED");
  EXPECT_NE(done.failure_message().find("not found"), std::string::npos) << done.failure_message();
}

TEST_F(CloudBuildClientTest, CreateIsNotReplayed) {
  fake.fail_next("cloudbuild", 1, 503, "POST /v1/projects/acme/locations/us-central1/builds");
  std::string m = message_of([&] {
    builds.create(kProject, "us-central1",
                  docker_build_request(bucket, upload_source("numpy\n"),
                                       "us-docker.pkg.dev/a/b/c:d", "", 600));
  });
  EXPECT_NE(m.find("starting an image build in us-central1"), std::string::npos) << m;
  EXPECT_TRUE(retry_waits.empty());
  EXPECT_EQ(fake.builds_created(), 0);
}

TEST_F(CloudBuildClientTest, UnknownBuildIsNotFound) {
  try {
    builds.get(kProject, "us-central1", "00000000-0000-0000-0000-000000000000");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found) << e.what();
  }
}

// ---- Artifact Registry --------------------------------------------------------------------------

class ArtifactRegistryClientTest : public ControlPlaneTest {
 protected:
  ArtifactRegistryClient ar{*transport, endpoint("artifactregistry"), poll()};
};

TEST_F(ArtifactRegistryClientTest, EnsureCreatesOnceThenReturnsTheExistingRepository) {
  EXPECT_FALSE(ar.get_repository(kProject, "us", "kinetic").has_value());
  auto [repo, created] = ar.ensure_repository(kProject, "us", "kinetic", "kinetic images");
  EXPECT_TRUE(created);
  EXPECT_EQ(repo.value("name", ""), "projects/acme/locations/us/repositories/kinetic");
  EXPECT_EQ(repo.value("format", ""), "DOCKER");
  EXPECT_EQ(repo["labels"].value("managed-by", ""), "kinetic");
  auto [again, created_again] = ar.ensure_repository(kProject, "us", "kinetic", "kinetic images");
  EXPECT_FALSE(created_again);
  EXPECT_EQ(again.value("name", ""), repo.value("name", ""));
}

TEST_F(ArtifactRegistryClientTest, ConflictOnCreateIsTreatedAsOurs) {
  ar.ensure_repository(kProject, "us", "kinetic", "kinetic images");
  // The first read misses (as if it raced the create): the create answers 409, and the
  // repository is read back.
  fake.fail_next("artifactregistry", 1, 404,
                 "GET /v1/projects/acme/locations/us/repositories/kinetic");
  fake.reset_counters();
  auto [repo, created] = ar.ensure_repository(kProject, "us", "kinetic", "kinetic images");
  EXPECT_FALSE(created);
  EXPECT_EQ(repo.value("name", ""), "projects/acme/locations/us/repositories/kinetic");
  EXPECT_EQ(fake.total_requests(), 3) << json(fake.request_counts("artifactregistry")).dump();
}

TEST_F(ArtifactRegistryClientTest, DeleteWaitsAndIsIdempotent) {
  ar.ensure_repository(kProject, "us", "kinetic", "kinetic images");
  EXPECT_TRUE(ar.delete_repository(kProject, "us", "kinetic"));
  EXPECT_FALSE(ar.get_repository(kProject, "us", "kinetic").has_value());
  EXPECT_FALSE(ar.delete_repository(kProject, "us", "kinetic"));
}

TEST_F(ArtifactRegistryClientTest, HasTagIncludingPackagesWithASlash) {
  ar.ensure_repository(kProject, "us", "kinetic", "kinetic images");
  fake.put_image("us-docker.pkg.dev/acme/kinetic/base:tpu-0123456789ab");
  fake.put_image("us-docker.pkg.dev/acme/kinetic/team/base:gpu-1");
  EXPECT_TRUE(ar.has_tag(kProject, "us", "kinetic", "base", "tpu-0123456789ab"));
  EXPECT_FALSE(ar.has_tag(kProject, "us", "kinetic", "base", "tpu-ffffffffffff"));
  EXPECT_TRUE(ar.has_tag(kProject, "us", "kinetic", "team/base", "gpu-1"));
  EXPECT_FALSE(ar.has_tag(kProject, "us", "kinetic", "team/base", "tpu-0123456789ab"));
  EXPECT_FALSE(ar.has_tag(kProject, "us", "kinetic", "team", "gpu-1"));
  EXPECT_FALSE(ar.has_tag(kProject, "us", "kinetic", "nope", "x"));
}

}  // namespace
}  // namespace kinetic::gcp
