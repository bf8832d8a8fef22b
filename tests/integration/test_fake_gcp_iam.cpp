// The fake Cloud Resource Manager (project IAM policies), IAM (custom roles) and Workload Identity
// metadata servers of tests/fakes/fake_gcp.h, driven over HTTP with kinetic's curl transport the
// way kinetic's auto-down grant will drive them: a read-modify-write of the project policy that
// loses a race and retries, a one-permission custom role, and a pod's token that may delete its
// own cluster and nothing else. (gcloud drives the same APIs in tests/gcloud/run_gcloud.sh.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fakes/fake_gcp.h"
#include "http/transport.h"

namespace kinetic::fakes {
namespace {

using json = nlohmann::json;

constexpr const char* kUserToken = "ya29.user";
constexpr const char* kZone = "us-central1-a";
constexpr const char* kConcurrent =
    "There were concurrent policy changes. Please retry the whole read-modify-write with "
    "exponential backoff.";
const std::string kCluster = "projects/acme/locations/us-central1-a/clusters/kinetic";

class FakeGcpIamTest : public ::testing::Test {
 protected:
  std::unique_ptr<http::Transport> http = http::make_curl_transport();
  std::unique_ptr<FakeGcp> fake;

  void SetUp() override {
    FakeGcpOptions options;
    options.enabled_services = {"serviceusage.googleapis.com", "container.googleapis.com",
                                "cloudresourcemanager.googleapis.com", "iam.googleapis.com"};
    options.operation_polls = 1;
    fake = std::make_unique<FakeGcp>(options);
  }

  http::Response call(const std::string& service, const std::string& method,
                      const std::string& path, const json& body = nullptr,
                      const std::string& token = kUserToken) {
    http::Request req;
    req.method = method;
    req.url = fake->url(service) + path;
    req.headers.emplace_back("Authorization", "Bearer " + token);
    if (!body.is_null()) {
      req.body = body.dump();
      req.headers.emplace_back("Content-Type", "application/json");
    }
    return http->send(req);
  }
  json ok(const std::string& service, const std::string& method, const std::string& path,
          const json& body = nullptr, const std::string& token = kUserToken) {
    auto res = call(service, method, path, body, token);
    EXPECT_EQ(res.status, 200) << method << " " << path << ": " << res.body;
    return json::parse(res.body.empty() ? "{}" : res.body);
  }
  // Asserts a google.rpc.Status answer; returns its "error" member.
  json error(const std::string& service, const std::string& method, const std::string& path,
             int http_status, const std::string& status, const json& body = nullptr,
             const std::string& token = kUserToken) {
    auto res = call(service, method, path, body, token);
    EXPECT_EQ(res.status, http_status) << method << " " << path << ": " << res.body;
    auto j = json::parse(res.body, nullptr, false);
    EXPECT_EQ(j["error"]["code"], http_status) << res.body;
    EXPECT_EQ(j["error"]["status"], status) << res.body;
    return j["error"];
  }

  json get_policy(int version = 3) {
    return ok("cloudresourcemanager", "POST", "v1/projects/acme:getIamPolicy",
              {{"options", {{"requestedPolicyVersion", version}}}});
  }
  http::Response set_policy(const json& policy) {
    return call("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy",
                {{"policy", policy}});
  }
  static json binding(const std::string& role, const std::string& member,
                      const std::string& expression = {}) {
    json b = {{"role", role}, {"members", json::array({member})}};
    if (!expression.empty())
      b["condition"] = {{"title", "kinetic-auto-down"}, {"expression", expression}};
    return b;
  }
  // POLICY with BINDING added, as version 3 (a client that writes conditions must say so).
  static json with(json policy, const json& binding) {
    policy["bindings"].push_back(binding);
    policy["version"] = 3;
    return policy;
  }

