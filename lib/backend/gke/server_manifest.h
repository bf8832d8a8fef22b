// What `kinetic serve` creates on GKE for a server (docs/serving.md "Servers on gke"): a
// Deployment of one replica whose pod is a run's pod, ready once its port accepts, and a
// ClusterIP Service in front of it. Pure functions, as job/manifest.h's; the sources of the
// fields are in docs/gke-conformance.md "Servers (Deployment and Service)".
#pragma once

#include <nlohmann/json.hpp>

#include "job/manifest.h"

namespace kinetic::gke {

// The server's Deployment (apps/v1), named and labelled as the job's Job would be, plus
// kinetic.dev/serve=PORT: one replica of IN's pod template with `restartPolicy: Always`,
// containerPort PORT and a tcpSocket readiness probe on PORT.
nlohmann::ordered_json build_server_deployment(const ManifestInput& in, int port);

// The ClusterIP Service selecting the server's pods (kinetic.dev/job=ID) on PORT.
nlohmann::ordered_json build_server_service(const ManifestInput& in, int port);

}  // namespace kinetic::gke
