// Internals of FakeGcp (fake_gcp.h) shared by its per-API translation units: fake_gcp.cpp
// (servers, auth, errors, counters, faults), fake_gcp_services.cpp (Service Usage),
// fake_gcp_gke.cpp (GKE), fake_gcp_build.cpp (Cloud Build), fake_gcp_registry.cpp (Artifact
// Registry), fake_gcp_iam.cpp (Cloud Resource Manager project policies, IAM custom roles),
// fake_gcp_metadata.cpp (Workload Identity metadata servers), fake_gcp_authz.cpp (what a Workload
// Identity token may do) and fake_gcp_cel.cpp (IAM conditions). Not part of the contract: tests
// use fake_gcp.h only.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/fake_encoding.h"
#include "fakes/fake_gcp.h"

namespace kinetic::fakes {

namespace gcp_detail {

using json = nlohmann::json;

// A google.rpc.Status answer (thrown by handlers, rendered by the server loop).
struct RpcError {
  int http = 500;
  std::string status;  // canonical code name, e.g. "NOT_FOUND"
  std::string message;
  json details = json::array();
};

RpcError rpc_error(int http, std::string message, json details = json::array());
std::string status_name(int http);             // 400 → INVALID_ARGUMENT, 404 → NOT_FOUND, ...
int rpc_code(const std::string& status_name);  // NOT_FOUND → 5 (google.rpc.Code)
RpcError not_found(std::string message = "Requested entity was not found.");
RpcError invalid_argument(std::string message);
RpcError already_exists(std::string message);
RpcError failed_precondition(std::string message);
RpcError aborted(std::string message);  // 409 ABORTED: a read-modify-write lost a race

// ---- small helpers ----
std::string rfc3339_now();
std::string base64url(std::string_view bytes);
std::string sha256_hex(std::string_view bytes);
std::string project_number(const std::string& project);  // deterministic 12-digit number
bool valid_resource_id(const std::string& id, std::size_t max_len);  // [a-z]([-a-z0-9]*[a-z0-9])?
bool is_zone(const std::string& location);  // "us-central1-a" (a region has one '-' less)
std::string region_of(const std::string& location);

// One parsed request to one of the APIs.
struct Call {
  std::string service;  // "container", ...
  std::string method;
  std::string raw_path;
  std::vector<std::string> seg;  // path segments, percent-decoded once
  std::string verb;              // custom method (":enable", ":cancel"...), without ':'
  std::string canonical;         // "METHOD /v1/projects/{name}/..." for counters
  const httplib::Request* http = nullptr;
  json body = json::object();
  bool workload_identity = false;  // the bearer token was minted by a WI metadata server