  void create_role(const std::string& id, const std::vector<std::string>& permissions) {
    ok("iam", "POST", "v1/projects/acme/roles",
       {{"roleId", id},
        {"role", {{"title", id}, {"includedPermissions", permissions}, {"stage", "GA"}}}});
  }
  void create_cluster(const std::string& name) {
    json body = {{"cluster", {{"name", name}, {"initialNodeCount", 1}}}};
    auto op = ok("container", "POST",
                 std::string("v1/projects/acme/locations/") + kZone + "/clusters", body);
    op = ok("container", "GET", operation_path(op["name"].get<std::string>()));
    ASSERT_EQ(op["status"], "DONE") << op.dump();
  }
  // A token from the metadata server of the pod running as NS/KSA.
  std::string pod_token(const std::string& ns = "kinetic", const std::string& ksa = "auto-down") {
    http::Request req;
    req.url = "http://" + fake->workload_identity_metadata_host("acme", ns, ksa) +
              "/computeMetadata/v1/instance/service-accounts/default/token";
    req.headers.emplace_back("Metadata-Flavor", "Google");
    auto res = http->send(req);
    EXPECT_EQ(res.status, 200) << res.body;
    auto j = json::parse(res.body);
    EXPECT_EQ(j["token_type"], "Bearer");
    EXPECT_EQ(j["expires_in"], 3599);
    return j["access_token"].get<std::string>();
  }
  std::string operation_path(const std::string& name) {
    return std::string("v1/projects/acme/locations/") + kZone + "/operations/" + name;
  }
  std::string cluster_path(const std::string& name) {
    return std::string("v1/projects/acme/locations/") + kZone + "/clusters/" + name;
  }
};

// ---- Cloud Resource Manager: project policies --------------------------------------------------

TEST_F(FakeGcpIamTest, FakeGcpIamProjectPolicyStartsWithTheOwnerAndEtagsGuardWrites) {
  auto policy = get_policy();
  EXPECT_EQ(policy["version"], 1);
  EXPECT_EQ(policy["bindings"],
            json::array({{{"role", "roles/owner"}, {"members", {"user:test@example.com"}}}}));
  const auto first = policy["etag"].get<std::string>();
  EXPECT_EQ(first.rfind("Bw", 0), 0u) << first;
  // An empty body asks for version 1, which is all a policy without conditions needs.
  EXPECT_EQ(ok("cloudresourcemanager", "POST", "v1/projects/acme:getIamPolicy")["etag"], first);

  auto viewer = binding("roles/viewer", "user:dana@example.com");
  auto res = set_policy(with(policy, viewer));
  ASSERT_EQ(res.status, 200) << res.body;
  auto stored = json::parse(res.body);
  EXPECT_NE(stored["etag"], first);
  EXPECT_EQ(stored["bindings"].size(), 2u);
  EXPECT_EQ(stored["version"], 1);  // no conditions: version 1 whatever was set
  EXPECT_EQ(fake->project_iam_policy("acme"), stored);

  // A write based on the first read is stale.
  auto err = error("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 409, "ABORTED",
                   {{"policy", with(policy, binding("roles/viewer", "user:eve@example.com"))}});
  EXPECT_EQ(err["message"], kConcurrent);
  EXPECT_EQ(fake->project_iam_policy("acme"), stored);
  // Read again, re-apply: both changes are in.
  policy = get_policy();
  res = set_policy(with(policy, binding("roles/viewer", "user:eve@example.com")));
  ASSERT_EQ(res.status, 200) << res.body;
  auto members = json::parse(res.body)["bindings"][1]["members"];
  EXPECT_EQ(members, json::array({"user:dana@example.com", "user:eve@example.com"}));
  // The project number names the same project.
  auto number = ok("cloudresourcemanager", "GET", "v1/projects/acme")["projectNumber"];
  EXPECT_EQ(ok("cloudresourcemanager", "POST",
               "v1/projects/" + number.get<std::string>() + ":getIamPolicy")["etag"],
            json::parse(res.body)["etag"]);
}

// An etag is proto bytes: gcloud sends back the one it read in base64's URL-safe alphabet, and
// that is the same etag. (Each write makes a new etag; write until one holds "+" or "/".)
TEST_F(FakeGcpIamTest, FakeGcpIamEtagIsTheSameInEitherBase64Alphabet) {
  auto policy = get_policy();
  int writes = 0;
  while (policy["etag"].get<std::string>().find_first_of("+/") == std::string::npos &&
         writes++ < 2000) {
    auto res = set_policy(policy);
    ASSERT_EQ(res.status, 200) << res.body;
    policy = json::parse(res.body);
  }
  auto etag = policy["etag"].get<std::string>();
  ASSERT_NE(etag.find_first_of("+/"), std::string::npos) << "no etag with + or / in 2000 writes";
  for (char& c : etag) c = c == '+' ? '-' : c == '/' ? '_' : c;
  policy["etag"] = etag;
  auto res = set_policy(with(policy, binding("roles/viewer", "user:dana@example.com")));
  EXPECT_EQ(res.status, 200) << res.body;
}

TEST_F(FakeGcpIamTest, FakeGcpIamConcurrentChangeAfterTheNextGetForcesAReread) {
  fake->concurrent_project_iam_change_after_next_get("acme", "roles/editor",
                                                     "user:someone-else@example.com");
  EXPECT_EQ(fake->pending_faults(), 1);
  auto policy = get_policy();
  EXPECT_EQ(fake->pending_faults(), 0);
  EXPECT_EQ(policy["bindings"].size(), 1u);  // the answer predates the other writer

  auto mine = binding("roles/viewer", "user:dana@example.com");
  auto res = set_policy(with(policy, mine));
  EXPECT_EQ(res.status, 409) << res.body;
  EXPECT_EQ(json::parse(res.body)["error"]["message"], kConcurrent);

  policy = get_policy();
  ASSERT_EQ(policy["bindings"].size(), 2u);
  EXPECT_EQ(policy["bindings"][1], binding("roles/editor", "user:someone-else@example.com"));
  res = set_policy(with(policy, mine));
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["bindings"].size(), 3u);
  // The hook fires once.
  EXPECT_EQ(set_policy(with(get_policy(), binding("roles/viewer", "user:x@example.com"))).status,
            200);
}

TEST_F(FakeGcpIamTest, FakeGcpIamConditionalBindingsNeedPolicyVersion3) {
  auto policy = get_policy();
  auto conditional = binding("roles/container.admin", "user:dana@example.com",
                             "resource.name == \"" + kCluster + "\"");
  auto v1 = with(policy, conditional);
  v1["version"] = 1;
  auto err = error("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 400,
                   "INVALID_ARGUMENT", {{"policy", v1}});
  EXPECT_NE(err["message"].get<std::string>().find("set version 3"), std::string::npos) << err;
  auto untitled = conditional;
  untitled["condition"].erase("title");
  error("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 400, "INVALID_ARGUMENT",
        {{"policy", with(policy, untitled)}});

  auto res = set_policy(with(policy, conditional));
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["version"], 3);
  policy = get_policy();
  EXPECT_EQ(policy["version"], 3);
  EXPECT_EQ(policy["bindings"][1]["condition"]["expression"],
            "resource.name == \"" + kCluster + "\"");

