// What `run` submits on GKE for a job spec: the manifest input (image, the in-pod bootstrap and
// its environment, secrets by name, limits, annotations `status` reads back). Shared by the
// backend's submit and `run --dry-run`, so the dry run prints exactly what would be sent.
#pragma once

#include <string>

#include "job/manifest.h"
#include "job/spec.h"

namespace kinetic::gke {

ManifestInput manifest_input(const JobSpec& spec, const std::string& bucket, const std::string& ns);

}  // namespace kinetic::gke
