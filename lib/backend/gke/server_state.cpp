#include "backend/gke/server_state.h"

#include "backend/gke/job_state.h"
#include "job/spec.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

bool pod_is_ready(const json& pod) {
  if (pod["metadata"].contains("deletionTimestamp")) return false;
  const json status = pod.value("status", json::object());
  for (const auto& c : status.value("conditions", json::array()))
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  return false;
}

}  // namespace

bool is_server_status(const JobStatus& st) {
  for (const auto& [key, value] : st.labels)
    if (key == kServeLabel) return true;
  return false;
}

JobStatus status_from_deployment(const json& deployment) {
  JobStatus st = status_from_workload(deployment);
  const json status = deployment.value("status", json::object());
  const bool ready = status.value("readyReplicas", 0) >= 1;
  st.state = std::string(ready ? kRunning : kPending);
  st.attempts = 1;
  if (deployment["metadata"].contains("deletionTimestamp")) st.state = std::string(kCancelled);
  return st;
}

std::optional<std::string> ready_server_pod(const std::vector<json>& pods) {
  const json* best = nullptr;
  for (const auto& p : pods) {
    if (!pod_is_ready(p)) continue;
    if (!best || p["metadata"].value("creationTimestamp", "") >
                     (*best)["metadata"].value("creationTimestamp", ""))
      best = &p;
  }
  if (!best) return std::nullopt;
  return (*best)["metadata"].value("name", "");
}

}  // namespace kinetic::gke
