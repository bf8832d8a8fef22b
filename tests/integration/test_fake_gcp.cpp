// The fake Service Usage, GKE, Cloud Build and Artifact Registry APIs (tests/fakes/fake_gcp.h)
// driven over HTTP on 127.0.0.1 with kinetic's curl transport, the way a client sees them:
// operation lifecycles, SERVICE_DISABLED, cluster and node pool states, injected failures,
// builds that push tags or fail with a pip error in their log. (gcloud drives the same fakes in
// tests/gcloud/run_gcloud.sh.)
#include <gtest/gtest.h>

#include <archive.h>
#include <archive_entry.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "fakes/fake_gcp.h"
#include "fakes/fake_gcs.h"
#include "http/transport.h"

namespace kinetic::fakes {
namespace {

using json = nlohmann::json;

const std::set<std::string> kAllApis = {"serviceusage.googleapis.com", "storage.googleapis.com",
                                        "container.googleapis.com", "cloudbuild.googleapis.com",
                                        "artifactregistry.googleapis.com"};

// A .tar.gz holding FILES (path → contents), as gcloud builds submit uploads it.
std::string tar_gz(const std::map<std::string, std::string>& files) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  archive_write_open(
      a, &out, nullptr,
      [](archive*, void* data, const void* buf, size_t n) -> la_ssize_t {
        static_cast<std::string*>(data)->append(static_cast<const char*>(buf), n);
        return static_cast<la_ssize_t>(n);
      },
      nullptr);
  for (auto& [path, contents] : files) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_size(e, static_cast<la_int64_t>(contents.size()));
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_write_header(a, e);
    archive_write_data(a, contents.data(), contents.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

class FakeGcpTest : public ::testing::Test {
 protected:
  std::unique_ptr<http::Transport> http = http::make_curl_transport();
  std::unique_ptr<FakeGcp> fake;
  FakeGcpOptions options;

  void start() { fake = std::make_unique<FakeGcp>(options); }

  http::Response call(const std::string& service, const std::string& method,
                      const std::string& path, const json& body = nullptr, bool auth = true) {
    http::Request req;
    req.method = method;
    req.url = fake->url(service) + path;
    if (auth) req.headers.emplace_back("Authorization", "Bearer ya29.test");
    if (!body.is_null()) {
      req.body = body.dump();
      req.headers.emplace_back("Content-Type", "application/json");
    }
    return http->send(req);
  }
  json ok(const std::string& service, const std::string& method, const std::string& path,
          const json& body = nullptr) {
    auto res = call(service, method, path, body);
    EXPECT_EQ(res.status, 200) << method << " " << path << ": " << res.body;
    return json::parse(res.body.empty() ? "{}" : res.body);
  }
  // Asserts a google.rpc.Status answer; returns its "error" member.
  json error(const std::string& service, const std::string& method, const std::string& path,
             int http_status, const std::string& status, const json& body = nullptr) {
    auto res = call(service, method, path, body);
    EXPECT_EQ(res.status, http_status) << method << " " << path << ": " << res.body;
    auto j = json::parse(res.body);
    EXPECT_EQ(j["error"]["code"], http_status);
    EXPECT_EQ(j["error"]["status"], status) << res.body;
    return j["error"];
  }
  // Reads (so finishes) the first operation of us-central1-a, as a client polling it would.
  void finish_first_operation() {
    const std::string operations = "v1/projects/acme/locations/us-central1-a/operations";
    ok("container", "GET",
       operations + "/" +
           ok("container", "GET", operations)["operations"][0]["name"].get<std::string>());
  }
};

// ---- common ---------------------------------------------------------------------------------

TEST_F(FakeGcpTest, FakeGcpEachApiOnItsOwnPortAndAuthIsRequired) {
  start();
  std::set<int> ports;
  for (auto s : {"serviceusage", "container", "cloudbuild", "artifactregistry"}) {
    ports.insert(fake->port(s));
    EXPECT_EQ(fake->url(s), "http://127.0.0.1:" + std::to_string(fake->port(s)) + "/");
  }
  EXPECT_EQ(ports.size(), 4u);
  auto res = call("serviceusage", "GET", "v1/projects/p/services/container.googleapis.com", nullptr,
                  false);
  EXPECT_EQ(res.status, 401);
  auto err = json::parse(res.body)["error"];
  EXPECT_EQ(err["status"], "UNAUTHENTICATED");
  EXPECT_EQ(err["details"][0]["reason"], "CREDENTIALS_MISSING");
}

TEST_F(FakeGcpTest, FakeGcpFailNextAnswers429WithRetryInfoAndCountersCanonicalise) {
  options.enabled_services = kAllApis;
  start();
  fake->fail_next("container", 1, 429, "GET /v1/projects/{name}/locations/{name}/clusters");
  auto err = error("container", "GET", "v1/projects/p/locations/us-central1-a/clusters", 429,
                   "RESOURCE_EXHAUSTED");
  bool retry_info = false;
  for (auto& d : err["details"]) {
    if (d["@type"] == "type.googleapis.com/google.rpc.RetryInfo") retry_info = true;
  }
  EXPECT_TRUE(retry_info) << err.dump();
  ok("container", "GET", "v1/projects/p/locations/us-central1-a/clusters");
  fake->fail_next("container", 1, 503);
  error("container", "GET", "v1/projects/p/locations/-/clusters", 503, "UNAVAILABLE");

  auto counts = fake->request_counts("container");
  EXPECT_EQ(counts["GET /v1/projects/{name}/locations/{name}/clusters"], 3);
  EXPECT_EQ(counts["injected_failures"], 2);
  auto served = ok("container", "GET", "_fake/counters");
  EXPECT_EQ(served["GET /v1/projects/{name}/locations/{name}/clusters"], 3);
  EXPECT_EQ(fake->total_requests(), 3);
  fake->reset_counters();
  EXPECT_TRUE(fake->request_counts("container").empty());
}

// ---- Service Usage --------------------------------------------------------------------------

TEST_F(FakeGcpTest, FakeGcpServiceDisabledUntilTheEnableOperationIsDone) {
  options.operation_polls = 2;
  start();
  auto err = error("container", "GET", "v1/projects/acme/locations/us-central1-a/clusters", 403,
                   "PERMISSION_DENIED");
  EXPECT_NE(err["message"].get<std::string>().find(
                "Enable it by visiting https://console.developers.google.com/apis/api/"
                "container.googleapis.com/overview?project=acme then retry."),
            std::string::npos);
  auto info = err["details"][0];
  EXPECT_EQ(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
  EXPECT_EQ(info["reason"], "SERVICE_DISABLED");
  EXPECT_EQ(info["domain"], "googleapis.com");
  EXPECT_EQ(info["metadata"]["service"], "container.googleapis.com");
  EXPECT_EQ(info["metadata"]["consumer"], "projects/acme");
  EXPECT_EQ(info["metadata"]["activationUrl"],
            "https://console.developers.google.com/apis/api/container.googleapis.com/"
            "overview?project=acme");

  auto svc = ok("serviceusage", "GET", "v1/projects/acme/services/container.googleapis.com");
  EXPECT_EQ(svc["state"], "DISABLED");
  EXPECT_EQ(svc["config"]["title"], "Kubernetes Engine API");

  auto op = ok("serviceusage", "POST", "v1/projects/acme/services:batchEnable",
               {{"serviceIds", {"container.googleapis.com", "cloudbuild.googleapis.com"}}});
  auto name = op["name"].get<std::string>();
  EXPECT_EQ(name.rfind("operations/acat.p2-", 0), 0u) << name;
  EXPECT_FALSE(op.value("done", false));
  EXPECT_FALSE(fake->service_enabled("acme", "container.googleapis.com"));
  op = ok("serviceusage", "GET", "v1/" + name);
  EXPECT_FALSE(op.value("done", false));
  op = ok("serviceusage", "GET", "v1/" + name);
  EXPECT_TRUE(op.value("done", false));
  EXPECT_EQ(op["response"]["@type"],
            "type.googleapis.com/google.api.serviceusage.v1.BatchEnableServicesResponse");
  EXPECT_EQ(op["response"]["services"].size(), 2u);
  EXPECT_TRUE(fake->service_enabled("acme", "container.googleapis.com"));
  ok("container", "GET", "v1/projects/acme/locations/us-central1-a/clusters");
  // Still off in another project.
  error("container", "GET", "v1/projects/other/locations/us-central1-a/clusters", 403,
        "PERMISSION_DENIED");

  auto got = ok("serviceusage", "GET",
                "v1/projects/acme/services:batchGet?names=projects/acme/services/"
                "container.googleapis.com&names=projects/acme/services/compute.googleapis.com");
  ASSERT_EQ(got["services"].size(), 2u);
  EXPECT_EQ(got["services"][0]["state"], "ENABLED");
  EXPECT_EQ(got["services"][1]["state"], "DISABLED");
  auto list = ok("serviceusage", "GET", "v1/projects/acme/services?filter=state:ENABLED");
  std::set<std::string> enabled;
  for (auto& s : list["services"]) enabled.insert(s["config"]["name"].get<std::string>());
  EXPECT_TRUE(enabled.count("container.googleapis.com"));
  EXPECT_TRUE(enabled.count("serviceusage.googleapis.com"));
  EXPECT_FALSE(enabled.count("compute.googleapis.com"));

  // Enabling what is on already is a finished no-op; an unknown service is refused.
  op = ok("serviceusage", "POST", "v1/projects/acme/services/container.googleapis.com:enable",
          json::object());
  EXPECT_TRUE(op.value("done", false));
  error("serviceusage", "POST", "v1/projects/acme/services/nope.googleapis.com:enable", 403,
        "PERMISSION_DENIED", json::object());
}

// ---- GKE --------------------------------------------------------------------------------------

json cluster_body(const std::string& name, const std::string& machine = "e2-standard-4") {
  return {{"cluster",
           {{"name", name},
            {"nodePools",
             {{{"name", "default-pool"},
               {"initialNodeCount", 1},
               {"config", {{"machineType", machine}}}}}}}}};
}

TEST_F(FakeGcpTest, FakeGcpClusterCreateRunsToRunningWithEndpointAndCa) {
  options.enabled_services = kAllApis;
  options.operation_polls = 2;
  options.kube_endpoint = "127.0.0.1:6443";
  options.kube_ca_pem = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n";
  std::vector<std::string> created;
  options.on_pool_created = [&](const std::string& cluster, const json& pool) {
    created.push_back(cluster + "/" + pool["name"].get<std::string>());
    EXPECT_EQ(pool["config"]["machineType"], "e2-standard-4");
    EXPECT_EQ(pool["status"], "RUNNING");
  };
  start();
  const std::string base = "v1/projects/acme/locations/us-central1-a/";
  auto op = ok("container", "POST", base + "clusters", cluster_body("k1"));
  auto name = op["name"].get<std::string>();
  EXPECT_TRUE(std::regex_match(name, std::regex("operation-[0-9]{13}-[0-9a-f]{8}"))) << name;
  EXPECT_EQ(op["operationType"], "CREATE_CLUSTER");
  EXPECT_EQ(op["status"], "PENDING");
  EXPECT_EQ(op["zone"], "us-central1-a");
  EXPECT_EQ(op["location"], "us-central1-a");
  EXPECT_NE(op["targetLink"].get<std::string>().find("/clusters/k1"), std::string::npos);
  EXPECT_TRUE(op.contains("selfLink") && op.contains("startTime"));

  auto c = ok("container", "GET", base + "clusters/k1");
  EXPECT_EQ(c["status"], "PROVISIONING");
  // The cluster is locked while its operation runs.
  auto err = error("container", "POST", base + "clusters/k1/nodePools", 400, "FAILED_PRECONDITION",
                   {{"nodePool", {{"name", "p2"}}}});
  EXPECT_EQ(err["message"], "Cluster is running incompatible operation " + name + ".");

  op = ok("container", "GET", base + "operations/" + name);
  EXPECT_EQ(op["status"], "RUNNING");
  EXPECT_TRUE(created.empty());
  op = ok("container", "GET", base + "operations/" + name);
  EXPECT_EQ(op["status"], "DONE");
  EXPECT_TRUE(op.contains("endTime"));
  EXPECT_FALSE(op.contains("error"));
  EXPECT_EQ(created, std::vector<std::string>{"k1/default-pool"});

  c = ok("container", "GET", base + "clusters/k1");
  EXPECT_EQ(c["status"], "RUNNING");
  EXPECT_EQ(c["endpoint"], "127.0.0.1:6443");
  EXPECT_EQ(c["masterAuth"]["clusterCaCertificate"], FakeGcs::base64(options.kube_ca_pem));
  EXPECT_EQ(c["location"], "us-central1-a");
  EXPECT_EQ(c["locations"], json::array({"us-central1-a"}));
  EXPECT_FALSE(c["currentMasterVersion"].get<std::string>().empty());
  EXPECT_NE(c["selfLink"].get<std::string>().find("/zones/us-central1-a/clusters/k1"),
            std::string::npos);
  ASSERT_EQ(c["nodePools"].size(), 1u);
  EXPECT_EQ(c["nodePools"][0]["status"], "RUNNING");
  EXPECT_EQ(fake->cluster("acme", "us-central1-a", "k1")->at("status"), "RUNNING");

  // The legacy zones/ paths and the "-" location.
  EXPECT_EQ(ok("container", "GET", "v1/projects/acme/zones/us-central1-a/clusters/k1")["name"],
            "k1");
  EXPECT_EQ(ok("container", "GET", "v1/projects/acme/locations/-/clusters")["clusters"].size(), 1u);
  EXPECT_EQ(ok("container", "GET", base + "operations")["operations"].size(), 1u);
  EXPECT_EQ(ok("container", "GET", base + "serverConfig")["defaultImageType"], "COS_CONTAINERD");

  error("container", "POST", base + "clusters", 409, "ALREADY_EXISTS", cluster_body("k1"));
  err = error("container", "POST", base + "clusters", 400, "INVALID_ARGUMENT",
              cluster_body("Bad_Name"));
  EXPECT_NE(err["message"].get<std::string>().find("cluster.name"), std::string::npos);
  err = error("container", "GET", base + "clusters/nope", 404, "NOT_FOUND");
  EXPECT_EQ(err["message"], "Not found: projects/acme/locations/us-central1-a/clusters/nope.");
  error("container", "GET", base + "operations/operation-0000000000000-deadbeef", 404, "NOT_FOUND");
}

TEST_F(FakeGcpTest, FakeGcpPoolMachineTypeMustBeOfferedInTheZone) {
  options.enabled_services = kAllApis;
  options.zone_machine_types = {{"us-central2-b", {"ct4p-hightpu-4t", "n2-standard-4"}},
                                {"us-central1-a", {"e2-standard-4", "ct5lp-hightpu-4t"}}};
  start();
  auto err = error("container", "POST", "v1/projects/acme/locations/us-central2-b/clusters", 400,
                   "INVALID_ARGUMENT", cluster_body("tpu-only"));
  EXPECT_EQ(err["message"],
            "Invalid machine type \"e2-standard-4\" in zone \"us-central2-b\": GCE_NOT_FOUND");
  EXPECT_FALSE(fake->cluster("acme", "us-central2-b", "tpu-only"));
  ok("container", "POST", "v1/projects/acme/locations/us-central2-b/clusters",
     cluster_body("tpu-only", "n2-standard-4"));
  ok("container", "POST", "v1/projects/acme/locations/us-central1-a/clusters", cluster_body("k"));
  finish_first_operation();
  err = error("container", "POST", "v1/projects/acme/locations/us-central1-a/clusters/k/nodePools",
              400, "INVALID_ARGUMENT",
              {{"nodePool", {{"name", "v4"}, {"config", {{"machineType", "ct4p-hightpu-4t"}}}}}});
  EXPECT_NE(err["message"].get<std::string>().find("\"ct4p-hightpu-4t\" in zone \"us-central1-a\""),
            std::string::npos);
}

// A flex-start pool is refused as GKE's flex-start page and cluster-toolkit say it cannot be
// (docs/capacity.md "What the fakes do"): TPU v3/v4, a CPU machine, with Spot, consuming a
// reservation. A v5e one is made.
TEST_F(FakeGcpTest, FakeGcpFlexStartPoolsTakeWhatGkeDocuments) {
  options.enabled_services = kAllApis;
  start();
  ok("container", "POST", "v1/projects/acme/locations/us-central1-a/clusters", cluster_body("k"));
  finish_first_operation();
  const std::string pools = "v1/projects/acme/locations/us-central1-a/clusters/k/nodePools";
  const auto pool = [](const std::string& name, json config) {
    config["flexStart"] = true;
    return json{{"nodePool", {{"name", name}, {"config", config}}}};
  };
  struct Refused {
    json config;
    std::string says;
  };
  const std::vector<Refused> refused = {
      {{{"machineType", "ct4p-hightpu-4t"}}, "TPU v3 or v4"},
      {{{"machineType", "e2-standard-4"}}, "not supported for machine type"},
      {{{"machineType", "ct5lp-hightpu-4t"}, {"spot", true}}, "Spot"},
      {{{"machineType", "g2-standard-4"},
        {"reservationAffinity", {{"consumeReservationType", "ANY_RESERVATION"}}}},
       "reservations"},
  };
  for (const auto& r : refused) {
    auto err = error("container", "POST", pools, 400, "INVALID_ARGUMENT", pool("f", r.config));
    EXPECT_NE(err["message"].get<std::string>().find(r.says), std::string::npos) << err.dump();
  }
  ok("container", "POST", pools, pool("v5e", {{"machineType", "ct5lp-hightpu-4t"}}));
}

// Compute Engine's two reads kinetic makes (lib/gcp/compute.h), from the same zone table.
TEST_F(FakeGcpTest, FakeComputeAnswersFromTheZoneTable) {
  options.zone_machine_types = {{"us-central1-b", {"ct5lp-hightpu-4t", "e2-standard-4"}},
                                {"us-central1-a", {"e2-standard-4"}},
                                {"europe-west4-a", {"e2-standard-4"}}};
  start();
  auto disabled = error("compute", "GET", "compute/v1/projects/acme/regions/us-central1", 403,
                        "PERMISSION_DENIED");
  EXPECT_NE(disabled.dump().find("SERVICE_DISABLED"), std::string::npos) << disabled.dump();
  fake->enable_service("acme", "compute.googleapis.com");
  auto region = ok("compute", "GET", "compute/v1/projects/acme/regions/us-central1");
  EXPECT_EQ(
      region["zones"],
      json::array({"https://www.googleapis.com/compute/v1/projects/acme/zones/us-central1-a",
                   "https://www.googleapis.com/compute/v1/projects/acme/zones/us-central1-b"}));
  ok("compute", "GET",
     "compute/v1/projects/acme/zones/us-central1-b/machineTypes/ct5lp-hightpu-4t");
  auto missing = error("compute", "GET",
                       "compute/v1/projects/acme/zones/us-central1-a/machineTypes/ct5lp-hightpu-4t",
                       404, "NOT_FOUND");
  EXPECT_EQ(missing["message"],
            "The resource 'projects/acme/zones/us-central1-a/machineTypes/ct5lp-hightpu-4t' was "
            "not found");
  error("compute", "GET", "compute/v1/projects/acme/regions/asia-east1", 404, "NOT_FOUND");
}

// What GKE refuses of a node configuration before it creates anything: image streaming while
// the Container File System API is off, and a node service account IAM does not have.
TEST_F(FakeGcpTest, FakeGcpRefusesImageStreamingWithoutItsApiAndAMissingNodeAccount) {
  options.enabled_services = kAllApis;
  options.enabled_services.insert("iam.googleapis.com");
  start();
  const std::string clusters = "v1/projects/acme/locations/us-central1-a/clusters";
  json streaming = cluster_body("k");
  streaming["cluster"]["nodePools"][0]["config"]["gcfsConfig"] = {{"enabled", true}};
  auto err = error("container", "POST", clusters, 403, "PERMISSION_DENIED", streaming);
  EXPECT_NE(err["message"].get<std::string>().find("Container File System API has not been used"),
            std::string::npos)
      << err.dump();
  EXPECT_EQ(err["details"][0]["reason"], "SERVICE_DISABLED");
  EXPECT_EQ(err["details"][0]["metadata"]["service"], "containerfilesystem.googleapis.com");
  EXPECT_FALSE(fake->cluster("acme", "us-central1-a", "k"));

  json named = cluster_body("k");
  named["cluster"]["nodePools"][0]["config"]["serviceAccount"] =
      "kinetic-nodes@acme.iam.gserviceaccount.com";
  err = error("container", "POST", clusters, 400, "INVALID_ARGUMENT", named);
  EXPECT_EQ(err["message"],
            "Service account \"kinetic-nodes@acme.iam.gserviceaccount.com\" does not exist.");
  EXPECT_FALSE(fake->cluster("acme", "us-central1-a", "k"));

  // Once the account exists and the API is on, both are taken.
  ok("iam", "POST", "v1/projects/acme/serviceAccounts", {{"accountId", "kinetic-nodes"}});
  error("iam", "POST", "v1/projects/acme/serviceAccounts", 409, "ALREADY_EXISTS",
        {{"accountId", "kinetic-nodes"}});
  fake->enable_service("acme", "containerfilesystem.googleapis.com");
  named["cluster"]["nodePools"][0]["config"]["gcfsConfig"] = {{"enabled", true}};
  ok("container", "POST", clusters, named);
  auto cluster = fake->cluster("acme", "us-central1-a", "k");
  ASSERT_TRUE(cluster);
  EXPECT_EQ((*cluster)["nodePools"][0]["config"]["serviceAccount"],
            "kinetic-nodes@acme.iam.gserviceaccount.com");

  // A pool created later is held to the same rules.
  finish_first_operation();
  ok("iam", "DELETE",
     "v1/projects/acme/serviceAccounts/kinetic-nodes@acme.iam.gserviceaccount.com");
  error("iam", "GET", "v1/projects/acme/serviceAccounts/kinetic-nodes@acme.iam.gserviceaccount.com",
        404, "NOT_FOUND");
  err = error("container", "POST", clusters + "/k/nodePools", 400, "INVALID_ARGUMENT",
              {{"nodePool",
                {{"name", "p"},
                 {"config", {{"serviceAccount", "kinetic-nodes@acme.iam.gserviceaccount.com"}}}}}});
  EXPECT_NE(err["message"].get<std::string>().find("does not exist"), std::string::npos);
}

TEST_F(FakeGcpTest, FakeGcpInjectedPoolFailureAndPoolCallbacks) {
  options.enabled_services = kAllApis;
  std::vector<std::string> events;
  options.on_pool_created = [&](const std::string& c, const json& p) {
    events.push_back("+" + c + "/" + p["name"].get<std::string>());
  };
  options.on_pool_deleted = [&](const std::string& c, const std::string& p) {
    events.push_back("-" + c + "/" + p);
  };
  start();
  const std::string base = "v1/projects/acme/locations/us-central1-a/";
  auto poll = [&](const json& op) {
    return ok("container", "GET", base + "operations/" + op["name"].get<std::string>());
  };
  EXPECT_EQ(poll(ok("container", "POST", base + "clusters", cluster_body("k")))["status"], "DONE");

  fake->fail_next_pool("GCE_STOCKOUT",
                       "Instance 'gke-k-v5e-1' creation failed: The zone "
                       "'projects/acme/zones/us-central1-a' does not have enough "
                       "resources available to fulfill the request.");
  json pool = {{"nodePool",
                {{"name", "v5e"},
                 {"initialNodeCount", 0},
                 {"config", {{"machineType", "ct5lp-hightpu-4t"}, {"spot", true}}},
                 {"autoscaling", {{"enabled", true}, {"minNodeCount", 0}, {"maxNodeCount", 4}}},
                 {"placementPolicy", {{"tpuTopology", "4x4"}}}}}};
  auto op = ok("container", "POST", base + "clusters/k/nodePools", pool);
  EXPECT_EQ(op["operationType"], "CREATE_NODE_POOL");
  op = poll(op);
  EXPECT_EQ(op["status"], "DONE");
  EXPECT_EQ(op["error"]["code"], 8);  // RESOURCE_EXHAUSTED
  EXPECT_NE(op["statusMessage"].get<std::string>().find("does not have enough resources"),
            std::string::npos);
  auto failed = ok("container", "GET", base + "clusters/k/nodePools/v5e");
  EXPECT_EQ(failed["status"], "ERROR");
  EXPECT_EQ(failed["conditions"][0]["code"], "GCE_STOCKOUT");
  EXPECT_EQ(failed["placementPolicy"]["tpuTopology"], "4x4");

  // The next pool is fine.
  pool["nodePool"]["name"] = "v5e-b";
  op = poll(ok("container", "POST", base + "clusters/k/nodePools", pool));
  EXPECT_FALSE(op.contains("error"));
  EXPECT_EQ(ok("container", "GET", base + "clusters/k/nodePools/v5e-b")["status"], "RUNNING");
  error("container", "POST", base + "clusters/k/nodePools", 409, "ALREADY_EXISTS", pool);
  EXPECT_EQ(ok("container", "GET", base + "clusters/k/nodePools")["nodePools"].size(), 3u);

  op = ok("container", "DELETE", base + "clusters/k/nodePools/v5e-b");
  EXPECT_EQ(op["operationType"], "DELETE_NODE_POOL");
  EXPECT_EQ(ok("container", "GET", base + "clusters/k/nodePools/v5e-b")["status"], "STOPPING");
  poll(op);
  error("container", "GET", base + "clusters/k/nodePools/v5e-b", 404, "NOT_FOUND");

  op = ok("container", "DELETE", base + "clusters/k");
  EXPECT_EQ(ok("container", "GET", base + "clusters/k")["status"], "STOPPING");
  poll(op);
  error("container", "GET", base + "clusters/k", 404, "NOT_FOUND");
  EXPECT_EQ(events, (std::vector<std::string>{"+k/default-pool", "+k/v5e-b", "-k/v5e-b",
                                              "-k/default-pool", "-k/v5e"}));
}

// ---- Artifact Registry ------------------------------------------------------------------------

TEST_F(FakeGcpTest, FakeGcpRepositoryCreateConflictAndDelete) {
  options.enabled_services = kAllApis;
  start();
  const std::string base = "v1/projects/acme/locations/us-central1/";
  auto op = ok("artifactregistry", "POST", base + "repositories?repositoryId=kinetic",
               {{"format", "DOCKER"}, {"description", "kinetic images"}});
  auto name = op["name"].get<std::string>();
  EXPECT_EQ(name.rfind("projects/acme/locations/us-central1/operations/", 0), 0u) << name;
  EXPECT_EQ(op["metadata"]["@type"],
            "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata");
  EXPECT_FALSE(op.value("done", false));
  op = ok("artifactregistry", "GET", "v1/" + name);
  EXPECT_TRUE(op.value("done", false));
  EXPECT_EQ(op["response"]["@type"],
            "type.googleapis.com/google.devtools.artifactregistry.v1.Repository");
  EXPECT_EQ(op["response"]["registryUri"], "us-central1-docker.pkg.dev/acme/kinetic");

  error("artifactregistry", "POST", base + "repositories?repositoryId=kinetic", 409,
        "ALREADY_EXISTS", {{"format", "DOCKER"}});
  error("artifactregistry", "POST", base + "repositories?repositoryId=Bad_Id", 400,
        "INVALID_ARGUMENT", {{"format", "DOCKER"}});
  auto repo = ok("artifactregistry", "GET", base + "repositories/kinetic");
  EXPECT_EQ(repo["name"], "projects/acme/locations/us-central1/repositories/kinetic");
  EXPECT_EQ(repo["mode"], "STANDARD_REPOSITORY");
  EXPECT_EQ(ok("artifactregistry", "GET", base + "repositories")["repositories"].size(), 1u);

  // Tags of a package holding '/', spelled %2F (and %252F as gcloud double-encodes it).
  fake->put_image("us-central1-docker.pkg.dev/acme/kinetic/team/base:tpu-abc");
  auto tag = ok("artifactregistry", "GET",
                base + "repositories/kinetic/packages/team%2Fbase/tags/tpu-abc");
  EXPECT_EQ(tag["name"],
            "projects/acme/locations/us-central1/repositories/kinetic/packages/team%2Fbase/tags/"
            "tpu-abc");
  EXPECT_NE(tag["version"].get<std::string>().find("/versions/sha256:"), std::string::npos);
  ok("artifactregistry", "GET", base + "repositories/kinetic/packages/team%252Fbase/tags/tpu-abc");
  EXPECT_EQ(ok("artifactregistry", "GET",
               base + "repositories/kinetic/packages/team%252Fbase/tags")["tags"]
                .size(),
            1u);
  auto err = error("artifactregistry", "GET",
                   base + "repositories/kinetic/packages/team%2Fbase/tags/nope", 404, "NOT_FOUND");
  EXPECT_EQ(err["message"], "Requested entity was not found.");
  auto images = ok("artifactregistry", "GET", base + "repositories/kinetic/dockerImages");
  ASSERT_EQ(images["dockerImages"].size(), 1u);
  EXPECT_EQ(images["dockerImages"][0]["tags"], json::array({"tpu-abc"}));

  op = ok("artifactregistry", "DELETE", base + "repositories/kinetic");
  op = ok("artifactregistry", "GET", "v1/" + op["name"].get<std::string>());
  EXPECT_TRUE(op.value("done", false));
  error("artifactregistry", "GET", base + "repositories/kinetic", 404, "NOT_FOUND");
  EXPECT_FALSE(fake->has_image("us-central1-docker.pkg.dev/acme/kinetic/team/base:tpu-abc"));
}

// ---- Cloud Build ------------------------------------------------------------------------------

class FakeGcpBuildTest : public FakeGcpTest {
 protected:
  FakeGcs gcs;
  const std::string image = "us-central1-docker.pkg.dev/acme/kinetic/base:tpu-0123456789ab";

  void SetUp() override {
    options.enabled_services = kAllApis;
    options.gcs = &gcs;
    options.build_polls = 2;
    start();
  }
  void make_repo() {
    auto op = ok("artifactregistry", "POST",
                 "v1/projects/acme/locations/us-central1/repositories?repositoryId=kinetic",
                 {{"format", "DOCKER"}});
    ok("artifactregistry", "GET", "v1/" + op["name"].get<std::string>());
  }
  void put_source(const std::string& requirements) {
    gcs.put_object("acme_cloudbuild", "source/ctx.tgz",
                   tar_gz({{"Dockerfile",
                            "FROM python:3.11-slim\nCOPY requirements.txt .\n"
                            "RUN pip install --no-cache-dir -r requirements.txt\n"},
                           {"requirements.txt", requirements}}));
  }
  json build_body() {
    return {{"source",
             {{"storageSource", {{"bucket", "acme_cloudbuild"}, {"object", "source/ctx.tgz"}}}}},
            {"steps",
             {{{"name", "gcr.io/cloud-builders/docker"},
               {"args", {"build", "--network", "cloudbuild", "-t", image, "."}}}}},
            {"images", {image}},
            {"logsBucket", "gs://acme-kinetic-logs/cloudbuild"}};
  }
  // Creates the build and polls builds.get until it ends; returns the statuses seen and the build.
  std::pair<std::vector<std::string>, json> run_build(const json& body) {
    auto op = ok("cloudbuild", "POST", "v1/projects/acme/locations/us-central1/builds", body);
    EXPECT_EQ(op["metadata"]["@type"],
              "type.googleapis.com/google.devtools.cloudbuild.v1.BuildOperationMetadata");
    EXPECT_NE(op["name"].get<std::string>().find("/locations/us-central1/operations/"),
              std::string::npos);
    auto id = op["metadata"]["build"]["id"].get<std::string>();
    std::vector<std::string> seen = {op["metadata"]["build"]["status"].get<std::string>()};
    json b;
    for (int i = 0; i < 10; ++i) {
      b = ok("cloudbuild", "GET", "v1/projects/acme/locations/us-central1/builds/" + id);
      seen.push_back(b["status"]);
      if (b["status"] != "QUEUED" && b["status"] != "WORKING") break;
    }
    auto done = ok("cloudbuild", "GET", "v1/" + op["name"].get<std::string>());
    EXPECT_TRUE(done.value("done", false));
    return {seen, b};
  }
};

TEST_F(FakeGcpBuildTest, FakeGcpBuildSuccessPushesTheTag) {
  make_repo();
  put_source("numpy>=1.26\n# a comment\njax[tpu]\n");
  auto [seen, b] = run_build(build_body());
  EXPECT_EQ(seen, (std::vector<std::string>{"QUEUED", "QUEUED", "WORKING", "WORKING", "SUCCESS"}));
  ASSERT_EQ(b["results"]["images"].size(), 1u);
  EXPECT_EQ(b["results"]["images"][0]["name"], image);
  EXPECT_EQ(b["results"]["images"][0]["digest"].get<std::string>().rfind("sha256:", 0), 0u);
  EXPECT_EQ(b["steps"][0]["status"], "SUCCESS");
  EXPECT_EQ(b["name"].get<std::string>().find("projects/"), 0u);
  EXPECT_TRUE(fake->has_image(image));
  EXPECT_EQ(fake->builds_created(), 1);
  auto tag = ok("artifactregistry", "GET",
                "v1/projects/acme/locations/us-central1/repositories/kinetic/packages/base/tags/"
                "tpu-0123456789ab");
  EXPECT_NE(tag["version"].get<std::string>().find(
                b["results"]["images"][0]["digest"].get<std::string>()),
            std::string::npos);
  auto log =
      gcs.object_data("acme-kinetic-logs", "cloudbuild/log-" + b["id"].get<std::string>() + ".txt");
  ASSERT_TRUE(log);
  EXPECT_NE(log->find("Collecting jax"), std::string::npos) << *log;
  EXPECT_NE(log->find("DONE"), std::string::npos);
  auto list = ok("cloudbuild", "GET", "v1/projects/acme/locations/us-central1/builds");
  EXPECT_EQ(list["builds"].size(), 1u);
  error("cloudbuild", "GET", "v1/projects/acme/locations/us-central1/builds/nope", 404,
        "NOT_FOUND");
}

TEST_F(FakeGcpBuildTest, FakeGcpBuildFailsOnAnUnknownRequirementWithItsLog) {
  make_repo();
  put_source("numpy\nthis-package-does-not-exist==1.0\n");
  auto [seen, b] = run_build(build_body());
  EXPECT_EQ(seen.back(), "FAILURE");
  EXPECT_EQ(b["failureInfo"]["type"], "USER_BUILD_STEP");
  EXPECT_EQ(b["failureInfo"]["detail"],
            "Build step failure: build step 0 \"gcr.io/cloud-builders/docker\" failed: step "
            "exited with non-zero status: 1");
  EXPECT_EQ(b["statusDetail"], b["failureInfo"]["detail"]);
  EXPECT_EQ(b["steps"][0]["status"], "FAILURE");
  EXPECT_FALSE(b.contains("results"));
  EXPECT_FALSE(fake->has_image(image));
  auto log =
      gcs.object_data("acme-kinetic-logs", "cloudbuild/log-" + b["id"].get<std::string>() + ".txt");
  ASSERT_TRUE(log);
  EXPECT_NE(log->find("ERROR: No matching distribution found for this-package-does-not-exist"),
            std::string::npos)
      << *log;
  EXPECT_NE(log->find("Step #0: Collecting numpy"), std::string::npos) << *log;
}

TEST_F(FakeGcpBuildTest, FakeGcpBuildFailsToFetchAMissingSourceOrPushToAMissingRepo) {
  auto [seen, b] = run_build(build_body());  // no source object
  EXPECT_EQ(b["status"], "FAILURE");
  EXPECT_EQ(b["failureInfo"]["type"], "FETCH_SOURCE_FAILED");

  put_source("numpy\n");  // but no repository
  auto [seen2, b2] = run_build(build_body());
  EXPECT_EQ(b2["status"], "FAILURE");
  EXPECT_EQ(b2["failureInfo"]["type"], "PUSH_FAILED");
  EXPECT_FALSE(fake->has_image(image));
}

TEST_F(FakeGcpBuildTest, FakeGcpBuildGlobalCreateAndCancel) {
  put_source("numpy\n");
  auto op = ok("cloudbuild", "POST", "v1/projects/acme/builds", build_body());
  auto id = op["metadata"]["build"]["id"].get<std::string>();
  EXPECT_EQ(op["name"].get<std::string>().rfind("operations/build/acme/", 0), 0u);
  auto b = ok("cloudbuild", "POST", "v1/projects/acme/builds/" + id + ":cancel",
              {{"projectId", "acme"}, {"id", id}});
  EXPECT_EQ(b["status"], "CANCELLED");
  op = ok("cloudbuild", "GET", "v1/" + op["name"].get<std::string>());
  EXPECT_TRUE(op.value("done", false));
  EXPECT_EQ(op["error"]["code"], 1);
  error("cloudbuild", "POST", "v1/projects/acme/builds", 400, "INVALID_ARGUMENT",
        {{"steps", json::array()}});
}

}  // namespace
}  // namespace kinetic::fakes
