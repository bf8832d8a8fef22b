// `kinetic port-forward` on the gke backend: each forwarded connection is a pods/portforward
// WebSocket of its own to the job's pod (k8s/port_forward.h), and the forward ends when that pod
// does (a retried attempt is another pod: forward again).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "auth/token_cache.h"
#include "backend/port_stream.h"

namespace kinetic::gke {

struct PodTarget {
  std::string server;  // https://ENDPOINT
  std::string ca_pem;
  std::string ns;
  std::string pod;
  std::string job;
  // A server's (docs/serving.md): its Ready pod, chosen again for each new connection, so that
  // after a pod restart a new connection reaches the new pod. Empty: always POD.
  std::function<std::string()> choose_pod;
};

// Why POD (as read now; nullopt: deleted) is no longer one to forward to, for job JOB: "" while
// it runs. Pure.
std::string pod_end(const std::optional<nlohmann::json>& pod, const std::string& job,
                    const std::string& name);

// Connections to TARGET's pod as the holder of CREDENTIALS; READ_POD reads the pod (nullopt when
// deleted) for wait_for_end, from one thread.
std::unique_ptr<PortDialer> pod_port_dialer(
    PodTarget target, std::shared_ptr<auth::TokenCache> credentials, int verbosity,
    std::function<std::optional<nlohmann::json>()> read_pod);

}  // namespace kinetic::gke