  // A client that cannot keep conditions may neither read nor (with an etag) write the policy.
  err = error("cloudresourcemanager", "POST", "v1/projects/acme:getIamPolicy", 400,
              "INVALID_ARGUMENT", json::object());
  EXPECT_EQ(
      err["message"],
      "Requested policy version (1) cannot be less than the existing policy version (3). For "
      "more information, please refer to https://cloud.google.com/iam/docs/policies#versions.");
  auto downgrade = policy;
  downgrade["bindings"].erase(1);
  downgrade["version"] = 1;
  err = error("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 400,
              "INVALID_ARGUMENT", {{"policy", downgrade}});
  EXPECT_EQ(
      err["message"].get<std::string>().rfind(
          "Specified policy version (1) cannot be less than the existing policy version (3).", 0),
      0u)
      << err;
  // Version 3 removes it; the policy is version 1 again.
  downgrade["version"] = 3;
  res = set_policy(downgrade);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body)["version"], 1);
}

TEST_F(FakeGcpIamTest, FakeGcpIamUnknownRolesAndMembersAreRefused) {
  auto policy = get_policy();
  auto err = error(
      "cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 400, "INVALID_ARGUMENT",
      {{"policy", with(policy, binding("projects/acme/roles/nope", "user:dana@example.com"))}});
  EXPECT_EQ(err["message"],
            "Role (projects/acme/roles/nope) does not exist in the resource's hierarchy.");
  // Another project's custom role is not in this project's hierarchy either.
  ok("iam", "POST", "v1/projects/other/roles",
     {{"roleId", "theirs"}, {"role", {{"includedPermissions", {"container.clusters.get"}}}}});
  error("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 400, "INVALID_ARGUMENT",
        {{"policy", with(policy, binding("projects/other/roles/theirs", "user:d@example.com"))}});
  for (const char* member : {"dana@example.com", "allUsers", "robot:x", "user:"}) {
    err = error("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 400,
                "INVALID_ARGUMENT", {{"policy", with(policy, binding("roles/viewer", member))}});
    EXPECT_EQ(err["message"], "Policy members must be of the form \"<type>:<value>\".") << member;
  }
  auto empty = binding("roles/viewer", "user:d@example.com");
  empty["members"] = json::array();
  error("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 400, "INVALID_ARGUMENT",
        {{"policy", with(policy, empty)}});
  for (const char* member :
       {"user:d@example.com", "serviceAccount:sa@acme.iam.gserviceaccount.com",
        "group:g@example.com", "domain:example.com", "deleted:user:old@example.com?uid=1",
        "principalSet://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/"
        "acme.svc.id.goog/namespace/kinetic"}) {
    policy = get_policy();
    EXPECT_EQ(set_policy(with(policy, binding("roles/viewer", member))).status, 200) << member;
  }
  // Nothing refused was stored.
  EXPECT_EQ(fake->project_iam_policy("acme")["bindings"].size(), 2u);
}

