// The whole fake cloud for end-to-end tests: GCS, the control-plane APIs (Service Usage, GKE,
// Cloud Build, Artifact Registry) and a Kubernetes API, wired as the real ones are: a node pool
// GKE creates becomes nodes the Kubernetes scheduler can use (labelled and tainted as GKE does
// for its machine type), an image Cloud Build pushes becomes pullable and a pod runs with only
// what its image holds (fake_images.h), and pods reach GCS through STORAGE_EMULATOR_HOST, so
// `kinetic up`, `run` and `down` work end to end on loopback.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/fake_gcp.h"
#include "fakes/fake_gcs.h"
#include "fakes/fake_images.h"
#include "fakes/fake_kube.h"

namespace kinetic::fakes {

struct FakeCloudOptions {
  // Services enabled at start (besides serviceusage and storage).
  bool all_services_enabled = false;
  int kill_grace_seconds = 5;
  std::map<std::string, std::set<std::string>> zone_machine_types;
  // The project whose workload pool the cluster's pods are in (Workload Identity): the one the
  // end-to-end tests run `kinetic up` in.
  std::string project = "acme-ml";
  // Writes a second each GCS bucket and the Kubernetes API server take (0: no quota), as
  // FakeGcs::set_write_quota and FakeKube::set_write_quota.
  double write_quota = 0;
};

class FakeCloud {
 public:
  explicit FakeCloud(FakeCloudOptions options = {});
  ~FakeCloud();

  FakeGcs& gcs() { return *gcs_; }
  FakeImageStore& images() { return *images_; }
  FakeGcp& gcp() { return *gcp_; }
  FakeKube& kube() { return *kube_; }

  // The environment that points kinetic (and gcloud) at the fakes: endpoint overrides,
  // STORAGE_EMULATOR_HOST, a fixed access token, and instant operation polling.
  std::map<std::string, std::string> client_env() const;

  // While set, no node can pull any image (ErrImagePull, then ImagePullBackOff), though the
  // registry has it: a node without pull permission, say.
  void break_image_pulls(bool broken) { pulls_broken_ = broken; }

 private:
  // The Cloud Storage FUSE CSI driver's mount of a pod's volume (FakeKubeOptions::gcs_fuse_mount).
  std::string gcs_fuse_mount(const std::string& project, const std::string& ns,
                             const std::string& ksa, const nlohmann::json& attributes,
                             const std::string& dir, bool read_only);
  std::unique_ptr<FakeImageStore> images_;  // first in, last out: the others refer to it
  std::unique_ptr<FakeGcs> gcs_;
  std::unique_ptr<FakeKube> kube_;
  std::unique_ptr<FakeGcp> gcp_;
  std::atomic<bool> pulls_broken_{false};
};

// What GKE makes of a node pool resource: node labels (pool, TPU accelerator and topology, GPU
// accelerator, Spot), taints (TPU, GPU, the pool's own) and extended resources.
FakeNodePool node_pool_from_gke(const std::string& cluster, const nlohmann::json& pool);

}  // namespace kinetic::fakes
