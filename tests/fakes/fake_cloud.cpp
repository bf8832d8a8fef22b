#include "fakes/fake_cloud.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

namespace kinetic::fakes {

using json = nlohmann::json;

namespace {

struct TpuMachine {
  const char* prefix;         // machine type without the -Nt suffix
  const char* accelerator;    // cloud.google.com/gke-tpu-accelerator
  const char* topologies[9];  // default topology by chips per VM (index = chips)
};

// GKE's TPU machine types (docs/gcp-api.md §8), with the topology a single host has.
const TpuMachine kTpuMachines[] = {
    {"ct5lp-hightpu", "tpu-v5-lite-podslice", {"", "1x1", "", "", "2x2", "", "", "", "2x4"}},
    {"ct6e-standard", "tpu-v6e-slice", {"", "1x1", "", "", "2x2", "", "", "", "2x4"}},
    {"ct5p-hightpu", "tpu-v5p-slice", {"", "", "", "", "2x2x1", "", "", "", ""}},
    {"ct4p-hightpu", "tpu-v4-podslice", {"", "", "", "", "2x2x1", "", "", "", ""}},
};

// A string field, "" when absent or null (the fake GKE echoes optional fields as null).
std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int num(const json& j, const char* key, int fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (it->is_number_integer()) return it->get<int>();
  if (it->is_string()) return std::atoi(it->get<std::string>().c_str());
  return fallback;
}

bool flag(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

json object(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : json::object();
}

json array(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : json::array();
}

std::vector<std::string> split_options(const std::string& options) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= options.size()) {
    const size_t comma = options.find(',', start);
    out.push_back(
        options.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Machine types Compute Engine does not sell on demand (its "GPU machine types" page, the note
// under each series: docs/gke-conformance.md "Capacity"): a pool of one gets nodes only as Spot
// or flex-start or, for the reserved ones, from a reservation.
struct NotOnDemand {
  const char* machine_type;
  bool reservable;
};
constexpr NotOnDemand kNotOnDemand[] = {{"a3-highgpu-1g", false},
                                        {"a3-highgpu-2g", false},
                                        {"a3-highgpu-4g", false},
                                        {"a3-ultragpu-8g", true},
                                        {"a4-highgpu-8g", true}};

// Why a pool of MACHINE with CONFIG can get no node; empty when it can. The wording is this
// fake's (docs/fakes.md): the real message of a refused STANDARD VM was not found.
std::string unobtainable(const std::string& machine, const json& config) {
  for (const auto& n : kNotOnDemand) {
    if (machine != n.machine_type) continue;
    if (flag(config, "spot") || flag(config, "preemptible") || flag(config, "flexStart")) return "";
    const json affinity = object(config, "reservationAffinity");
    if (n.reservable && str(affinity, "consumeReservationType") == "SPECIFIC_RESERVATION")
      return "";
    return "GCE_UNSUPPORTED_PROVISIONING_MODEL: machine type " + machine +
           " is not available with the STANDARD provisioning model";
  }
  return "";
}

std::string effect_name(const std::string& gke_effect) {
  if (gke_effect == "NO_EXECUTE") return "NoExecute";
  if (gke_effect == "PREFER_NO_SCHEDULE") return "PreferNoSchedule";
  return "NoSchedule";
}

}  // namespace

FakeNodePool node_pool_from_gke(const std::string& cluster, const json& pool) {
  (void)cluster;
  FakeNodePool p;
  p.name = str(pool, "name");
  const json config = object(pool, "config");
  const json labels = object(config, "labels");
  for (const auto& [k, v] : labels.items())
    if (v.is_string()) p.labels[k] = v.get<std::string>();
  std::string machine = str(config, "machineType");
  if (machine.empty()) machine = "e2-medium";
  p.labels["node.kubernetes.io/instance-type"] = machine;

  static const std::regex tpu_re(R"(^(.*)-(\d)t$)");
  std::smatch m;
  if (std::regex_match(machine, m, tpu_re)) {
    const int chips = std::stoi(m[2]);
    for (const auto& t : kTpuMachines) {
      if (m[1] != t.prefix) continue;
      auto placement = pool.find("placementPolicy");
      std::string topology =
          placement != pool.end() && placement->is_object() ? str(*placement, "tpuTopology") : "";
      if (topology.empty() && chips < 9) topology = t.topologies[chips];
      p.labels["cloud.google.com/gke-tpu-accelerator"] = t.accelerator;
      p.labels["cloud.google.com/gke-tpu-topology"] = topology;
      p.allocatable["google.com/tpu"] = std::to_string(chips);
      p.taints.push_back({"google.com/tpu", "present", "NoSchedule"});
    }
  }
  for (const auto& a : array(config, "accelerators")) {
    p.labels["cloud.google.com/gke-accelerator"] = str(a, "acceleratorType");
    std::string count = std::to_string(num(a, "acceleratorCount", 1));
    p.allocatable["nvidia.com/gpu"] = count;
    p.taints.push_back({"nvidia.com/gpu", "present", "NoSchedule"});
  }
  if (flag(config, "spot")) p.labels["cloud.google.com/gke-spot"] = "true";
  // GKE labels flex-start nodes so, the label their pods select (docs/gke-conformance.md).
  p.flex_start = flag(config, "flexStart");
  if (p.flex_start) p.labels["cloud.google.com/gke-flex-start"] = "true";
  p.unobtainable = unobtainable(machine, config);
  for (const auto& t : array(config, "taints"))
    p.taints.push_back({str(t, "key"), str(t, "value"), effect_name(str(t, "effect"))});

  const json as = object(pool, "autoscaling");
  p.min_nodes = num(as, "totalMinNodeCount", num(as, "minNodeCount", 0));
  p.max_nodes = num(as, "totalMaxNodeCount", num(as, "maxNodeCount", 0));
  p.nodes = num(pool, "initialNodeCount", 0);
  if (!flag(as, "enabled")) p.max_nodes = p.nodes;
  const json locations = array(pool, "locations");
  if (!locations.empty() && locations[0].is_string()) p.zone = locations[0].get<std::string>();
  return p;
}

FakeCloud::FakeCloud(FakeCloudOptions options) {
  images_ = std::make_unique<FakeImageStore>();
  gcs_ = std::make_unique<FakeGcs>();

  FakeKubeOptions ko;
  ko.pod_env["STORAGE_EMULATOR_HOST"] = "127.0.0.1:" + std::to_string(gcs_->port());
  ko.default_grace_seconds = options.kill_grace_seconds;
  ko.jobset_installed = false;  // a fresh GKE cluster has no JobSet until `kinetic up` adds it
  ko.image_pullable = [this](const std::string& image, std::string* why) {
    if (!pulls_broken_ && ((gcp_ && gcp_->has_image(image)) || FakeImageStore::public_image(image)))
      return true;
    if (pulls_broken_) {
      *why = "rpc error: code = PermissionDenied desc = failed to pull and unpack image \"" +
             image + "\": 403 Forbidden";
      return false;
    }
    *why = "rpc error: code = NotFound desc = failed to pull and unpack image \"" + image +
           "\": failed to resolve reference \"" + image + "\": " + image + ": not found";
    return false;
  };
  ko.image_env = [this](const std::string& image) {
    auto rt = images_->runtime(image);
    return rt.env;
  };
  // A pod reaches Google's APIs as its Kubernetes service account, through Workload Identity:
  // the metadata server of that identity (its tokens held to the project's IAM policy), and the
  // GKE API at the fake's address, as a node's pods reach the real one.
  ko.pod_identity_env = [this, project = options.project](const std::string& ns,
                                                          const std::string& ksa) {
    std::map<std::string, std::string> env;
    if (!gcp_) return env;
    env["GCE_METADATA_HOST"] = gcp_->workload_identity_metadata_host(project, ns, ksa);
    env["CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER"] = gcp_->url("container");
    return env;
  };
  ko.gcs_fuse_mount = [this, project = options.project](
                          const std::string& ns, const std::string& ksa, const json& attributes,
                          const std::string& dir, bool read_only) {
    return gcs_fuse_mount(project, ns, ksa, attributes, dir, read_only);
  };
  kube_ = std::make_unique<FakeKube>(ko);
  gcs_->set_write_quota(options.write_quota);
  kube_->set_write_quota(options.write_quota);

  FakeGcpOptions go;
  if (options.all_services_enabled) {
    for (const char* s :
         {"container.googleapis.com", "compute.googleapis.com", "cloudbuild.googleapis.com",
          "artifactregistry.googleapis.com", "logging.googleapis.com", "iam.googleapis.com",
          "cloudresourcemanager.googleapis.com", "containerfilesystem.googleapis.com"})
      go.enabled_services.insert(s);
  }
  go.operation_polls = 1;
  go.build_polls = 1;
  go.zone_machine_types = options.zone_machine_types;
  go.kube_endpoint = kube_->endpoint();
  go.kube_ca_pem = kube_->ca_pem();
  go.gcs = gcs_.get();
  go.images = images_.get();
  go.on_pool_created = [this](const std::string& cluster, const json& pool) {
    kube_->set_node_pool(node_pool_from_gke(cluster, pool));
  };
  go.on_pool_deleted = [this](const std::string&, const std::string& pool) {
    kube_->remove_node_pool(pool);
  };
  go.on_cluster_deleted = [this](const std::string&) { kube_->delete_cluster_objects(); };
  gcp_ = std::make_unique<FakeGcp>(go);
}

// What GKE's Cloud Storage FUSE CSI driver shows a pod: nothing without the add-on on the
// cluster; the bucket's objects under only-dir as files when the pod's Workload Identity
// principal may list them (a bucket IAM binding: the fake reads no project-level grant); a
// copy made when the pod starts (later changes to the bucket, and the job's writes, do not
// cross: docs/fakes.md).
std::string FakeCloud::gcs_fuse_mount(const std::string& project, const std::string& ns,
                                      const std::string& ksa, const json& attributes,
                                      const std::string& dir, bool read_only) {
  bool enabled = false;
  for (const auto& c : gcp_->clusters()) {
    const json addons = object(c, "addonsConfig");
    enabled = enabled || flag(object(addons, "gcsFuseCsiDriverConfig"), "enabled");
  }
  if (!enabled)
    return "kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name "
           "gcsfuse.csi.storage.gke.io not found in the list of registered CSI drivers";
  const std::string bucket = str(attributes, "bucketName");
  const auto policy = gcs_->bucket_iam_policy(bucket);
  if (!policy)
    return "rpc error: code = NotFound desc = failed to get GCS bucket \"" + bucket +
           "\": googleapi: Error 404: The specified bucket does not exist., notFound";
  const std::string principal = FakeGcp::workload_identity_principal(project, ns, ksa);
  static const std::set<std::string> listing = {
      "roles/storage.objectViewer",       "roles/storage.objectUser",
      "roles/storage.objectAdmin",        "roles/storage.admin",
      "roles/storage.legacyBucketReader", "roles/storage.legacyBucketWriter",
      "roles/storage.legacyBucketOwner"};
  bool may_list = false;
  for (const auto& b : array(*policy, "bindings")) {
    if (!listing.count(str(b, "role")) || b.contains("condition")) continue;
    for (const auto& m : array(b, "members"))
      may_list = may_list || m == principal || m == "allUsers" || m == "allAuthenticatedUsers";
  }
  if (!may_list)
    return "rpc error: code = PermissionDenied desc = failed to get GCS bucket \"" + bucket +
           "\": googleapi: Error 403: Caller does not have storage.objects.list access to the "
           "Google Cloud Storage bucket. Permission 'storage.objects.list' denied on resource (or "
           "it may not exist)., forbidden";
  // mountOptions: "implicit-dirs,only-dir=PREFIX"
  std::string only_dir;
  for (const auto& option : split_options(str(attributes, "mountOptions")))
    if (option.rfind("only-dir=", 0) == 0) only_dir = option.substr(9);
  const std::string prefix = only_dir.empty() ? "" : only_dir + "/";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  for (const auto& name : gcs_->object_names(bucket, prefix)) {
    const std::string rel = name.substr(prefix.size());
    if (rel.empty() || rel.back() == '/') continue;
    const std::filesystem::path file = std::filesystem::path(dir) / rel;
    std::filesystem::create_directories(file.parent_path(), ec);
    std::ofstream(file, std::ios::binary) << gcs_->object_data(bucket, name).value_or("");
    if (read_only)
      std::filesystem::permissions(file,
                                   std::filesystem::perms::owner_read |
                                       std::filesystem::perms::group_read |
                                       std::filesystem::perms::others_read,
                                   ec);
  }
  return "";
}

FakeCloud::~FakeCloud() {
  // Pods first (they call GCS), then the control plane (its callbacks reach the cluster only
  // while serving a request, and no client is left).
  kube_.reset();
  gcp_.reset();
  gcs_.reset();
  images_.reset();
}

std::map<std::string, std::string> FakeCloud::client_env() const {
  return {
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_SERVICEUSAGE", gcp_->url("serviceusage")},
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", gcp_->url("container")},
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDBUILD", gcp_->url("cloudbuild")},
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_ARTIFACTREGISTRY", gcp_->url("artifactregistry")},
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDRESOURCEMANAGER", gcp_->url("cloudresourcemanager")},
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_IAM", gcp_->url("iam")},
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", gcp_->url("compute")},
      {"STORAGE_EMULATOR_HOST", gcs_->url()},
      {"CLOUDSDK_AUTH_ACCESS_TOKEN", "fake-access-token"},
      {"KINETIC_POLL_INTERVAL_MS", "1"},
      // kinetic up applies this stand-in for the JobSet release instead of downloading it.
      {"KINETIC_JOBSET_MANIFESTS", KINETIC_FAKES_DIR "/jobset-release.yaml"},
      // and this one for Kueue's (`up --queue on`).
      {"KINETIC_KUEUE_MANIFESTS", KINETIC_FAKES_DIR "/kueue-release.yaml"},
  };
}

}  // namespace kinetic::fakes
