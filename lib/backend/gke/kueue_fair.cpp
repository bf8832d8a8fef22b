#include "backend/gke/kueue_fair.h"

#include <optional>

#include <yaml-cpp/yaml.h>

#include "backend/gke/kueue.h"
#include "core/duration.h"
#include "core/error.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

YAML::Node load_manager_config(const std::string& config_yaml) {
  try {
    YAML::Node node = YAML::Load(config_yaml);
    if (node.IsMap() || node.IsNull()) return node;
  } catch (const YAML::Exception&) {
  }
  throw Error(Errc::config, std::string("Kueue's configuration (kueue-system/") + kKueueConfigMap +
                                " " + kKueueConfigKey +
                                ") is not a YAML mapping; fix it with `kubectl -n kueue-system "
                                "edit configmap " +
                                kKueueConfigMap + "`, then run `kinetic up` again");
}

}  // namespace

bool has_admission_fair_sharing(const std::string& config_yaml) {
  const YAML::Node config = load_manager_config(config_yaml);
  return config.IsMap() && config["admissionFairSharing"] &&
         !config["admissionFairSharing"].IsNull();
}

std::string with_admission_fair_sharing(const std::string& config_yaml) {
  if (has_admission_fair_sharing(config_yaml)) return config_yaml;
  YAML::Node config = load_manager_config(config_yaml);
  if (config.IsNull()) config = YAML::Node(YAML::NodeType::Map);
  YAML::Node fair(YAML::NodeType::Map);
  fair["usageHalfLifeTime"] = kUsageHalfLifeTime;
  fair["usageSamplingInterval"] = kUsageSamplingInterval;
  config["admissionFairSharing"] = fair;
  YAML::Emitter out;
  out << config;
  return std::string(out.c_str()) + "\n";
}

void edit_for_fair_sharing(json& object) {
  if (object.value("kind", "") != "ConfigMap") return;
  if (object["metadata"].value("name", "") != kKueueConfigMap) return;
  json& data = object["data"];
  data[kKueueConfigKey] = with_admission_fair_sharing(data.value(kKueueConfigKey, ""));
}

void ensure_fair_sharing_config(const Session& session, k8s::Client& kube,
                                const std::function<void(ClusterChange)>& report) {
  const std::string path =
      std::string("/api/v1/namespaces/") + kKueueNamespace + "/configmaps/" + kKueueConfigMap;
  std::optional<json> config_map = kube.get(path);
  json data = config_map ? (*config_map).value("data", json::object()) : json::object();
  if (has_admission_fair_sharing(data.value(kKueueConfigKey, ""))) return;
  json edited = {{"apiVersion", "v1"},
                 {"kind", "ConfigMap"},
                 {"metadata", {{"name", kKueueConfigMap}, {"namespace", kKueueNamespace}}},
                 {"data", data}};
  edit_for_fair_sharing(edited);
  kube.apply(path, edited, "kinetic");
  // The controller read its file at start, and a subPath mount is never refreshed: a new pod
  // reads the new one. This is `kubectl rollout restart`: a pod template annotation of the time
  // (kubectl's polymorphichelpers/objectrestarter.go), applied by a field manager of its own
  // so that kinetic's ownership of the rest of the Deployment is left as it is.
  const Release& release = kueue_release();
  const json restart = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", release.deployment}, {"namespace", release.ns}}},
      {"spec",
       {{"template",
         {{"metadata",
           {{"annotations", {{"kubectl.kubernetes.io/restartedAt", rfc3339(now_unix())}}}}}}}}}};
  kube.apply(deployment_path(release), restart, "kinetic-rollout");
  wait_for_controller(release, session, kube);
  report({"kueue config",
          std::string("admissionFairSharing (") + kKueueNamespace + "/" + kKueueConfigMap +
              ", controller restarted)",
          "updated"});
}

}  // namespace kinetic::gke
