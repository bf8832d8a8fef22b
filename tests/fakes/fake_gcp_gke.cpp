// FakeGcp: GKE (container v1): clusters, node pools, operations and serverConfig, under both
// `projects/P/locations/L/...` and the legacy `projects/P/zones/Z/...` paths. Operations are
// GKE's own type and advance PENDING → RUNNING → DONE one step per poll (one started with a
// Workload Identity token is done at once); while one runs on a cluster, other mutations of that
// cluster answer 400 FAILED_PRECONDITION.
#include <algorithm>
#include <chrono>

#include "fakes/fake_gcp_internal.h"

namespace kinetic::fakes {

using namespace gcp_detail;

namespace {

constexpr const char* kVersion = "1.33.5-gke.1162000";
constexpr const char* kApi = "https://container.googleapis.com/v1/";

std::string cluster_key(const std::string& p, const std::string& l, const std::string& c) {
  return p + "/" + l + "/" + c;
}

std::string resource_path(const std::string& p, const std::string& l, const std::string& c) {
  return "projects/" + p + "/locations/" + l + "/clusters/" + c;
}

std::string canonical_code(const std::string& condition_code) {
  if (condition_code == "GCE_STOCKOUT" || condition_code == "GCE_QUOTA_EXCEEDED" ||
      condition_code == "ZONE_RESOURCE_POOL_EXHAUSTED")
    return "RESOURCE_EXHAUSTED";
  if (condition_code == "GKE_SERVICE_ACCOUNT_DELETED" ||
      condition_code == "NODE_SERVICE_ACCOUNT_MISSING_PERMISSIONS")
    return "PERMISSION_DENIED";
  return "UNKNOWN";
}

// "1.33.5-gke.1162000" as numbers, to compare GKE versions.
std::vector<long> version_numbers(const std::string& version) {
  std::vector<long> out;
  long n = -1;
  for (char c : version + ".") {
    if (c >= '0' && c <= '9') {
      n = (n < 0 ? 0 : n * 10) + (c - '0');
    } else if (n >= 0) {
      out.push_back(n);
      n = -1;
    }
  }
  return out;
}

// What GKE's flex-start ("About flex-start provisioning mode in GKE": GPUs from 1.32.2-gke.1652000,
// TPUs from 1.33.0-gke.1712000, TPU v3 and v4 not supported; GPUs, TPUs and H4D only) and
// cluster-toolkit's gke-node-pool module (not with Spot, no reservation) say a flex-start pool
// cannot be. GKE's own wording of these refusals was not found: the messages are this fake's.
void check_flex_start(const json& cfg, const std::string& version) {
  if (!cfg.value("flexStart", false)) return;
  const auto machine = cfg.value("machineType", std::string());
  const bool tpu = machine.rfind("ct", 0) == 0;
  const bool gpu = cfg.contains("accelerators") || machine.rfind("a2-", 0) == 0 ||
                   machine.rfind("a3-", 0) == 0 || machine.rfind("a4-", 0) == 0 ||
                   machine.rfind("g2-", 0) == 0 || machine.rfind("h4d-", 0) == 0;
  if (!tpu && !gpu)
    throw invalid_argument("Flex-start is not supported for machine type \"" + machine + "\".");
  if (machine.rfind("ct3", 0) == 0 || machine.rfind("ct4p", 0) == 0)
    throw invalid_argument("Flex-start does not support TPU v3 or v4 (machine type \"" + machine +
                           "\").");
  const std::string least = tpu ? "1.33.0-gke.1712000" : "1.32.2-gke.1652000";
  if (version_numbers(version) < version_numbers(least))
    throw invalid_argument("Flex-start for machine type \"" + machine + "\" needs GKE " + least +
                           " or later; the node version is " + version + ".");
  if (cfg.value("spot", false))
    throw invalid_argument("Flex-start and Spot cannot both be set on a node pool.");
  if (cfg.contains("reservationAffinity") &&
      cfg["reservationAffinity"].value("consumeReservationType", "") != "NO_RESERVATION")
    throw invalid_argument("Flex-start node pools must not consume reservations.");
}

void check_name(const std::string& field, const std::string& name) {
  if (!valid_resource_id(name, 40)) {
    throw invalid_argument(
        "Invalid value for field '" + field + "': \"" + name +
        "\". Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)' (only "
        "alphanumerics and '-' allowed, must start with a letter and end with an alphanumeric, "
        "and must be no longer than 40 characters).");
  }
}

}  // namespace

json FakeGcp::Impl::cluster_json(const GkeCluster& c) const {
  json j = c.resource;
  json pools = json::array();
  long nodes = 0;
  for (auto& p : c.pools) {
    pools.push_back(p);
    auto zones = p.value("locations", json::array()).size();
    nodes += p.value("initialNodeCount", 0L) * static_cast<long>(std::max<std::size_t>(1, zones));
  }
  if (!pools.empty()) j["nodePools"] = pools;
  j["currentNodeCount"] = nodes;
  return j;
}

json FakeGcp::Impl::gke_op_json(const GkeOp& op) const {
  return op.resource;
}

void FakeGcp::Impl::advance_gke(GkeOp& op) {
  if (op.done) return;
  if (op.polls < op.target) ++op.polls;
  if (op.polls >= op.target) {
    op.done = true;
    op.resource["status"] = "DONE";
    op.resource["endTime"] = rfc3339_now();
    auto it = clusters.find(cluster_key(op.project, op.location, op.cluster));
    if (it != clusters.end() && it->second.busy_op == op.name) it->second.busy_op.clear();
    if (op.on_done) op.on_done();
    op.on_done = nullptr;
  } else {
    op.resource["status"] = "RUNNING";
  }
}

void FakeGcp::Impl::container(Call& call, httplib::Response& res) {
  auto& s = call.seg;
  if (s.size() < 5 || s[0] != "v1" || s[1] != "projects" ||
      (s[3] != "locations" && s[3] != "zones"))
    throw not_found("Method not found.");
  const bool legacy = s[3] == "zones";
  s[3] = "locations";  // route both forms alike
  const std::string project = s[2];
  const std::string location = s[4];
  const auto number = project_number(project);

  auto find_cluster = [&](const std::string& name) -> GkeCluster& {
    auto it = clusters.find(cluster_key(project, location, name));
    if (it == clusters.end()) it = clusters.find(cluster_key(number, location, name));
    if (it == clusters.end())
      throw not_found("Not found: " + resource_path(project, location, name) + ".");
    return it->second;
  };
  auto find_pool = [&](GkeCluster& c, const std::string& name) -> json& {
    for (auto& p : c.pools) {
      if (p["name"] == name) return p;
    }
    throw not_found("Not found: " + resource_path(project, location, c.name) + "/nodePools/" +
                    name + ".");
  };
  auto require_idle = [&](GkeCluster& c) {
    if (!c.busy_op.empty())
      throw failed_precondition("Cluster is running incompatible operation " + c.busy_op + ".");
  };
  auto new_op = [&](const std::string& type, GkeCluster& c, const std::string& pool,
                    std::function<void()> on_done) -> GkeOp& {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    GkeOp op;
    op.name = "operation-" + std::to_string(ms) + "-" + hex(8);
    op.project = c.project;
    op.location = c.location;
    op.cluster = c.name;
    op.pool = pool;
    op.type = type;
    // Operations advance as clients poll them, but a pod's principal is rarely granted
    // container.operations.get (kinetic's auto-down role holds only container.clusters.delete),
    // and GKE finishes a deletion whether or not anyone watches: an operation a Workload
    // Identity token starts is done in its first answer.
    op.target = call.workload_identity ? 0 : std::max(0, options.operation_polls);
    op.on_done = std::move(on_done);
    std::string target =
        std::string(kApi) + "projects/" + number + "/zones/" + c.location + "/clusters/" + c.name;
    if (!pool.empty()) target += "/nodePools/" + pool;
    op.resource = {{"name", op.name},
                   {"zone", c.location},
                   {"location", c.location},
                   {"operationType", type},
                   {"status", "PENDING"},
                   {"selfLink", std::string(kApi) + "projects/" + number + "/zones/" + c.location +
                                    "/operations/" + op.name},
                   {"targetLink", target},
                   {"startTime", rfc3339_now()}};
    c.busy_op = op.name;
    gke_op_order.push_back(op.name);
    auto& stored = gke_ops[op.name] = std::move(op);
    if (stored.target == 0) advance_gke(stored);
    return stored;
  };
  // The zones a pool's nodes go to.
  auto pool_zones = [&](const GkeCluster& c, const json& pool) {
    std::vector<std::string> zones;
    if (pool.contains("locations") && !pool["locations"].empty())
      zones = pool["locations"].get<std::vector<std::string>>();
    else if (c.resource.contains("locations"))
      zones = c.resource["locations"].get<std::vector<std::string>>();
    return zones;
  };
  // Fills a pool's defaults and checks its name and machine type; returns the resource.
  auto make_pool = [&](GkeCluster& c, json pool) {
    check_name("node_pool.name", pool.value("name", std::string()));
    if (!pool.contains("config") || !pool["config"].is_object()) pool["config"] = json::object();
    auto& cfg = pool["config"];
    if (!cfg.contains("machineType")) cfg["machineType"] = "e2-medium";
    if (!cfg.contains("diskSizeGb")) cfg["diskSizeGb"] = 100;
    if (!cfg.contains("diskType")) cfg["diskType"] = "pd-balanced";
    if (!cfg.contains("imageType")) cfg["imageType"] = "COS_CONTAINERD";
    // What GKE refuses of a node configuration before anything is created: an account that does
    // not exist (its 400, as terraform users quote it), and image streaming without the
    // Container File System API (GKE's image-streaming requirements; the wording is this fake's,
    // Service Usage's SERVICE_DISABLED answer for that API).
    if (!cfg.contains("serviceAccount")) cfg["serviceAccount"] = "default";
    const auto account = cfg["serviceAccount"].get<std::string>();
    if (account != "default" && !service_accounts.count(account))
      throw invalid_argument("Service account \"" + account + "\" does not exist.");
    if (cfg.contains("gcfsConfig") && cfg["gcfsConfig"].value("enabled", false))
      require_enabled(project, "containerfilesystem.googleapis.com");
    check_flex_start(cfg, kVersion);
    if (!cfg.contains("oauthScopes"))
      cfg["oauthScopes"] = json::array({"https://www.googleapis.com/auth/devstorage.read_only",
                                        "https://www.googleapis.com/auth/logging.write",
                                        "https://www.googleapis.com/auth/monitoring"});
    if (!cfg.contains("metadata")) cfg["metadata"] = {{"disable-legacy-endpoints", "true"}};
    auto zones = pool_zones(c, pool);
    const auto machine = cfg["machineType"].get<std::string>();
    if (!options.zone_machine_types.empty()) {
      for (auto& z : zones) {
        auto it = options.zone_machine_types.find(z);
        if (it == options.zone_machine_types.end() || !it->second.count(machine)) {
          throw invalid_argument("Invalid machine type \"" + machine + "\" in zone \"" + z +
                                 "\": GCE_NOT_FOUND");
        }
      }
    }
    pool["locations"] = zones;
    if (!pool.contains("initialNodeCount")) pool["initialNodeCount"] = 0;
    if (!pool.contains("management"))
      pool["management"] = {{"autoUpgrade", true}, {"autoRepair", true}};
    if (!pool.contains("upgradeSettings"))
      pool["upgradeSettings"] = {{"maxSurge", 1}, {"strategy", "SURGE"}};
    pool["version"] = kVersion;
    pool["podIpv4CidrSize"] = 24;
    pool["etag"] = hex(8);
    auto name = pool["name"].get<std::string>();
    pool["selfLink"] = std::string(kApi) + "projects/" + c.project + "/zones/" + c.location +
                       "/clusters/" + c.name + "/nodePools/" + name;
    json groups = json::array();
    for (auto& z : zones) {
      groups.push_back("https://www.googleapis.com/compute/v1/projects/" + c.project + "/zones/" +
                       z + "/instanceGroupManagers/gke-" + c.name + "-" + name + "-" + hex(8) +
                       "-grp");
    }
    pool["instanceGroupUrls"] = groups;
    pool["status"] = "PROVISIONING";
    return pool;
  };
  auto pool_created = [this](const std::string& cluster, const json& pool) {
    if (options.on_pool_created) {
      auto cb = options.on_pool_created;
      deferred.push_back([cb, cluster, pool] { cb(cluster, pool); });
    }
  };
  auto pool_deleted = [this](const std::string& cluster, const std::string& pool) {
    if (options.on_pool_deleted) {
      auto cb = options.on_pool_deleted;
      deferred.push_back([cb, cluster, pool] { cb(cluster, pool); });
    }
  };

  // ---- operations ----
  if (call.match({"v1", "projects", "*", "locations", "*", "operations", "*"}, "GET")) {
    auto it = gke_ops.find(s[6]);
    if (it == gke_ops.end() ||
        (it->second.project != project && project_number(it->second.project) != project) ||
        (location != "-" && it->second.location != location))
      throw not_found("Not found: projects/" + project + "/locations/" + location + "/operations/" +
                      s[6] + ".");
    advance_gke(it->second);
    return send_json(res, gke_op_json(it->second));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "operations"}, "GET")) {
    json ops = json::array();
    for (auto& name : gke_op_order) {
      auto& op = gke_ops[name];
      if ((op.project == project || project_number(op.project) == project) &&
          (location == "-" || op.location == location))
        ops.push_back(gke_op_json(op));
    }
    json out = json::object();
    if (!ops.empty()) out["operations"] = ops;
    return send_json(res, out);
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "serverConfig"}, "GET") ||
      call.match({"v1", "projects", "*", "locations", "*", "serverconfig"}, "GET")) {
    json versions = json::array({kVersion, "1.32.4-gke.1415000", "1.31.8-gke.1113000"});
    return send_json(
        res,
        {{"defaultClusterVersion", kVersion},
         {"validNodeVersions", versions},
         {"defaultImageType", "COS_CONTAINERD"},
         {"validImageTypes", json::array({"COS_CONTAINERD", "UBUNTU_CONTAINERD"})},
         {"validMasterVersions", versions},
         {"channels",
          json::array(
              {{{"channel", "RAPID"},
                {"defaultVersion", kVersion},
                {"validVersions", json::array({kVersion})}},
               {{"channel", "REGULAR"}, {"defaultVersion", kVersion}, {"validVersions", versions}},
               {{"channel", "STABLE"},
                {"defaultVersion", "1.31.8-gke.1113000"},
                {"validVersions", versions}}})}});
  }

  // ---- clusters ----
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters"}, "GET")) {
    json list = json::array();
    for (auto& [key, c] : clusters) {
      if ((c.project == project || number == project) &&
          (location == "-" || c.location == location))
        list.push_back(cluster_json(c));
    }
    json out = json::object();
    if (!list.empty()) out["clusters"] = list;
    return send_json(res, out);
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters"}, "POST")) {
    if (!call.body.contains("cluster") || !call.body["cluster"].is_object())
      throw invalid_argument("Cluster must be specified.");
    if (location == "-") throw invalid_argument("Location \"-\" is not a valid location.");
    json in = call.body["cluster"];
    auto name = in.value("name", std::string());
    check_name("cluster.name", name);
    auto key = cluster_key(project, location, name);
    if (clusters.count(key))
      throw already_exists("Already exists: " + resource_path(project, location, name) + ".");
    GkeCluster c;
    c.project = project;
    c.location = location;
    c.name = name;
    // Node zones: explicit, the zone itself, or the region's zones.
    std::vector<std::string> zones;
    if (in.contains("locations") && !in["locations"].empty()) {
      zones = in["locations"].get<std::vector<std::string>>();
    } else if (is_zone(location)) {
      zones = {location};
    } else {
      for (auto& [z, types] : options.zone_machine_types) {
        if (region_of(z) == location && zones.size() < 3) zones.push_back(z);
      }
      if (zones.empty()) zones = {location + "-a", location + "-b", location + "-c"};
    }
    json pools_in = in.value("nodePools", json::array());
    const bool autopilot = in.contains("autopilot") && in["autopilot"].value("enabled", false);
    if (pools_in.empty() && !autopilot) {
      int count = in.value("initialNodeCount", 0);
      if (count <= 0)
        throw invalid_argument("Cluster.initial_node_count must be greater than zero.");
      pools_in.push_back({{"name", "default-pool"},
                          {"initialNodeCount", count},
                          {"config", in.value("nodeConfig", json::object())}});
    }
    json r = in;
    r.erase("nodePools");
    r["locations"] = zones;
    r["location"] = location;
    r["zone"] = location;
    r["status"] = "PROVISIONING";
    r["endpoint"] = options.kube_endpoint;
    r["masterAuth"] = {{"clusterCaCertificate", base64_encode(options.kube_ca_pem)}};
    r["initialClusterVersion"] = in.value("initialClusterVersion", std::string(kVersion));
    r["currentMasterVersion"] = kVersion;
    r["currentNodeVersion"] = kVersion;
    r["selfLink"] =
        std::string(kApi) + "projects/" + project + "/zones/" + location + "/clusters/" + name;
    r["createTime"] = rfc3339_now();
    r["id"] = hex(32);
    r["etag"] = hex(8);
    r["labelFingerprint"] = "a9dc16a7";
    if (!r.contains("network")) r["network"] = "default";
    if (!r.contains("subnetwork")) r["subnetwork"] = "default";
    r["clusterIpv4Cidr"] = "10.4.0.0/14";
    r["servicesIpv4Cidr"] = "34.118.224.0/20";
    if (!r.contains("releaseChannel")) r["releaseChannel"] = {{"channel", "REGULAR"}};
    r["loggingService"] = "logging.googleapis.com/kubernetes";
    r["monitoringService"] = "monitoring.googleapis.com/kubernetes";
    r["privateClusterConfig"] = {{"publicEndpoint", options.kube_endpoint}};
    c.resource = r;
    for (auto& p : pools_in) c.pools.push_back(make_pool(c, p));
    auto& stored = clusters[key] = std::move(c);
    auto& op = new_op("CREATE_CLUSTER", stored, "", [this, key, pool_created] {
      auto it = clusters.find(key);
      if (it == clusters.end()) return;
      it->second.resource["status"] = "RUNNING";
      for (auto& p : it->second.pools) {
        p["status"] = "RUNNING";
        pool_created(it->second.name, p);
      }
    });
    return send_json(res, gke_op_json(op));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters", "*"}, "GET"))
    return send_json(res, cluster_json(find_cluster(s[6])));
  // clusters.update: the add-ons kinetic reconciles (desiredAddonsConfig, merged into
  // addonsConfig when the operation is done); any other field of the update is refused, so a
  // client never believes the fake applied what it ignores.
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters", "*"}, "PUT")) {
    auto& c = find_cluster(s[6]);
    if (!call.body.contains("update") || !call.body["update"].is_object())
      throw invalid_argument("Update must be specified.");
    const json update = call.body["update"];
    for (auto& [field, value] : update.items()) {
      (void)value;
      if (field != "desiredAddonsConfig")
        throw invalid_argument("kinetic fake GKE: cannot apply update." + field);
    }
    require_idle(c);
    auto key = cluster_key(c.project, c.location, c.name);
    c.resource["status"] = "RECONCILING";
    auto& op = new_op("UPDATE_CLUSTER", c, "", [this, key, update] {
      auto it = clusters.find(key);
      if (it == clusters.end()) return;
      json& addons = it->second.resource["addonsConfig"];
      if (!addons.is_object()) addons = json::object();
      for (auto& [name, config] : update["desiredAddonsConfig"].items()) addons[name] = config;
      it->second.resource["status"] = "RUNNING";
    });
    return send_json(res, gke_op_json(op));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters", "*"}, "DELETE")) {
    auto& c = find_cluster(s[6]);
    require_idle(c);
    c.resource["status"] = "STOPPING";
    for (auto& p : c.pools) p["status"] = "STOPPING";
    auto key = cluster_key(c.project, c.location, c.name);
    auto& op = new_op("DELETE_CLUSTER", c, "", [this, key, pool_deleted] {
      auto it = clusters.find(key);
      if (it == clusters.end()) return;
      for (auto& p : it->second.pools) pool_deleted(it->second.name, p["name"].get<std::string>());
      if (options.on_cluster_deleted) {
        auto cb = options.on_cluster_deleted;
        deferred.push_back([cb, name = it->second.name] { cb(name); });
      }
      clusters.erase(it);
    });
    return send_json(res, gke_op_json(op));
  }

  // ---- node pools ----
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters", "*", "nodePools"}, "GET")) {
    auto& c = find_cluster(s[6]);
    json pools = json::array();
    for (auto& p : c.pools) pools.push_back(p);
    json out = json::object();
    if (!pools.empty()) out["nodePools"] = pools;
    return send_json(res, out);
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters", "*", "nodePools"}, "POST")) {
    auto& c = find_cluster(s[6]);
    if (!call.body.contains("nodePool") || !call.body["nodePool"].is_object())
      throw invalid_argument("Node_pool must be specified.");
    json in = call.body["nodePool"];
    auto name = in.value("name", std::string());
    check_name("node_pool.name", name);
    for (auto& p : c.pools) {
      if (p["name"] == name)
        throw already_exists("Already exists: " + resource_path(project, location, c.name) +
                             "/nodePools/" + name + ".");
    }
    require_idle(c);
    auto pool = make_pool(c, in);
    c.pools.push_back(pool);
    std::optional<std::pair<std::string, std::string>> failure;
    if (!pool_failures.empty()) {
      failure = pool_failures.front();
      pool_failures.pop_front();
    }
    auto key = cluster_key(c.project, c.location, c.name);
    auto& op = new_op("CREATE_NODE_POOL", c, name, [this, key, name, failure, pool_created] {
      auto it = clusters.find(key);
      if (it == clusters.end()) return;
      for (auto& p : it->second.pools) {
        if (p["name"] != name) continue;
        if (failure) {
          p["status"] = "ERROR";
          p["statusMessage"] = failure->second;
          p["conditions"] = json::array({{{"code", failure->first},
                                          {"message", failure->second},
                                          {"canonicalCode", canonical_code(failure->first)}}});
        } else {
          p["status"] = "RUNNING";
          pool_created(it->second.name, p);
        }
      }
    });
    // The operation's own error is set by advance (below) once it is done.
    if (failure) {
      auto name_copy = op.name;
      auto previous = op.on_done;
      auto fail = *failure;
      auto finish = [this, name_copy, fail] {
        auto& o = gke_ops[name_copy];
        o.resource["statusMessage"] = fail.second;
        o.resource["error"] = {{"code", rpc_code(canonical_code(fail.first))},
                               {"message", fail.second}};
        o.resource["nodepoolConditions"] =
            json::array({{{"code", fail.first},
                          {"message", fail.second},
                          {"canonicalCode", canonical_code(fail.first)}}});
      };
      if (op.done) {
        finish();
      } else {
        op.on_done = [previous, finish] {
          previous();
          finish();
        };
      }
    }
    return send_json(res, gke_op_json(op));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters", "*", "nodePools", "*"},
                 "GET"))
    return send_json(res, find_pool(find_cluster(s[6]), s[8]));
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters", "*", "nodePools", "*"},
                 "DELETE")) {
    auto& c = find_cluster(s[6]);
    auto& pool = find_pool(c, s[8]);
    require_idle(c);
    pool["status"] = "STOPPING";
    auto key = cluster_key(c.project, c.location, c.name);
    auto name = s[8];
    auto& op = new_op("DELETE_NODE_POOL", c, name, [this, key, name, pool_deleted] {
      auto it = clusters.find(key);
      if (it == clusters.end()) return;
      auto& pools = it->second.pools;
      pools.erase(std::remove_if(pools.begin(), pools.end(),
                                 [&](const json& p) { return p["name"] == name; }),
                  pools.end());
      pool_deleted(it->second.name, name);
    });
    return send_json(res, gke_op_json(op));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "clusters", "*", "nodePools", "*"},
                 "POST", "setAutoscaling") ||
      call.match({"v1", "projects", "*", "locations", "*", "clusters", "*", "nodePools", "*"},
                 "POST", "setSize")) {
    auto& c = find_cluster(s[6]);
    auto& pool = find_pool(c, s[8]);
    require_idle(c);
    bool autoscaling = call.verb == "setAutoscaling";
    if (autoscaling)
      pool["autoscaling"] = call.body.value("autoscaling", json::object());
    else
      pool["initialNodeCount"] = call.body.value("nodeCount", 0);
    auto& op =
        new_op(autoscaling ? "SET_NODE_POOL_AUTOSCALING" : "SET_NODE_POOL_SIZE", c, s[8], nullptr);
    return send_json(res, gke_op_json(op));
  }
  (void)legacy;
  throw not_found("Method not found.");
}

}  // namespace kinetic::fakes
