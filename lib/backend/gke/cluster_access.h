// How to reach a cluster's Kubernetes API: its endpoint and CA, from GKE once and then from a
// cache in the state dir (one GKE call saved on every run and status). A stale cache (the
// cluster was re-created) is refreshed when the connection fails.
#pragma once

#include <memory>
#include <string>

#include "backend/gke/session.h"
#include "k8s/client.h"

namespace kinetic::gke {

struct ClusterAccess {
  std::string server;  // https://ENDPOINT
  std::string ca_pem;
};

// The cached access, or GKE's answer (cached). Throws Error(Errc::not_found) naming `kinetic up`
// when the cluster does not exist. REFRESH skips the cache.
ClusterAccess cluster_access(const Session& session, bool refresh = false);
void forget_cluster_access(const Session& session);
void remember_cluster_access(const Session& session, const ClusterAccess& access);

// A Kubernetes client for the session's cluster, with its transport.
struct KubeConnection {
  std::shared_ptr<http::Transport> transport;
  std::unique_ptr<k8s::Client> client;
};
KubeConnection connect_kube(const Session& session, const ClusterAccess& access);

}  // namespace kinetic::gke
