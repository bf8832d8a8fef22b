#include "backend/gke/cluster_requests.h"

#include <algorithm>
#include <cctype>

#include "backend/gke/names.h"
#include "core/error.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

constexpr const char* kCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform";

// SERVICE_ACCOUNT: the nodes' Google identity (node_service_account.h); empty leaves GKE's
// default (the Compute Engine default account).
json node_config(const std::string& machine_type, const std::string& service_account) {
  json config = json::object();
  config["machineType"] = machine_type;
  if (!service_account.empty()) config["serviceAccount"] = service_account;
  config["diskSizeGb"] = 100;
  config["oauthScopes"] = json::array({kCloudPlatformScope});
  config["workloadMetadataConfig"] = {{"mode", "GKE_METADATA"}};
  config["resourceLabels"] = {{"managed-by", "kinetic"}};
  return config;
}

// A pool of a shape Compute Engine does not sell on demand never gets a node unless it is Spot,
// flex-start or (for reserved shapes) consumes a reservation: refuse it before anything is
// created, naming what works.
void require_obtainable(const Accelerator& a, const PoolOptions& options) {
  if (a.capacity == Capacity::on_demand || a.spot || a.flex_start) return;
  const std::string what = a.name + " (" + a.machine_type + ") is not sold on demand: ";
  if (a.capacity == Capacity::reservation) {
    if (!options.reservation.empty()) return;
    throw Error(Errc::usage, what +
                                 "Compute Engine offers it through a reservation, flex-start or "
                                 "Spot; pass --reservation NAME, --flex-start or --spot");
  }
  std::string hint = "pass --flex-start or --spot";
  for (const auto& other : accelerator_catalog()) {
    if (other.kind == a.kind && other.capacity == Capacity::on_demand) {
      hint += ", or ask for " + other.name + ", which is sold on demand";
      break;
    }
  }
  throw Error(Errc::usage,
              what + "Compute Engine offers it only as Spot or flex-start VMs; " + hint);
}

// A flex-start pool (docs/capacity.md, docs/gke-conformance.md "Flex-start"): what GKE's flex-start
// pools take, refused here in one line rather than by GKE after the request. They scale from zero
// (no static nodes), consume no reservation, are not Spot, and GKE documents them for GPUs and
// TPUs from v5e on.
void require_flex_start_pool(const Accelerator& a, const PoolOptions& options) {
  if (!a.flex_start) return;
  require_flex_start(a);
  if (a.spot)
    throw Error(Errc::usage,
                "--spot and --flex-start are two kinds of capacity and a pool has one; pick one");
  if (!options.reservation.empty())
    throw Error(Errc::usage,
                "a flex-start pool consumes no reservation; drop --reservation or --flex-start");
  if (options.min_nodes != 0)
    throw Error(Errc::usage,
                "a flex-start pool scales from zero when capacity comes; drop "
                "--min-nodes " +
                    std::to_string(options.min_nodes));
}

// GKE's flex-start fields on a pool of A: the flag, no reservation, no auto-repair (cluster-toolkit
// refuses flex-start with it, xpk passes --no-enable-autorepair: a repaired node would be a new
// flex-start request).
void add_flex_start(json& pool) {
  pool["config"]["flexStart"] = true;
  pool["config"]["reservationAffinity"] = {{"consumeReservationType", "NO_RESERVATION"}};
  pool["management"]["autoRepair"] = false;
}

}  // namespace

const std::vector<std::string>& required_services() {
  static const std::vector<std::string> services = {
      "container.googleapis.com",
      "compute.googleapis.com",
      "cloudbuild.googleapis.com",
      "artifactregistry.googleapis.com",
      "storage.googleapis.com",
      "logging.googleapis.com",
      "iam.googleapis.com",
      // The node service account's grants are project IAM policy bindings.
      "cloudresourcemanager.googleapis.com",
      // Image streaming (every pool's gcfsConfig) needs the Container File System API.
      "containerfilesystem.googleapis.com",
  };
  return services;
}

const std::vector<std::string>& default_machine_candidates() {
  static const std::vector<std::string> types = {"e2-standard-4", "n2-standard-4",
                                                 "n1-standard-4", "n2d-standard-4",
                                                 "c3-standard-4", "t2d-standard-4"};
  return types;
}