// ---- IAM: custom roles --------------------------------------------------------------------------

TEST_F(FakeGcpIamTest, FakeGcpIamCustomRoleLifecycle) {
  auto role = ok("iam", "POST", "v1/projects/acme/roles",
                 {{"roleId", "kineticAutoDown"},
                  {"role",
                   {{"title", "kinetic auto-down"},
                    {"description", "Deletes an idle cluster"},
                    {"includedPermissions", {"container.clusters.delete"}},
                    {"stage", "GA"}}}});
  EXPECT_EQ(role["name"], "projects/acme/roles/kineticAutoDown");
  EXPECT_EQ(role["title"], "kinetic auto-down");
  EXPECT_EQ(role["description"], "Deletes an idle cluster");
  EXPECT_EQ(role["includedPermissions"], json::array({"container.clusters.delete"}));
  EXPECT_EQ(role["stage"], "GA");
  EXPECT_FALSE(role.contains("deleted"));
  EXPECT_EQ(role["etag"].get<std::string>().rfind("Bw", 0), 0u);
  EXPECT_EQ(fake->custom_role("acme", "kineticAutoDown"), role);
  EXPECT_EQ(ok("iam", "GET", "v1/projects/acme/roles/kineticAutoDown"), role);

  auto err = error("iam", "POST", "v1/projects/acme/roles", 409, "ALREADY_EXISTS",
                   {{"roleId", "kineticAutoDown"}, {"role", json::object()}});
  EXPECT_NE(err["message"].get<std::string>().find("already exists"), std::string::npos);
  for (const char* id : {"ab", "has-dash", "has/slash"}) {
    error("iam", "POST", "v1/projects/acme/roles", 400, "INVALID_ARGUMENT",
          {{"roleId", id}, {"role", json::object()}});
  }
  error("iam", "POST", "v1/projects/acme/roles", 400, "INVALID_ARGUMENT",
        {{"roleId", "badPerm"}, {"role", {{"includedPermissions", {"container.clusters"}}}}});
  error("iam", "GET", "v1/projects/acme/roles/nope", 404, "NOT_FOUND");
  EXPECT_FALSE(fake->custom_role("acme", "nope"));

  // A patch must carry the etag it read.
  err = error("iam", "PATCH", "v1/projects/acme/roles/kineticAutoDown?updateMask=title", 409,
              "ABORTED", {{"title", "x"}, {"etag", "BwYAAAAAAAA="}});
  EXPECT_EQ(err["message"], kConcurrent);
  auto patched = ok(
      "iam", "PATCH", "v1/projects/acme/roles/kineticAutoDown?updateMask=includedPermissions,title",
      {{"title", "kinetic auto-down v2"},
       {"description", "not in the mask"},
       {"includedPermissions", {"container.clusters.delete", "container.clusters.get"}},
       {"etag", role["etag"]}});
  EXPECT_EQ(patched["title"], "kinetic auto-down v2");
  EXPECT_EQ(patched["description"], "Deletes an idle cluster");
  EXPECT_EQ(patched["includedPermissions"].size(), 2u);
  EXPECT_NE(patched["etag"], role["etag"]);

  // Deleting is soft: the role is still there, marked, and its id taken.
  auto deleted = ok("iam", "DELETE", "v1/projects/acme/roles/kineticAutoDown");
  EXPECT_EQ(deleted["deleted"], true);
  EXPECT_EQ(ok("iam", "GET", "v1/projects/acme/roles/kineticAutoDown")["deleted"], true);
  EXPECT_EQ(fake->custom_role("acme", "kineticAutoDown")->at("deleted"), true);
  err = error("iam", "POST", "v1/projects/acme/roles", 400, "FAILED_PRECONDITION",
              {{"roleId", "kineticAutoDown"}, {"role", json::object()}});
  EXPECT_EQ(err["message"],
            "You can't create a role with role_id (kineticAutoDown) where there is an existing "
            "role with that role_id in a deleted state.");
  error("iam", "PATCH", "v1/projects/acme/roles/kineticAutoDown", 400, "FAILED_PRECONDITION",
        {{"title", "x"}});
  error("iam", "DELETE", "v1/projects/acme/roles/kineticAutoDown", 400, "FAILED_PRECONDITION");
  EXPECT_FALSE(ok("iam", "GET", "v1/projects/acme/roles").contains("roles"));
  EXPECT_EQ(ok("iam", "GET", "v1/projects/acme/roles?showDeleted=true")["roles"].size(), 1u);
  // A deleted role cannot be newly granted.
  error("cloudresourcemanager", "POST", "v1/projects/acme:setIamPolicy", 400, "INVALID_ARGUMENT",
        {{"policy", with(get_policy(), binding("projects/acme/roles/kineticAutoDown",
                                               "user:dana@example.com"))}});

  auto undeleted =
      ok("iam", "POST", "v1/projects/acme/roles/kineticAutoDown:undelete", json::object());
  EXPECT_FALSE(undeleted.contains("deleted"));
  EXPECT_EQ(undeleted["title"], "kinetic auto-down v2");
  error("iam", "POST", "v1/projects/acme/roles/kineticAutoDown:undelete", 400,
        "FAILED_PRECONDITION", json::object());
  EXPECT_EQ(set_policy(with(get_policy(), binding("projects/acme/roles/kineticAutoDown",
                                                  "user:dana@example.com")))
                .status,
            200);
  auto counts = fake->request_counts("iam");
  EXPECT_EQ(counts["POST /v1/projects/{name}/roles/{name}:undelete"], 2);
}

