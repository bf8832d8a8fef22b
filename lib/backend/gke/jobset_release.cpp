#include "backend/gke/jobset_release.h"

namespace kinetic::gke {

const Release& jobset_release() {
  static const Release release{
      .name = "JobSet",
      .version = kJobSetVersion,
      .sha256 = kJobSetManifestsSha256,
      .url = std::string("https://github.com/kubernetes-sigs/jobset/releases/download/") +
             kJobSetVersion + "/manifests.yaml",
      .env = "KINETIC_JOBSET_MANIFESTS",
      .flag = "--jobset-manifests",
      .ns = kJobSetNamespace,
      .deployment = kJobSetDeployment,
      .crd = "jobsets.jobset.x-k8s.io",
      .image = "/jobset:",
      .change = "jobset",
      .version_annotation = kJobSetVersionAnnotation,
  };
  return release;
}

std::string default_jobset_manifests_url() {
  return jobset_release().url;
}

std::string jobset_manifests_source(const std::string& flag, const Env& env) {
  return manifests_source(jobset_release(), flag, env);
}

std::string verify_manifests(const std::string& text, const std::string& source,
                             const std::string& pin) {
  return verify_release(jobset_release(), text, source, pin);
}

std::string installed_jobset_version(k8s::Client& kube) {
  return installed_release_version(jobset_release(), kube);
}

ClusterChange ensure_jobset(const Session& session, k8s::Client& kube, const std::string& source) {
  return ensure_release(jobset_release(), session, kube, source);
}

}  // namespace kinetic::gke
