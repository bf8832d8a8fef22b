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

int slice_pools(const Accelerator& accel, const std::vector<gcp::NodePoolInfo>& pools) {
  int n = 0;
  for (const auto& p : pools)
    if (p.machine_type == accel.machine_type && p.tpu_topology == accel.topology &&
        p.spot == accel.spot && p.flex_start == accel.flex_start)
      ++n;
  return n;
}

std::string missing_slice_pools(const Accelerator& accel,
                                const std::vector<gcp::NodePoolInfo>& pools) {
  const int have = slice_pools(accel, pools);
  if (accel.slices <= 1 || have >= accel.slices) return {};
  const std::string name = qualified_name(accel);
  return std::to_string(accel.slices) + " slices of " + name + " take " +
         std::to_string(accel.slices) + " node pools of it, one a slice, and the cluster has " +
         std::to_string(have) + "; add them with `kinetic pool add --accelerator " + name +
         " --slices " + std::to_string(accel.slices) + "` and run again";
}

}  // namespace kinetic::gke
