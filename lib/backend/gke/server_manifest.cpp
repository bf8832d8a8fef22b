#include "backend/gke/server_manifest.h"

#include <string>

#include "core/error.h"
#include "job/spec.h"

namespace kinetic::gke {
namespace {

using ManifestJson = nlohmann::ordered_json;

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
ManifestJson server_labels(const ManifestJson& template_labels, int port) {
  ManifestJson labels = template_labels;
  labels[std::string(kServeLabel)] = std::to_string(port);
  return labels;
}

ManifestJson server_metadata(const ManifestInput& in, const ManifestJson& labels) {
  ManifestJson metadata = ManifestJson::object();
  metadata["name"] = k8s_object_name(in.job_id);
  metadata["namespace"] = in.namespace_;
  metadata["labels"] = labels;
  if (!in.annotations.empty()) {
    ManifestJson annotations = ManifestJson::object();
    for (const auto& [key, value] : in.annotations) annotations[key] = value;
    metadata["annotations"] = annotations;
  }
  return metadata;
}

ManifestJson job_selector(const ManifestInput& in) {
  ManifestJson selector = ManifestJson::object();
  selector["kinetic.dev/job"] = in.job_id;
  return selector;
}

}  // namespace

nlohmann::ordered_json build_server_deployment(const ManifestInput& in, int port) {
  check_port(port);
  ManifestJson tmpl = build_pod_template(in);
  const ManifestJson labels = server_labels(tmpl["metadata"]["labels"], port);
  tmpl["metadata"]["labels"] = labels;
  // A Deployment's pods may only restart Always (DeploymentSpec.template); the bootstrap,
  // told by spec.ManifestJson that it serves, counts no attempts and gives no verdict.
  tmpl["spec"]["restartPolicy"] = "Always";
  ManifestJson& container = tmpl["spec"]["containers"][0];
  ManifestJson container_port = ManifestJson::object();
  container_port["containerPort"] = port;
  container_port["protocol"] = "TCP";
  container["ports"] = ManifestJson::array({container_port});
  ManifestJson probe = ManifestJson::object();
  probe["tcpSocket"]["port"] = port;
  probe["periodSeconds"] = kReadinessPeriodSeconds;
  container["readinessProbe"] = probe;

  ManifestJson spec = ManifestJson::object();
  spec["replicas"] = 1;
  spec["selector"]["matchLabels"] = job_selector(in);
  spec["template"] = tmpl;
  ManifestJson deployment = ManifestJson::object();
  deployment["apiVersion"] = "apps/v1";
  deployment["kind"] = "Deployment";
  deployment["metadata"] = server_metadata(in, labels);
  deployment["spec"] = spec;
  return deployment;
}

nlohmann::ordered_json build_server_service(const ManifestInput& in, int port) {
  check_port(port);
  const ManifestJson labels = server_labels(build_pod_template(in)["metadata"]["labels"], port);
  ManifestJson service_port = ManifestJson::object();
  service_port["name"] = "serve";
  service_port["protocol"] = "TCP";
  service_port["port"] = port;
  service_port["targetPort"] = port;
  ManifestJson spec = ManifestJson::object();
  spec["type"] = "ClusterIP";
  spec["selector"] = job_selector(in);
  spec["ports"] = ManifestJson::array({service_port});
  ManifestJson service = ManifestJson::object();
  service["apiVersion"] = "v1";
  service["kind"] = "Service";
  service["metadata"] = server_metadata(in, labels);
  service["spec"] = spec;
  return service;
}

}  // namespace kinetic::gke
