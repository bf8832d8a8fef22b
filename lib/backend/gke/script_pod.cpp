#include "backend/gke/script_pod.h"

namespace kinetic::gke {

nlohmann::ordered_json ScriptObjects::labels() const {
  return {{"app.kubernetes.io/managed-by", "kinetic"}, {"app.kubernetes.io/name", app}};
}

nlohmann::ordered_json ScriptObjects::metadata(const std::string& name,
                                               const std::string& ns) const {
  return {{"name", name}, {"namespace", ns}, {"labels", labels()}};
}

nlohmann::ordered_json script_pod_spec(const std::string& container, std::string_view source,
                                       nlohmann::ordered_json env,
                                       const std::string& service_account) {
  using ojson = nlohmann::ordered_json;
  ojson c = {
      {"name", container},
      {"image", kScriptImage},
      {"command", {"python3", "-c", std::string(source)}},
      {"env", std::move(env)},
      {"resources",
       {{"requests", {{"cpu", "50m"}, {"memory", "64Mi"}}}, {"limits", {{"memory", "128Mi"}}}}},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", {"ALL"}}}}}}};
  return {{"serviceAccountName", service_account},
          {"restartPolicy", "Never"},
          // The default pool is always up; an accelerator node would be kept up by this pod.
          {"nodeSelector", {{"cloud.google.com/gke-nodepool", "default-pool"}}},
          {"securityContext", {{"runAsNonRoot", true}, {"runAsUser", 65534}}},
          {"containers", ojson::array({c})}};
}

}  // namespace kinetic::gke
