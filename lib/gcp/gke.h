// GKE (container.googleapis.com/v1): clusters, node pools and their operations (docs/gcp-api.md
// §2). LOCATION is a zone (zonal cluster) or a region (regional cluster).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gcp/operations.h"
#include "http/transport.h"

namespace kinetic::gcp {

struct ClusterInfo {
  std::string name;
  std::string location;
  std::string status;  // PROVISIONING, RUNNING, RECONCILING, STOPPING, ERROR, DEGRADED
  std::string status_message;
  std::string endpoint;  // control-plane address, maybe with a port; no scheme
  std::string ca_pem;    // masterAuth.clusterCaCertificate, base64-decoded
  std::string version;   // currentMasterVersion
  nlohmann::json raw;
};

struct NodePoolInfo {
  std::string name;
  std::string status;  // PROVISIONING, RUNNING, RUNNING_WITH_ERROR, RECONCILING, STOPPING, ERROR
  std::string status_message;
  std::string machine_type;
  bool spot = false;
  bool flex_start = false;                    // config.flexStart
  std::map<std::string, std::string> labels;  // config.labels
  std::string tpu_topology;                   // placementPolicy.tpuTopology
  bool image_streaming = false;               // config.gcfsConfig.enabled
  int min_nodes = 0;                          // autoscaling (total* or per-zone)
  int max_nodes = 0;
  int initial_nodes = 0;
  nlohmann::json raw;
};

class GkeClient {
 public:
  GkeClient(http::Transport& transport, std::string endpoint, PollOptions poll);

  std::optional<ClusterInfo> get_cluster(const std::string& project, const std::string& location,
                                         const std::string& name);
  // The clusters of PROJECT in LOCATION ("-": every location), with their node pools in raw.
  std::vector<ClusterInfo> list_clusters(const std::string& project, const std::string& location);
  // POSTs {"cluster": CLUSTER} and waits for the operation; returns the cluster when RUNNING.
  // A 409 (it exists) returns the existing cluster.
  ClusterInfo create_cluster(const std::string& project, const std::string& location,
                             const nlohmann::json& cluster);
  // PUTs {"update": UPDATE} (a ClusterUpdate, e.g. desiredAddonsConfig) and waits; returns the
  // cluster as it is then.
  ClusterInfo update_cluster(const std::string& project, const std::string& location,
                             const std::string& name, const nlohmann::json& update);
  // Deletes and waits; false when there was no such cluster.
  bool delete_cluster(const std::string& project, const std::string& location,
                      const std::string& name);

  std::vector<NodePoolInfo> list_node_pools(const std::string& project, const std::string& location,
                                            const std::string& cluster);
  // POSTs {"nodePool": POOL} and waits. A 409 returns the existing pool. A pool whose operation
  // fails (stockout, quota) throws with GKE's message.
  NodePoolInfo create_node_pool(const std::string& project, const std::string& location,
                                const std::string& cluster, const nlohmann::json& pool);
  bool delete_node_pool(const std::string& project, const std::string& location,
                        const std::string& cluster, const std::string& pool);

 private:
  std::string base(const std::string& project, const std::string& location) const;
  nlohmann::json wait(const std::string& project, const std::string& location,
                      nlohmann::json operation, const std::string& what);

  http::Transport& transport_;
  std::string endpoint_;
  PollOptions poll_;
};

NodePoolInfo node_pool_from_json(const nlohmann::json& j);
ClusterInfo cluster_from_json(const nlohmann::json& j);

}  // namespace kinetic::gcp