TEST_F(FakeGcpIamTest, FakeGcpIamApisAreServiceDisabledUntilEnabled) {
  FakeGcpOptions options;  // serviceusage and storage only
  fake = std::make_unique<FakeGcp>(options);
  auto err = error("cloudresourcemanager", "POST", "v1/projects/acme:getIamPolicy", 403,
                   "PERMISSION_DENIED", json::object());
  EXPECT_EQ(err["details"][0]["reason"], "SERVICE_DISABLED");
  EXPECT_NE(err["message"].get<std::string>().find("Cloud Resource Manager API has not been used"),
            std::string::npos);
  err = error("iam", "GET", "v1/projects/acme/roles", 403, "PERMISSION_DENIED");
  EXPECT_EQ(err["details"][0]["metadata"]["service"], "iam.googleapis.com");
}

// ---- Workload Identity --------------------------------------------------------------------------

TEST_F(FakeGcpIamTest, FakeGcpIamMetadataServerPerIdentity) {
  const auto host = fake->workload_identity_metadata_host("acme", "kinetic", "auto-down");
  EXPECT_EQ(fake->workload_identity_metadata_host("acme", "kinetic", "auto-down"), host);
  EXPECT_NE(fake->workload_identity_metadata_host("acme", "kinetic", "other"), host);
  auto get = [&](const std::string& path, bool flavor = true) {
    http::Request req;
    req.url = "http://" + host + path;
    if (flavor) req.headers.emplace_back("Metadata-Flavor", "Google");
    return http->send(req);
  };
  auto res = get("/computeMetadata/v1/instance/service-accounts/default/token", false);
  EXPECT_EQ(res.status, 403);
  EXPECT_EQ(res.header("Metadata-Flavor"), "Google");
  EXPECT_EQ(fake->workload_identity_tokens(), 0);
  res = get("/");
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.header("Metadata-Flavor"), "Google");
  EXPECT_EQ(get("/computeMetadata/v1/instance/service-accounts/default/email").body,
            "acme.svc.id.goog");
  EXPECT_EQ(get("/computeMetadata/v1/project/project-id").body, "acme");
  auto info = json::parse(
      get("/computeMetadata/v1/instance/service-accounts/default/?recursive=true").body);
  EXPECT_EQ(info["email"], "acme.svc.id.goog");

  auto a = pod_token();
  auto b = pod_token();
  EXPECT_NE(a, b);
  EXPECT_EQ(fake->workload_identity_tokens(), 2);
  EXPECT_EQ(FakeGcp::workload_identity_principal("acme", "kinetic", "auto-down"),
            "principal://iam.googleapis.com/projects/" +
                get("/computeMetadata/v1/project/numeric-project-id").body +
                "/locations/global/workloadIdentityPools/acme.svc.id.goog/subject/ns/kinetic/sa/"
                "auto-down");
}