  // seg[i] == pattern[i] for every i, "*" matching any; sizes must be equal.
  bool match(std::initializer_list<const char*> pattern, const char* method_ = nullptr,
             const char* verb_ = "") const;
  std::string param(const std::string& name) const;
};

// A google.longrunning.Operation (Service Usage, Artifact Registry) advancing one step per poll.
struct LroOp {
  std::string name;
  std::string project;
  int polls = 0;
  int target = 1;
  bool done = false;
  json metadata = json::object();
  json response;                  // set when done (unless error)
  json error;                     // google.rpc.Status with a numeric code
  std::function<void()> on_done;  // runs (under the lock) when the op completes
};

// GKE's own Operation type.
struct GkeOp {
  std::string name, project, location, cluster, pool, type;
  int polls = 0;
  int target = 1;
  bool done = false;
  json resource;  // name, operationType, status, ... (status and endTime updated)
  std::function<void()> on_done;
};

struct GkeCluster {
  std::string project, location, name;
  json resource;            // without nodePools
  std::vector<json> pools;  // in creation order
  std::string busy_op;      // a cluster-level operation not yet DONE
};

struct BuildPlan {
  std::string status = "SUCCESS";  // terminal status
  json failure_info;               // {type, detail} when FAILURE
  std::string status_detail;
  std::vector<std::string> log_lines;  // the whole log (lines without '\n')
  std::size_t header_lines = 0;        // written when the build starts WORKING
  int failed_step = -1;
  std::vector<std::string> pushed;         // images to record on SUCCESS
  std::map<std::string, FakeImage> built;  // what a docker step tagged (-t, --destination) holds
};

struct CloudBuild {
  std::string id, project, location, op_name;
  int polls = 0;
  bool terminal = false;
  bool cancelled = false;
  json resource;
  BuildPlan plan;
};

struct ArImage {
  std::string digest;
  std::string upload_time;
  std::int64_t size = 0;
};

struct ArRepo {
  json resource;
  // package (decoded, may hold '/') → tag → digest, and digest → image data
  std::map<std::string, std::map<std::string, std::string>> tags;
  std::map<std::string, std::map<std::string, ArImage>> images;
};

// A docker image reference LOC-docker.pkg.dev/PROJECT/REPO/PKG[:TAG|@DIGEST].
struct ImageRef {
  std::string host, location, project, repo, package, tag, digest;
  bool artifact_registry = false;
  std::string repo_name() const {
    return "projects/" + project + "/locations/" + location + "/repositories/" + repo;
  }
};
std::optional<ImageRef> parse_image(const std::string& image);

// What an IAM condition sees of the resource a permission is checked on.
struct CelResource {
  std::string name;     // "projects/P/locations/L/clusters/C"
  std::string type;     // "container.googleapis.com/Cluster"
  std::string service;  // "container.googleapis.com"
};
// Evaluates a condition's expression in the CEL subset of fake_gcp_cel.cpp; nullopt when the
// expression is outside it (the caller denies).
std::optional<bool> evaluate_condition(const std::string& expression, const CelResource& resource);

// The Workload Identity principal a token minted by one of the fake metadata servers stands for.
struct WiIdentity {
  std::string project, ns, ksa;
  std::string principal;  // principal://iam.googleapis.com/projects/NUMBER/.../sa/KSA
};

}  // namespace gcp_detail

struct FakeGcp::Impl {
  using json = nlohmann::json;
  using Call = gcp_detail::Call;

  FakeGcpOptions options;
  std::unique_ptr<FakeImageStore> own_images;  // when options.images was null

  struct Server {
    std::string service;
    httplib::Server http;
    std::thread thread;
    int port = 0;
  };
  std::vector<std::unique_ptr<Server>> servers;  // one per API, made by the constructor
  // Workload Identity metadata servers, "project/ns/ksa" → server, started on first ask (so
  // guarded by their own mutex: starting one waits for its thread, which must not hold mu).
  std::mutex wi_mu;
  std::map<std::string, std::unique_ptr<Server>> wi_servers;

  mutable std::mutex mu;
  std::mt19937_64 rng{std::random_device{}()};
  std::uint64_t sequence = 0;

  // ---- faults and counters ----
  struct Failure {
    std::string service;
    int remaining;
    int status;
    std::string prefix;
  };
  std::deque<Failure> failures;
  std::deque<std::pair<std::string, std::string>> pool_failures;  // code, message
  std::map<std::string, std::map<std::string, int>> counters;
  int total = 0;
  // Callbacks (on_pool_created/deleted) collected under the lock, run after it is released.
  std::vector<std::function<void()>> deferred;

  // ---- state ----
  std::map<std::string, std::set<std::string>> enabled;  // project → services
  std::map<std::string, gcp_detail::LroOp> lro_ops;      // by full name
  std::map<std::string, gcp_detail::GkeOp> gke_ops;      // by op name
  std::vector<std::string> gke_op_order;
  std::map<std::string, gcp_detail::GkeCluster> clusters;  // "p/loc/name"
  std::map<std::string, gcp_detail::CloudBuild> builds;    // by id
  std::vector<std::string> build_order;
  std::map<std::string, std::string> build_ops;     // op name → build id
  std::map<std::string, gcp_detail::ArRepo> repos;  // "projects/p/locations/l/repositories/r"
  std::set<std::string> other_images;               // pushed outside Artifact Registry
  int builds_created = 0;

