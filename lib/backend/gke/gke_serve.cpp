// `kinetic serve` on the gke backend (docs/serving.md "Servers on gke"): a server is its Secret,
// a Deployment of one replica and a ClusterIP Service (server_manifest.h), the last two owned by
// the Deployment so that deleting it (the auto-down controller after --idle-stop) deletes them;
// its status is the Deployment's (server_state.h) until its record holds a verdict; its URL a
// port-forward to its Ready pod, chosen again for each new connection.

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "backend/gke/auto_down.h"
#include "backend/gke/cluster_access.h"
#include "backend/gke/create_or_adopt.h"
#include "backend/gke/gke_backend.h"
#include "backend/gke/job_manifest.h"
#include "backend/gke/names.h"
#include "backend/gke/pod_port_dialer.h"
#include "backend/gke/server_manifest.h"
#include "backend/gke/server_state.h"
#include "core/backoff.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/manifest.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

// Makes the Deployment the owner of the object at PATH (kind KIND), so that Kubernetes' garbage
// collector deletes it with the Deployment (metadata.ownerReferences; gke-conformance.md).
// blockOwnerDeletion is left unset: it matters only to a foreground deletion, and setting it
// needs `update` on the Deployment's finalizers, a right kinetic does not ask for.
void owned_by_deployment(k8s::Client& k, const std::string& path, const std::string& kind,
                         const json& deployment) {
  const json& md = deployment["metadata"];
  const json owner = {{"apiVersion", "apps/v1"},
                      {"kind", "Deployment"},
                      {"name", md.value("name", "")},
                      {"uid", md.value("uid", "")},
                      {"controller", true}};
  k.apply(path,
          {{"apiVersion", "v1"},
           {"kind", kind},
           {"metadata", {{"name", md.value("name", "")}, {"ownerReferences", {owner}}}}},
          "kinetic");
}

}  // namespace

void GkeBackend::check_server(const ServeSpec& serve) {
  // An idle-stopped server still holds its node until its Deployment is deleted, which only
  // the auto-down controller does (docs/decisions.md): without it --idle-stop would save
  // nothing.
  if (serve.idle_stop_seconds > 0 && !read_auto_down(kube(), session_.target.ns))
    throw Error(Errc::usage,
                "--idle-stop on gke needs the cluster's auto-down controller, which deletes the "
                "idle server: run `kinetic up --auto-down 1h` first, or leave --idle-stop out");
}

void GkeBackend::submit_server(const JobSpec& spec,
                               const std::map<std::string, std::string>& secrets) {
  k8s::Client& k = kube();
  const std::string ns = session_.target.ns;
  const std::string name = k8s_object_name(spec.id);
  const int port = spec.serve->port;
  std::vector<std::string> posted;  // objects asked for, created or not (the answer may be lost)
  {
    std::lock_guard lock(cancel_mu_);  // request_cancel (Ctrl-C) deletes its Deployment too
    servers_.insert(spec.id);
  }
  try {
    stage(spec, secrets, posted);  // spec.json and the Secret; the Job it returns is not sent
    const ManifestInput in = manifest_input(spec, session_.bucket(), ns);
    posted.push_back(k8s::service_path(ns, name));
    create_or_adopt(k, k8s::services_path(ns), json::parse(build_server_service(in, port).dump()));
    posted.push_back(k8s::deployment_path(ns, name));
    const json deployment = create_or_adopt(k, k8s::deployments_path(ns),
                                            json::parse(build_server_deployment(in, port).dump()));
    owned_by_deployment(k, k8s::service_path(ns, name), "Service", deployment);
    // stage() made a Secret only for --env values (manifest.h build_secret).
    if (std::find(posted.begin(), posted.end(), k8s::secret_path(ns, name)) != posted.end())
      owned_by_deployment(k, k8s::secret_path(ns, name), "Secret", deployment);
  } catch (...) {
    // Nothing half-started stays behind: what exists of ours goes, the Deployment first.
    for (auto it = posted.rbegin(); it != posted.rend(); ++it) remove_if_ours(k, *it, spec.id);
    throw;
  }
}

std::optional<JobStatus> GkeBackend::server_status(const std::string& id) {
  auto items = list_or_empty(kube(), k8s::deployments_path(session_.target.ns), job_selector(id));
  if (items.empty()) return std::nullopt;
  JobStatus st = status_from_deployment(items.front());
  // Stopped for --idle-stop, its pod waits to be deleted: the record has its verdict.
  if (st.state != kRunning)
    if (auto reported = results_status(id); reported && reported->final && reported->terminal())
      return reported;
  return st;
}

std::vector<std::string> GkeBackend::delete_server_objects(const std::string& id, bool dry_run) {
  k8s::Client& k = kube();
  const std::string ns = session_.target.ns;
  const std::string name = k8s_object_name(id);
  std::vector<std::string> removed;
  // The Deployment's pods go with it (propagationPolicy=Background, k8s::Client::remove).
  for (const std::string& path : {k8s::deployment_path(ns, name), k8s::service_path(ns, name)})
    if (dry_run ? k.get(path).has_value() : k.remove(path)) removed.push_back(path);
  return removed;
}

void GkeBackend::wait_for_server_pods_gone(const std::string& id) {
  // The pods' 30 s grace period (terminationGracePeriodSeconds), and some.
  constexpr double kGoneWithinSeconds = 45;
  constexpr BackoffCurve kLookAgain{std::chrono::milliseconds(100), std::chrono::seconds(1), 2.0};
  const double deadline = now_unix() + kGoneWithinSeconds;
  for (int attempt = 1; now_unix() < deadline; ++attempt) {
    if (list_or_empty(kube(), k8s::pods_path(session_.target.ns), job_selector(id)).empty()) return;
    std::this_thread::sleep_for(kLookAgain.delay(attempt));
  }
}

std::unique_ptr<PortDialer> GkeBackend::server_port_dialer(const std::string& job) {
  const std::string ns = session_.target.ns;
  const std::optional<std::string> first =
      ready_server_pod(kube().list(k8s::pods_path(ns), job_selector(job)).items);
  if (!first)
    throw Error(Errc::not_found, job + " has no Ready pod yet: `kinetic serve status " + job +
                                     "` says why it waits");
  PodTarget target;
  target.ns = ns;
  target.job = job;
  target.pod = *first;
  const ClusterAccess access = cluster_access(session_);
  target.server = access.server;
  target.ca_pem = access.ca_pem;
  // Connections are dialled from their own threads: the choice reads the pods on a connection
  // of its own (kube()'s is not shared between threads), one at a time.
  auto own = std::make_shared<KubeConnection>(connect_kube(session_, access));
  auto mu = std::make_shared<std::mutex>();
  const std::string fallback = *first;
  target.choose_pod = [own, mu, ns, job, fallback] {
    std::lock_guard lock(*mu);
    return ready_server_pod(own->client->list(k8s::pods_path(ns), job_selector(job)).items)
        .value_or(fallback);
  };
  // The forward ends with the Deployment (not with one of its pods), read on that connection
  // too: a foreground serve streams the log on kube()'s meanwhile.
  const std::string path = k8s::deployment_path(ns, k8s_object_name(job));
  return pod_port_dialer(std::move(target), session_.credentials, session_.verbosity,
                         [own, mu, path] {
                           std::lock_guard lock(*mu);
                           return own->client->get(path);
                         });
}

}  // namespace kinetic::gke