bool is_machine_type_unavailable(const std::string& message) {
  std::string m = message;
  std::transform(m.begin(), m.end(), m.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return m.find("machine type") != std::string::npos || m.find("machinetype") != std::string::npos;
}

json gcs_fuse_addon() {
  return {{"gcsFuseCsiDriverConfig", {{"enabled", true}}}};
}

bool has_gcs_fuse_addon(const json& cluster) {
  const auto addons = cluster.find("addonsConfig");
  if (addons == cluster.end() || !addons->is_object()) return false;
  const auto config = addons->find("gcsFuseCsiDriverConfig");
  return config != addons->end() && config->is_object() && config->value("enabled", false);
}

json cluster_request(const ClusterOptions& options) {
  json pool = json::object();
  pool["name"] = "default-pool";
  pool["initialNodeCount"] = 1;
  pool["config"] = node_config(options.default_machine_type, options.node_service_account);
  pool["autoscaling"] = {{"enabled", true}, {"minNodeCount", 1}, {"maxNodeCount", 3}};
  pool["management"] = {{"autoRepair", true}, {"autoUpgrade", true}};

  json cluster = json::object();
  cluster["name"] = options.name;
  cluster["description"] = "kinetic jobs cluster (kinetic up)";
  cluster["releaseChannel"] = {{"channel", options.release_channel}};
  cluster["workloadIdentityConfig"] = {{"workloadPool", options.project + ".svc.id.goog"}};
  // `run --data gs://...` mounts buckets with GKE's Cloud Storage FUSE CSI driver (an add-on).
  cluster["addonsConfig"] = gcs_fuse_addon();
  cluster["ipAllocationPolicy"] = {{"useIpAliases", true}};
  cluster["resourceLabels"] = {{"managed-by", "kinetic"}};
  cluster["nodePools"] = json::array({pool});
  if (!options.zone.empty()) cluster["locations"] = json::array({options.zone});
  return cluster;
}

json node_pool_request(const Accelerator& accelerator, const PoolOptions& options,
                       const std::string& zone) {
  Accelerator a = accelerator;
  if (options.spot) a.spot = true;
  if (options.flex_start) a.flex_start = true;
  require_flex_start_pool(a, options);
  require_obtainable(a, options);
  if (options.slices > 1 && (a.family != AcceleratorFamily::tpu || a.hosts < 2))
    throw Error(Errc::usage, "--slices " + std::to_string(options.slices) +
                                 " makes a pool per slice of a multi-host TPU, and " + a.name +
                                 " is not one; use e.g. --accelerator v5litepod-16, or drop "
                                 "--slices");
  const bool multi_host = a.hosts > 1;
  const int max_nodes = options.max_nodes.value_or(multi_host ? a.hosts : 4);
  if (options.min_nodes < 0 || max_nodes < 1 || options.min_nodes > max_nodes)
    throw Error(Errc::usage, "--min-nodes " + std::to_string(options.min_nodes) +
                                 " must be between 0 and the pool's maximum (" +
                                 std::to_string(max_nodes) + ")");
  // A multi-host pool is one slice: GKE scales it atomically between zero and its topology's
  // node count and adds no node to it later ("About TPUs in GKE"), so any other size is
  // meaningless. Two slices at once take two pools.
  if (multi_host &&
      (max_nodes != a.hosts || (options.min_nodes != 0 && options.min_nodes != a.hosts)))
    throw Error(Errc::usage, a.name + " spans " + std::to_string(a.hosts) +
                                 " hosts and its pool is one whole slice; use --min-nodes 0 or " +
                                 std::to_string(a.hosts) + " and --max-nodes " +
                                 std::to_string(a.hosts));

  json config = node_config(a.machine_type, options.service_account);
  // Image streaming: a multi-GB ML image starts before it is fully pulled (GKE's gcfsConfig;
  // it serves images from Artifact Registry, which kinetic's are).
  config["gcfsConfig"] = {{"enabled", true}};
  const std::string name = slice_pool_name(a, options.slice);
  config["labels"] = {{kPoolLabel, name}, {kAcceleratorLabel, a.name}};
  if (a.family == AcceleratorFamily::gpu) {
    config["accelerators"] =
        json::array({{{"acceleratorType", a.gke_accelerator},
                      {"acceleratorCount", std::to_string(a.chips_per_host)},
                      {"gpuDriverInstallationConfig", {{"gpuDriverVersion", "LATEST"}}}}});
  }
  if (a.spot) {
    config["spot"] = true;
    // Only jobs asking for Spot (they tolerate this) may land on nodes that can vanish.
    config["taints"] = json::array(
        {{{"key", "cloud.google.com/gke-spot"}, {"value", "true"}, {"effect", "NO_SCHEDULE"}}});
  }
  if (!options.reservation.empty()) {
    config["reservationAffinity"] = {{"consumeReservationType", "SPECIFIC_RESERVATION"},
                                     {"key", "compute.googleapis.com/reservation-name"},
                                     {"values", json::array({options.reservation})}};
  }

  json pool = json::object();
  pool["name"] = name;
  pool["initialNodeCount"] = options.min_nodes;
  pool["config"] = config;
  if (multi_host) {
    // One slice scales atomically, 0 <-> hosts (cluster-toolkit: max = hosts, ANY), its hosts
    // placed as one physical slice: COMPACT with the topology, as xpk, cluster-toolkit and GKE's
    // samples send (docs/gke-conformance.md "Node pools").
    pool["placementPolicy"] = {{"type", "COMPACT"}, {"tpuTopology", a.topology}};
    pool["autoscaling"] = {{"enabled", true},
                           {"minNodeCount", options.min_nodes},
                           {"maxNodeCount", max_nodes},
                           {"locationPolicy", "ANY"}};
  } else {
    pool["autoscaling"] = {{"enabled", true},
                           {"totalMinNodeCount", options.min_nodes},
                           {"totalMaxNodeCount", max_nodes},
                           {"locationPolicy", "ANY"}};
  }
  pool["management"] = {{"autoRepair", true}, {"autoUpgrade", true}};
  if (a.flex_start) add_flex_start(pool);
  if (!zone.empty()) pool["locations"] = json::array({zone});
  return pool;
}

}  // namespace kinetic::gke
