// Compute Engine, read-only, for what GKE does not say up front: which zones a region has and
// which of them offer a machine type (a TPU or GPU machine exists in only some zones of a region,
// and a node pool asking for it elsewhere is refused). docs/gcp-api.md; docs/gke-conformance.md.
#pragma once

#include <string>
#include <vector>

#include "http/transport.h"

namespace kinetic::gcp {

class ComputeClient {
 public:
  // ENDPOINT: api_endpoint("compute") (https://compute.googleapis.com, or an override).
  ComputeClient(http::Transport& transport, std::string endpoint);

  // The zones of REGION in PROJECT ("us-central1-a", ...), sorted (regions.get's `zones`).
  std::vector<std::string> region_zones(const std::string& project, const std::string& region);
  // Whether ZONE offers MACHINE_TYPE (machineTypes.get: 404 means it does not).
  bool zone_offers(const std::string& project, const std::string& zone,
                   const std::string& machine_type);

 private:
  http::Transport& transport_;
  std::string endpoint_;
};

}  // namespace kinetic::gcp