TEST_F(FakeGcpIamTest, FakeGcpIamPodMayDeleteOnlyTheClusterItsConditionNames) {
  create_cluster("kinetic");
  create_cluster("other");
  const auto pod = pod_token();
  const auto principal = FakeGcp::workload_identity_principal("acme", "kinetic", "auto-down");

  // No binding: denied, with GKE's body, before anything is looked up.
  auto err =
      error("container", "DELETE", cluster_path("kinetic"), 403, "PERMISSION_DENIED", nullptr, pod);
  EXPECT_EQ(err["message"],
            "Required \"container.clusters.delete\" permission(s) for \"" + kCluster + "\".");
  ASSERT_EQ(err["details"].size(), 1u);
  EXPECT_EQ(err["details"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
  EXPECT_EQ(err["details"][0]["reason"], "IAM_PERMISSION_DENIED");
  EXPECT_EQ(err["details"][0]["domain"], "container.googleapis.com");
  EXPECT_EQ(err["details"][0]["metadata"],
            json({{"permission", "container.clusters.delete"}, {"resource", kCluster}}));
  error("container", "DELETE", cluster_path("missing"), 403, "PERMISSION_DENIED", nullptr, pod);
  EXPECT_TRUE(fake->cluster("acme", kZone, "kinetic"));

  // The grant kinetic up makes: a one-permission role, bound on the cluster's name.
  create_role("kineticAutoDown", {"container.clusters.delete"});
  auto res = set_policy(with(get_policy(), binding("projects/acme/roles/kineticAutoDown", principal,
                                                   "resource.name == \"" + kCluster + "\"")));
  ASSERT_EQ(res.status, 200) << res.body;

  // Another cluster of the project: the condition is false.
  err = error("container", "DELETE", cluster_path("other"), 403, "PERMISSION_DENIED", nullptr, pod);
  EXPECT_EQ(err["message"],
            "Required \"container.clusters.delete\" permission(s) for "
            "\"projects/acme/locations/us-central1-a/clusters/other\".");
  // Its own cluster, but a permission the role lacks.
  err = error("container", "GET", cluster_path("kinetic"), 403, "PERMISSION_DENIED", nullptr, pod);
  EXPECT_EQ(err["details"][0]["metadata"]["permission"], "container.clusters.get");
  error("container", "GET", "v1/projects/acme/locations/-/clusters", 403, "PERMISSION_DENIED",
        nullptr, pod);
  // Every other API is closed to it, the policy included.
  err = error("cloudresourcemanager", "POST", "v1/projects/acme:getIamPolicy", 403,
              "PERMISSION_DENIED", json::object(), pod);
  EXPECT_EQ(err["details"][0]["metadata"]["permission"], "resourcemanager.projects.getIamPolicy");
  error("iam", "GET", "v1/projects/acme/roles/kineticAutoDown", 403, "PERMISSION_DENIED", nullptr,
        pod);
  error("serviceusage", "GET", "v1/projects/acme/services/container.googleapis.com", 403,
        "PERMISSION_DENIED", nullptr, pod);
  // Another pod of the project holds nothing.
  error("container", "DELETE", cluster_path("kinetic"), 403, "PERMISSION_DENIED", nullptr,
        pod_token("default", "default"));

  auto op = ok("container", "DELETE", cluster_path("kinetic"), nullptr, pod);
  EXPECT_EQ(op["operationType"], "DELETE_CLUSTER");
  // The pod cannot watch the operation (the role has no container.operations.get), so the fake
  // does not wait for its polls: the deletion is done at once; the other cluster stays.
  EXPECT_EQ(op["status"], "DONE");
  EXPECT_FALSE(fake->cluster("acme", kZone, "kinetic"));
  EXPECT_TRUE(fake->cluster("acme", kZone, "other"));
  const auto op_path = operation_path(op["name"].get<std::string>());
  err = error("container", "GET", op_path, 403, "PERMISSION_DENIED", nullptr, pod);
  EXPECT_EQ(err["message"], "Required \"container.operations.get\" permission(s) for \"" +
                                op_path.substr(3) + "\".");
  EXPECT_EQ(ok("container", "GET", op_path)["status"], "DONE");

  // Deleting the role (kinetic down) takes the grant away even while the binding remains.
  create_cluster("kinetic");
  ok("iam", "DELETE", "v1/projects/acme/roles/kineticAutoDown");
  error("container", "DELETE", cluster_path("kinetic"), 403, "PERMISSION_DENIED", nullptr, pod);
  // The user's own token is unaffected by all of this.
  ok("container", "GET", cluster_path("kinetic"));
}

TEST_F(FakeGcpIamTest, FakeGcpIamConditionsAreEvaluatedInTheirCelSubset) {
  create_cluster("kinetic");
  create_role("reader", {"container.clusters.get"});
  const auto pod = pod_token();
  const auto principal = FakeGcp::workload_identity_principal("acme", "kinetic", "auto-down");
  const auto base = get_policy();
  struct Case {
    std::string expression;
    bool allowed;
  };
  const Case cases[] = {
      {"resource.name == \"" + kCluster + "\"", true},
      {"resource.name == '" + kCluster + "'", true},
      {"resource.name != \"" + kCluster + "\"", false},
      {"resource.type == \"container.googleapis.com/Cluster\" && "
       "resource.name.endsWith(\"/clusters/kinetic\")",
       true},
      {"resource.name.startsWith('projects/acme/locations/us-central1-a/')", true},
      {"resource.name.startsWith(\"" + kCluster + "/\")", false},
      {"!(resource.name == \"x\") && (false || resource.service == \"container.googleapis.com\")",
       true},
      {"resource.name == \"x\" || resource.name.endsWith(\"kinetic\")", true},
      {"!(resource.type == \"container.googleapis.com/Cluster\")", false},
      // Outside the subset: false, even where the rest would allow.
      {"request.time < timestamp(\"2999-01-01T00:00:00Z\")", false},
      {"resource.name == \"" + kCluster +
           "\" || request.time < timestamp(\"2999-01-01T00:00:00Z\")",
       false},
      {"resource.name", false},
      {"resource.name == \"" + kCluster, false},
      {"resource.name.matches(\".*\")", false},
  };
  for (const auto& c : cases) {
    auto policy = base;
    policy["etag"] = get_policy()["etag"];
    auto res =
        set_policy(with(policy, binding("projects/acme/roles/reader", principal, c.expression)));
    ASSERT_EQ(res.status, 200) << c.expression << ": " << res.body;
    auto got = call("container", "GET", cluster_path("kinetic"), nullptr, pod);
    EXPECT_EQ(got.status, c.allowed ? 200 : 403) << c.expression << ": " << got.body;
  }
  // Unconditional, through the namespace's principal set, and through a predefined role.
  const std::string pool =
      "principalSet://iam.googleapis.com/projects/" +
      principal.substr(principal.find("projects/") + 9,
                       principal.find("/locations") - principal.find("projects/") - 9) +
      "/locations/global/workloadIdentityPools/acme.svc.id.goog";
  for (const auto& b : {binding("projects/acme/roles/reader", pool + "/namespace/kinetic"),
                        binding("roles/container.clusterViewer", principal)}) {
    auto policy = base;
    policy["etag"] = get_policy()["etag"];
    ASSERT_EQ(set_policy(with(policy, b)).status, 200);
    EXPECT_EQ(call("container", "GET", cluster_path("kinetic"), nullptr, pod).status, 200)
        << b.dump();
    EXPECT_EQ(call("container", "DELETE", cluster_path("kinetic"), nullptr, pod).status, 403);
  }
}

}  // namespace
}  // namespace kinetic::fakes