  // ---- IAM state (fake_gcp_iam.cpp) ----
  struct ProjectPolicy {
    json bindings = json::array();
    json audit_configs = json::array();
    std::string etag;
  };
  std::map<std::string, ProjectPolicy> policies;  // by project id, made on first use
  struct PolicyInterleave {
    std::string project, role, member;
  };
  std::deque<PolicyInterleave> policy_interleaves;
  std::map<std::string, json> roles;  // "projects/P/roles/ID" → Role resource (deleted kept)
  std::map<std::string, json> service_accounts;  // email → ServiceAccount resource
  int unseen_role_refusals = 0;                  // FakeGcp::unseen_roles_for_next
  std::uint64_t etag_sequence = 0;
  // Tokens the metadata servers minted (any other bearer token is the user's, with full access).
  std::map<std::string, gcp_detail::WiIdentity> wi_tokens;
  int wi_tokens_minted = 0;

  // ---- common (fake_gcp.cpp) ----
  std::string url(const std::string& service) const;
  void start(const std::string& service);
  // Binds S to a free 127.0.0.1 port and serves it from its own thread (routes already set).
  static void listen(Server& s);
  void handle(const std::string& service, const httplib::Request& req, httplib::Response& res);
  bool service_enabled(const std::string& project, const std::string& service) const;
  void require_enabled(const std::string& project, const std::string& api) const;
  std::string uuid();
  std::string hex(int digits);
  void send_json(httplib::Response& res, const json& body, int status = 200) const;
  void advance_lro(gcp_detail::LroOp& op);
  json lro_json(const gcp_detail::LroOp& op) const;
  // Creates an LRO that completes after options.operation_polls polls (now when 0).
  gcp_detail::LroOp& new_lro(const std::string& name, const std::string& project, json metadata,
                             json response, std::function<void()> on_done);

  // ---- per API ----
  void serviceusage(Call& call, httplib::Response& res);
  void container(Call& call, httplib::Response& res);
  void cloudbuild(Call& call, httplib::Response& res);
  void artifactregistry(Call& call, httplib::Response& res);

  // GKE (fake_gcp_gke.cpp)
  json cluster_json(const gcp_detail::GkeCluster& c) const;
  void advance_gke(gcp_detail::GkeOp& op);
  json gke_op_json(const gcp_detail::GkeOp& op) const;

  // Cloud Build (fake_gcp_build.cpp)
  void advance_build(gcp_detail::CloudBuild& b);
  json build_op_json(const gcp_detail::CloudBuild& b) const;

  // Artifact Registry (fake_gcp_registry.cpp)
  bool has_image_locked(const std::string& image) const;
  // Records IMAGE (creating its repository when CREATE_REPO); returns its digest, or nullopt
  // when its repository does not exist.
  std::optional<std::string> push_image(const std::string& image, bool create_repo);
  gcp_detail::ArRepo& ensure_repo(const std::string& project, const std::string& location,
                                  const std::string& repo, json body);

  // Cloud Resource Manager and IAM (fake_gcp_iam.cpp)
  void cloudresourcemanager(Call& call, httplib::Response& res);
  void iam(Call& call, httplib::Response& res);
  void compute(Call& call, httplib::Response& res);
  void service_accounts_api(Call& call, httplib::Response& res);  // IAM v1 serviceAccounts
  // The project id a path names: a project number maps back to the id it was derived from when
  // the fake has seen that id (a policy, a cluster, an enabled service), else stays as it is.
  std::string project_id(const std::string& project) const;
  ProjectPolicy& policy_of(const std::string& project);
  const ProjectPolicy* find_policy(const std::string& project) const;
  json policy_json(const ProjectPolicy& p) const;
  std::string new_etag();

  // Workload Identity (fake_gcp_metadata.cpp, fake_gcp_authz.cpp)
  std::string metadata_host(const std::string& project, const std::string& ns,
                            const std::string& ksa);
  // Throws 403 PERMISSION_DENIED unless TOKEN is the user's, or the principal it was minted for
  // holds the permission CALL needs (under mu, before the call is routed).
  void authorize(const Call& call, const std::string& token) const;
};

}  // namespace kinetic::fakes
