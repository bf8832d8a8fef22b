#include "backend/gke/names.h"

#include <algorithm>

namespace kinetic::gke {

std::string bucket_name(const std::string& project, const std::string& cluster) {
  std::string p = project;
  if (auto colon = p.find(':'); colon != std::string::npos) {
    std::string domain = p.substr(0, colon);
    std::replace(domain.begin(), domain.end(), '.', '-');
    p = domain + "-" + p.substr(colon + 1);
  }
  std::string name = p + "-kinetic-" + cluster;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (size_t at = name.find("google"); at != std::string::npos; at = name.find("google", at))
    name.replace(at, 6, "g00gle");
  if (name.size() > 63) name.resize(63);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

std::string pool_name(const Accelerator& accelerator) {
  std::string name;
  for (char c : accelerator.name) {
    unsigned char u = static_cast<unsigned char>(c);
    name += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) name = "p-" + name;
  if (accelerator.spot) name += "-spot";
  if (accelerator.flex_start) name += "-flex-start";
  if (name.size() > 40) name.resize(40);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

std::string slice_pool_name(const Accelerator& accelerator, int slice) {
  if (slice == 0) return pool_name(accelerator);
  const std::string suffix = "-slice-" + std::to_string(slice + 1);
  std::string name = pool_name(accelerator);
  if (name.size() + suffix.size() > 40) name.resize(40 - suffix.size());
  return name + suffix;
}

std::string kube_context_name(const std::string& project, const std::string& location,
                              const std::string& cluster) {
  return "gke_" + project + "_" + location + "_" + cluster;
}

std::string managed_selector() {
  std::string selector = kManagedByLabel;  // built up: GCC 12 -O2 warns on a + chain here
  selector += "=kinetic";
  return selector;
}

std::string job_selector(const std::string& job_id) {
  std::string selector = kJobLabel;
  selector += '=';
  selector += job_id;
  return selector;
}

std::string job_prefix(const std::string& job_id) {
  return std::string(kJobsPrefix) + job_id + "/";
}
std::string job_id_of_record(std::string_view object) {
  object.remove_prefix(std::min(object.size(), std::string_view(kJobsPrefix).size()));
  return std::string(object.substr(0, object.find('/')));
}
std::string spec_object(const std::string& job_id) {
  return job_prefix(job_id) + "spec.json";
}

std::string function_call_object(const std::string& job_id) {
  return job_prefix(job_id) + "function.pkl";
}

std::string function_runner_object(const std::string& job_id) {
  return job_prefix(job_id) + "function_runner.py";
}

std::string debug_launcher_object(const std::string& job_id) {
  return job_prefix(job_id) + "debug_launcher.py";
}
std::string follower_object(const std::string& job_id) {
  return job_prefix(job_id) + "follower";
}
std::string results_prefix(const std::string& job_id) {
  return job_prefix(job_id) + "results/";
}

std::string host_results_prefix(const std::string& job_id, int host) {
  return results_prefix(job_id) + (host == 0 ? "" : "workers/" + std::to_string(host) + "/");
}
std::string context_object(const std::string& sha256, Compression compression) {
  return std::string(kContextsPrefix) + sha256 + std::string(archive_extension(compression));
}

}  // namespace kinetic::gke
