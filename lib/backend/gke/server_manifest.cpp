#include "backend/gke/server_manifest.h"

#include <string>

#include "core/error.h"
#include "job/spec.h"

namespace kinetic::gke {
namespace {

using json = nlohmann::ordered_json;

// How often the kubelet tries the port: readiness is what `serve` waits on before printing the
// URL, so a server is noticed within 2 s of listening rather than the default 10 s.
constexpr int kReadinessPeriodSeconds = 2;

void check_port(int port) {
  if (port < 1 || port > 65535)
    throw Error(Errc::internal,
                "server manifest: port " + std::to_string(port) + " is not 1-65535");
}

// The server's objects carry the job's labels (cleanup and status find them by
// kinetic.dev/job) and its port under kServeLabel (auto-down and `serve ls` tell servers apart).
json server_labels(const json& template_labels, int port) {
  json labels = template_labels;
  labels[std::string(kServeLabel)] = std::to_string(port);
  return labels;
}

json server_metadata(const ManifestInput& in, const json& labels) {
  json metadata = json::object();
  metadata["name"] = k8s_object_name(in.job_id);
  metadata["namespace"] = in.namespace_;
  metadata["labels"] = labels;
  if (!in.annotations.empty()) {
    json annotations = json::object();
    for (const auto& [key, value] : in.annotations) annotations[key] = value;
    metadata["annotations"] = annotations;
  }
  return metadata;
}

json job_selector(const ManifestInput& in) {
  json selector = json::object();
  selector["kinetic.dev/job"] = in.job_id;
  return selector;
}

}  // namespace

nlohmann::ordered_json build_server_deployment(const ManifestInput& in, int port) {
  check_port(port);
  json tmpl = build_pod_template(in);
  const json labels = server_labels(tmpl["metadata"]["labels"], port);
  tmpl["metadata"]["labels"] = labels;
  // A Deployment's pods may only restart Always (DeploymentSpec.template); the bootstrap,
  // told by spec.json that it serves, counts no attempts and gives no verdict.
  tmpl["spec"]["restartPolicy"] = "Always";
  json& container = tmpl["spec"]["containers"][0];
  json container_port = json::object();
  container_port["containerPort"] = port;
  container_port["protocol"] = "TCP";
  container["ports"] = json::array({container_port});
  json probe = json::object();
  probe["tcpSocket"]["port"] = port;
  probe["periodSeconds"] = kReadinessPeriodSeconds;
  container["readinessProbe"] = probe;

  json spec = json::object();
  spec["replicas"] = 1;
  spec["selector"]["matchLabels"] = job_selector(in);
  spec["template"] = tmpl;
  json deployment = json::object();
  deployment["apiVersion"] = "apps/v1";
  deployment["kind"] = "Deployment";
  deployment["metadata"] = server_metadata(in, labels);
  deployment["spec"] = spec;
  return deployment;
}

nlohmann::ordered_json build_server_service(const ManifestInput& in, int port) {
  check_port(port);
  const json labels = server_labels(build_pod_template(in)["metadata"]["labels"], port);
  json service_port = json::object();
  service_port["name"] = "serve";
  service_port["protocol"] = "TCP";
  service_port["port"] = port;
  service_port["targetPort"] = port;
  json spec = json::object();
  spec["type"] = "ClusterIP";
  spec["selector"] = job_selector(in);
  spec["ports"] = json::array({service_port});
  json service = json::object();
  service["apiVersion"] = "v1";
  service["kind"] = "Service";
  service["metadata"] = server_metadata(in, labels);
  service["spec"] = spec;
  return service;
}

}  // namespace kinetic::gke
