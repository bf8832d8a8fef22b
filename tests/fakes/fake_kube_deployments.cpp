// The fake's Deployment controller and readiness probes (docs/fakes.md "Deployments"): what the
// Deployment and ReplicaSet controllers do for a Deployment of kinetic's kind (a pod from the
// template, remade when it ends or is deleted, status.replicas/readyReplicas), and what the
// kubelet's prober does for a container with a tcpSocket readinessProbe.

#include <unistd.h>

#include <cstdio>
#include <functional>

#include "core/socket.h"
#include "fakes/fake_kube_internal.h"

namespace kinetic::fakes {

using json = nlohmann::json;
using namespace kube;

namespace {

const ResourceType& deployments_type() {
  return *find_type("apps", "v1", "deployments");
}
const ResourceType& deployment_pods_type() {
  return *find_type("", "v1", "pods");
}

// The system controllers the fake stands in for (JobSet's and Kueue's, installed by `kinetic up`)
// run no process here: their Deployments are counted available without a pod, as before
// Deployments made pods.
bool runs_no_pods(const json& d) {
  const std::string ns = d["metadata"].value("namespace", std::string());
  return ns == "jobset-system" || ns == "kueue-system" || ns == "kube-system";
}

bool condition_true(const json& pod, const std::string& type) {
  for (const auto& c : pod["status"].value("conditions", json::array()))
    if (c.value("type", "") == type && c.value("status", "") == "True") return true;
  return false;
}

// The pod-template-hash label the Deployment controller gives its ReplicaSet and pods: a hash
// of the template, 10 characters of the safe alphabet (kubernetes pkg/controller ComputeHash).
std::string template_hash(const json& tmpl) {
  static const char* safe = "bcdfghjklmnpqrstvwxz2456789";
  std::size_t h = std::hash<std::string>{}(tmpl.dump());
  std::string out;
  for (int i = 0; i < 10; ++i, h /= 27) out += safe[h % 27];
  return out;
}

json available_condition(bool available, const std::string& now) {
  return {{"type", "Available"},
          {"status", available ? "True" : "False"},
          {"reason", available ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable"},
          {"message", available ? "Deployment has minimum availability."
                                : "Deployment does not have minimum availability."},
          {"lastUpdateTime", now},
          {"lastTransitionTime", now}};
}

json progressing_condition(const std::string& replica_set, bool complete, const std::string& now) {
  return {{"type", "Progressing"},
          {"status", "True"},
          {"reason", complete ? "NewReplicaSetAvailable" : "ReplicaSetUpdated"},
          {"message", "ReplicaSet \"" + replica_set + "\" " +
                          (complete ? "has successfully progressed." : "is progressing.")},
          {"lastUpdateTime", now},
          {"lastTransitionTime", now}};
}

// The port of a pod's tcpSocket readiness probe; nullopt: no probe (Ready once it runs).
std::optional<int> readiness_port(const json& pod) {
  const json& c = pod["spec"]["containers"][0];
  if (!c.contains("readinessProbe")) return std::nullopt;
  return c["readinessProbe"]["tcpSocket"].value("port", 0);
}

}  // namespace

bool FakeKube::Impl::has_readiness_probe(const json& pod) {
  return readiness_port(pod).has_value();
}

void FakeKube::Impl::set_pod_ready(json& pod, bool ready) {
  auto& status = pod["status"];
  const auto now = rfc3339(SysClock::now());
  const std::string container = pod["spec"]["containers"][0].value("name", std::string());
  for (auto& c : status["conditions"]) {
    const std::string type = c.value("type", "");
    if (type != "Ready" && type != "ContainersReady") continue;
    c["status"] = ready ? "True" : "False";
    c["lastTransitionTime"] = now;
    if (ready) {
      c.erase("reason");
      c.erase("message");
    } else {
      c["reason"] = "ContainersNotReady";
      c["message"] = "containers with unready status: [" + container + "]";
    }
  }
  // A pod the kubelet has not started has no containerStatuses yet: none is made here (a null
  // one would be a shape no API server returns).
  if (status.contains("containerStatuses"))
    for (auto& cs : status["containerStatuses"]) cs["ready"] = ready;
  update(deployment_pods_type(), pod);
}

void FakeKube::Impl::reconcile_deployments() {
  for (auto* dp : list(deployments_type(), "")) {
    json& d = *dp;
    if (runs_no_pods(d)) {
      mark_deployment_available(d);
      continue;
    }
    const std::string ns = d["metadata"].value("namespace", std::string());
    const std::string name = d["metadata"].value("name", std::string());
    const json& tmpl = d["spec"]["template"];
    const std::string hash = template_hash(tmpl);
    const std::string replica_set = name + "-" + hash;
    auto& rs_uid = deployment_replica_sets[d["metadata"].value("uid", std::string())];
    if (rs_uid.empty()) rs_uid = new_uid();
    int active = 0, ready = 0;
    for (auto* p : list(deployment_pods_type(), ns)) {
      bool owned = false;
      for (const auto& ref : (*p)["metadata"].value("ownerReferences", json::array()))
        owned = owned || ref.value("uid", "") == rs_uid;
      const std::string phase = (*p)["status"].value("phase", std::string());
      if (!owned || phase == "Succeeded" || phase == "Failed" ||
          (*p)["metadata"].contains("deletionTimestamp"))
        continue;
      ++active;
      if (condition_true(*p, "Ready")) ++ready;
    }
    const int replicas = d["spec"].value("replicas", 1);
    for (; active < replicas; ++active) {
      json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
      auto& md = pod["metadata"];
      md["generateName"] = replica_set + "-";
      md["labels"] = tmpl["metadata"].value("labels", json::object());
      md["labels"]["pod-template-hash"] = hash;
      md["annotations"] = tmpl["metadata"].value("annotations", json::object());
      md["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                {"kind", "ReplicaSet"},
                                {"name", replica_set},
                                {"uid", rs_uid},
                                {"controller", true},
                                {"blockOwnerDeletion", true}}};
      pod["spec"] = tmpl["spec"];
      try {
        create(deployment_pods_type(), ns, std::move(pod), false);
      } catch (const ApiError&) {
        break;  // e.g. its service account is missing: tried again on the next pass
      }
    }
    set_deployment_status(d, replica_set, active, ready);
  }
}

void FakeKube::Impl::set_deployment_status(json& d, const std::string& replica_set, int replicas,
                                           int ready) {
  const long generation = d["metadata"].value("generation", 1L);
  const json& old = d["status"];
  const bool available = ready >= d["spec"].value("replicas", 1);
  if (old.is_object() && old.value("observedGeneration", 0L) == generation &&
      old.value("replicas", -1) == replicas && old.value("readyReplicas", 0) == ready)
    return;  // unchanged: no MODIFIED event, no new pass
  const auto now = rfc3339(SysClock::now());
  json status = {
      {"observedGeneration", generation},
      {"replicas", replicas},
      {"updatedReplicas", replicas},
      {"conditions",
       {available_condition(available, now), progressing_condition(replica_set, available, now)}}};
  // The API server leaves out a count that is zero (omitempty).
  if (ready > 0) status["readyReplicas"] = ready;
  if (ready > 0) status["availableReplicas"] = ready;
  if (replicas > ready) status["unavailableReplicas"] = replicas - ready;
  d["status"] = status;
  update(deployments_type(), d);
}

void FakeKube::Impl::mark_deployment_available(json& d) {
  const long generation = d["metadata"].value("generation", 1L);
  if (d["status"].is_object() && d["status"].value("observedGeneration", 0L) == generation) return;
  const int replicas = d["spec"].value("replicas", 1);
  const auto now = rfc3339(SysClock::now());
  const std::string name = d["metadata"].value("name", std::string());
  d["status"] = {
      {"observedGeneration", generation},
      {"replicas", replicas},
      {"updatedReplicas", replicas},
      {"readyReplicas", replicas},
      {"availableReplicas", replicas},
      {"conditions", {available_condition(true, now), progressing_condition(name, true, now)}}};
  update(deployments_type(), d);
}

void FakeKube::Impl::probe_readiness(std::optional<Steady::time_point>& next) {
  for (auto* p : list(deployment_pods_type(), "")) {
    json& pod = *p;
    const std::optional<int> port = readiness_port(pod);
    if (!port || condition_true(pod, "Ready")) continue;
    const std::string uid = pod["metadata"].value("uid", std::string());
    auto it = pods.find(uid);
    if (it == pods.end() || !it->second->running || pod["metadata"].contains("deletionTimestamp"))
      continue;
    const int fd = connect_loopback(*port);
    if (fd < 0) {
      // Tried again soon: the kubelet probes every periodSeconds; the fake every 50 ms.
      const auto again = Steady::now() + std::chrono::milliseconds(50);
      if (!next || again < *next) next = again;
      continue;
    }
    ::close(fd);
    set_pod_ready(pod, true);
  }
}

}  // namespace kinetic::fakes
