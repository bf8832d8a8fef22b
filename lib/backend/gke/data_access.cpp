#include "backend/gke/data_access.h"

#include "backend/gke/names.h"

#include <algorithm>
#include <vector>

namespace kinetic::gke {

std::string service_account_principal(const std::string& project_number, const std::string& project,
                                      const std::string& ns, const std::string& sa) {
  return "principal://iam.googleapis.com/projects/" + project_number +
         "/locations/global/workloadIdentityPools/" + project + ".svc.id.goog/subject/ns/" + ns +
         "/sa/" + sa;
}

std::string pods_principal(const std::string& project_number, const std::string& project,
                           const std::string& ns) {
  return service_account_principal(project_number, project, ns, kJobServiceAccount);
}

std::string data_role(bool writable) {
  return writable ? "roles/storage.objectUser" : "roles/storage.objectViewer";
}

bool policy_grants(const nlohmann::json& policy, const std::string& member, bool writable) {
  // The predefined roles holding storage.objects.list and .get (and, for :rw, .create and
  // .delete), from the least to the most.
  std::vector<std::string> roles = {"roles/storage.objectUser", "roles/storage.objectAdmin",
                                    "roles/storage.admin"};
  if (!writable) roles.push_back("roles/storage.objectViewer");
  const auto bindings = policy.find("bindings");
  if (bindings == policy.end() || !bindings->is_array()) return false;
  for (const auto& b : *bindings) {
    if (!b.is_object() || b.contains("condition")) continue;
    const std::string role = b.value("role", "");
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) continue;
    for (const auto& m : b.value("members", nlohmann::json::array())) {
      if (!m.is_string()) continue;
      const std::string who = m.get<std::string>();
      if (who == member || who == "allUsers" || who == "allAuthenticatedUsers") return true;
    }
  }
  return false;
}

std::string grant_command(const std::string& bucket, const std::string& member,
                          const std::string& role) {
  return "gcloud storage buckets add-iam-policy-binding gs://" + bucket + " --member=" + member +
         " --role=" + role;
}

}  // namespace kinetic::gke
