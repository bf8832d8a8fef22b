#include "backend/gke/slice_host.h"

#include <cstdlib>
#include <string>

namespace kinetic::gke {
namespace {

int slice_label_number(const nlohmann::json& pod, const char* key) {
  const nlohmann::json labels =
      pod.value("metadata", nlohmann::json::object()).value("labels", nlohmann::json::object());
  return std::atoi(labels.value(key, std::string("0")).c_str());
}

}  // namespace

int pod_slice(const nlohmann::json& pod) {
  return slice_label_number(pod, "jobset.sigs.k8s.io/job-index");
}

int pod_host(const nlohmann::json& pod, int per_slice) {
  return pod_slice(pod) * per_slice +
         slice_label_number(pod, "batch.kubernetes.io/job-completion-index");
}

}  // namespace kinetic::gke
