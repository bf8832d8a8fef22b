#include "backend/gke/kueue.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "backend/gke/kueue_fair.h"
#include "backend/gke/names.h"
#include "core/error.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

// What every queue object kinetic writes carries, so that `up --queue off` finds its own.
json queue_metadata(const std::string& name) {
  return {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", kKueueManagedBy}}}};
}

// The quota of one accelerator: what its pools can hold at most.
struct AcceleratorQuota {
  Accelerator accelerator;
  long chips = 0;
};

std::map<std::string, AcceleratorQuota> quotas_of(const std::vector<PoolRow>& pools) {
  std::map<std::string, AcceleratorQuota> quotas;
  for (const auto& row : pools) {
    if (row.accelerator.empty()) continue;  // the default pool, or a pool kinetic did not make
    Accelerator a = resolve_accelerator(row.accelerator);
    if (a.resource_name.empty()) continue;  // cpu: nothing Kueue counts
    auto& q = quotas.try_emplace(a.name, AcceleratorQuota{a, 0}).first->second;
    q.chips += static_cast<long>(row.pool.max_nodes) * a.chips_per_host;
  }
  return quotas;
}

json flavor_object(const Accelerator& a) {
  json labels = json::object();
  for (const auto& [key, value] : a.node_selector) labels[key] = value;
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "ResourceFlavor"},
          {"metadata", queue_metadata(queue_name(a.name))},
          {"spec", {{"nodeLabels", labels}}}};
}

json cluster_queue_object(const AcceleratorQuota& q, bool fair) {
  const std::string name = queue_name(q.accelerator.name);
  const std::string resource = q.accelerator.resource_name;
  json flavor = {{"name", name},
                 {"resources", {{{"name", resource}, {"nominalQuota", std::to_string(q.chips)}}}}};
  json cq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
             {"kind", "ClusterQueue"},
             {"metadata", queue_metadata(name)},
             {"spec",
              {// Every namespace's LocalQueue may point here, as xpk's does.
               {"namespaceSelector", json::object()},
               // A job that does not fit does not hold back a smaller one behind it (Kueue's
               // default, said so that the page that explains it can be trusted).
               {"queueingStrategy", "BestEffortFIFO"},
               {"preemption", {{"withinClusterQueue", "LowerPriority"}}},
               {"resourceGroups", {{{"coveredResources", {resource}}, {"flavors", {flavor}}}}}}}};
  // Waiting jobs ordered by their LocalQueue's (their namespace's) recent usage first
  // (apis/kueue/v1beta2/clusterqueue_types.go AdmissionScope; kueue_fair.h).
  if (fair) cq["spec"]["admissionScope"] = {{"admissionMode", kFairAdmissionMode}};
  return cq;
}

json priority_class_object(const std::string& level, int value) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "WorkloadPriorityClass"},
          {"metadata", queue_metadata("kinetic-" + level)},
          {"value", value},
          {"description", "kinetic run --priority " + level}};
}

json local_queue_object(const Accelerator& a, const std::string& ns) {
  json metadata = queue_metadata(queue_name(a.name));
  metadata["namespace"] = ns;
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "LocalQueue"},
          {"metadata", metadata},
          {"spec", {{"clusterQueue", queue_name(a.name)}}}};
}

}  // namespace

const Release& kueue_release() {
  static const Release release{
      .name = "Kueue",
      .version = kKueueVersion,
      .sha256 = kKueueManifestsSha256,
      .url = std::string("https://github.com/kubernetes-sigs/kueue/releases/download/") +
             kKueueVersion + "/manifests.yaml",
      .env = "KINETIC_KUEUE_MANIFESTS",
      .flag = "--kueue-manifests",
      .ns = kKueueNamespace,
      .deployment = "kueue-controller-manager",
      .crd = "workloads.kueue.x-k8s.io",
      .image = "/kueue:",
      .change = "kueue",
      .version_annotation = "kinetic.dev/kueue-version",
  };
  return release;
}

std::string queue_name(const std::string& accelerator) {
  return "kinetic-" + accelerator;
}

const std::vector<std::pair<std::string, int>>& priority_levels() {
  static const std::vector<std::pair<std::string, int>> levels = {
      {"low", 250}, {"normal", 500}, {"high", 750}};
  return levels;
}

std::vector<json> queue_objects(const std::vector<PoolRow>& pools, const std::string& ns,
                                bool fair) {
  std::vector<json> objects;
  for (const auto& [level, value] : priority_levels())
    objects.push_back(priority_class_object(level, value));
  for (const auto& [name, quota] : quotas_of(pools)) {
    objects.push_back(flavor_object(quota.accelerator));
    objects.push_back(cluster_queue_object(quota, fair));
    objects.push_back(local_queue_object(quota.accelerator, ns));
  }
  return objects;
}

namespace {

std::string admission_mode_of(const json& cluster_queue) {
  const json spec = cluster_queue.value("spec", json::object());
  const json scope = spec.value("admissionScope", json::object());
  return scope.is_object() ? scope.value("admissionMode", "") : "";
}

std::string quota_of(const json& cluster_queue) {
  const json groups = cluster_queue.value("spec", json::object()).value("resourceGroups", json());
  if (!groups.is_array() || groups.empty()) return "";
  return groups[0]["flavors"][0]["resources"][0].value("nominalQuota", "");
}

// A LocalQueue's namespace, made when `up --namespace NS --queue` names one this cluster does not
// have yet (as a job's first `run` there would: job_identity.cpp).
void ensure_local_queue_namespace(k8s::Client& kube, const std::string& ns,
                                  const std::function<void(ClusterChange)>& report) {
  if (kube.get("/api/v1/namespaces/" + ns)) return;
  try {
    kube.create("/api/v1/namespaces",
                {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
    report({"namespace", ns, "created"});
  } catch (const k8s::ApiError& e) {
    if (e.code() != 409) throw;  // made meanwhile
  }
}

// Applies OBJECTS (queue_objects') and reports each, or, with ONLY_CHANGES, only those created
// and the ClusterQueues whose quota changed.
void apply_queue_objects(k8s::Client& kube, const std::vector<json>& objects, const std::string& ns,
                         bool only_changes, const std::function<void(ClusterChange)>& report) {
  for (const json& object : objects) {
    const std::string path = k8s::object_path(object, ns);
    const std::optional<json> before = kube.get(path);
    const bool cluster_queue = object["kind"] == "ClusterQueue";
    const bool changed =
        !before || (cluster_queue && (quota_of(*before) != quota_of(object) ||
                                      admission_mode_of(*before) != admission_mode_of(object)));
    if (only_changes && !changed) continue;
    if (!before && object["kind"] == "LocalQueue") ensure_local_queue_namespace(kube, ns, report);
    kube.apply(path, object, "kinetic");
    // `--queue on` after `--queue fair`: the mode goes whichever manager set it (an apply that
    // leaves a field out drops only what kinetic owned). A merge patch's null removes it; an
    // apply's null is refused by the ClusterQueue's schema (gke-conformance.md).
    if (cluster_queue && before && admission_mode_of(object).empty() &&
        !admission_mode_of(*before).empty())
      kube.merge_patch(path, {{"spec", {{"admissionScope", nullptr}}}});
    std::string what = object["metadata"].value("name", "");
    if (object["kind"] == "ClusterQueue") {
      const json& quota = object["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0];
      what += " (" + quota.value("nominalQuota", "") + " " + quota.value("name", "") +
              (admission_mode_of(object).empty() ? "" : ", fair sharing between namespaces") + ")";
    } else if (object["kind"] == "LocalQueue") {
      what += " (namespace " + ns + ")";
    } else if (object["kind"] == "WorkloadPriorityClass") {
      what += " (" + std::to_string(object.value("value", 0)) + ")";
    }
    std::string kind = object["kind"];
    report({kind, what, before ? "updated" : "created"});
  }
}

const std::string kMine = std::string("app.kubernetes.io/managed-by=") + kKueueManagedBy;

}  // namespace

void ensure_queues(const Session& session, k8s::Client& kube, const std::string& source,
                   const std::vector<PoolRow>& pools, const std::string& ns, bool fair,
                   const std::function<void(ClusterChange)>& report) {
  const Release& release = kueue_release();
  // At install, the configuration is edited before it is applied: the controller starts with
  // it. An installed one is restarted only if its configuration lacks it.
  std::function<void(json&)> edit;
  if (fair) edit = edit_for_fair_sharing;
  report(ensure_release(release, session, kube, manifests_source(release, source, *session.env),
                        edit));
  // `--queue on` leaves the configuration as it is: without the mode on a ClusterQueue, Kueue's
  // admissionFairSharing changes nothing.
  if (fair) ensure_fair_sharing_config(session, kube, report);
  apply_queue_objects(kube, queue_objects(pools, ns, fair), ns, false, report);
}

void follow_pools(k8s::Client& kube, const std::vector<PoolRow>& pools, const std::string& ns,
                  const std::function<void(ClusterChange)>& report) {
  const std::string queues = std::string(kKueueApi) + "/clusterqueues";
  std::vector<json> ours;
  try {
    ours = kube.list(queues, kMine).items;
  } catch (const k8s::ApiError& e) {
    // 404: no Kueue, no queues to follow the pools. 403: whoever changes the pools may not
    // manage the queues; their administrator runs `up --queue on` (docs/capacity.md).
    if (e.code() != 404 && e.code() != 403) throw;
  }
  if (ours.empty()) return;  // queues are off
  // The queues stay in the mode `up` set them in.
  const bool fair = std::any_of(ours.begin(), ours.end(), [](const json& cq) {
    return admission_mode_of(cq) == kFairAdmissionMode;
  });
  const std::vector<json> objects = queue_objects(pools, ns, fair);
  apply_queue_objects(kube, objects, ns, true, report);
  std::set<std::string> wanted;
  for (const json& object : objects) wanted.insert(object["metadata"].value("name", ""));
  for (const json& cq : ours) {
    const std::string name = cq["metadata"].value("name", "");
    if (wanted.count(name)) continue;
    // An accelerator with no pool left: its LocalQueue first (a job still in it stays pending,
    // as on a cluster without its queue), then the ClusterQueue and the flavor.
    const std::pair<const char*, std::string> paths[] = {
        {"LocalQueue", std::string(kKueueApi) + "/namespaces/" + ns + "/localqueues/" + name},
        {"ClusterQueue", queues + "/" + name},
        {"ResourceFlavor", std::string(kKueueApi) + "/resourceflavors/" + name}};
    for (const auto& [kind, path] : paths)
      if (kube.remove(path)) report({kind, name, "deleted"});
  }
}

void remove_queues(k8s::Client& kube, const std::string& ns,
                   const std::function<void(ClusterChange)>& report) {
  if (!kube.get(std::string(kKueueApi)).has_value()) return;  // no Kueue: nothing of ours
  // LocalQueues first: a ClusterQueue a LocalQueue still points at keeps its jobs pending.
  const std::pair<const char*, std::string> collections[] = {
      {"LocalQueue", std::string(kKueueApi) + "/namespaces/" + ns + "/localqueues"},
      {"ClusterQueue", std::string(kKueueApi) + "/clusterqueues"},
      {"ResourceFlavor", std::string(kKueueApi) + "/resourceflavors"},
      {"WorkloadPriorityClass", std::string(kKueueApi) + "/workloadpriorityclasses"},
  };
  for (const auto& [kind, collection] : collections)
    for (const auto& item : kube.list(collection, kMine).items) {
      const std::string name = item["metadata"].value("name", "");
      if (kube.remove(collection + "/" + name)) report({kind, name, "deleted"});
    }
}

std::string local_queue_for(k8s::Client& kube, const std::string& ns,
                            const std::string& accelerator) {
  const std::string name = queue_name(accelerator);
  try {
    if (kube.get(std::string(kKueueApi) + "/namespaces/" + ns + "/localqueues/" + name))
      return name;
  } catch (const k8s::ApiError& e) {
    // A user who may not read LocalQueues cannot be told apart from a cluster without them; the
    // job then goes to the cluster unqueued, as before Kueue.
    if (e.code() != 403) throw;
  }
  return "";
}

void enqueue(json& workload, const std::string& queue, const std::string& priority) {
  workload["metadata"]["labels"][kQueueNameLabel] = queue;
  workload["metadata"]["labels"][kPriorityClassLabel] =
      "kinetic-" + (priority.empty() ? std::string("normal") : priority);
  // Kueue's webhook suspends a labelled Job or JobSet at creation (jobframework
  // ApplyDefaultForSuspend); saying so here keeps a cluster whose webhook is slow or missing
  // from starting it unadmitted.
  workload["spec"]["suspend"] = true;
}

std::string waiting_queue(const json& workload) {
  const json metadata = workload.value("metadata", json::object());
  const std::string queue = metadata.value("labels", json::object()).value(kQueueNameLabel, "");
  if (queue.empty() || metadata.contains("deletionTimestamp")) return "";
  return workload.value("spec", json::object()).value("suspend", false) ? queue : "";
}

std::map<std::string, int> queue_positions(k8s::Client& kube, const std::string& ns,
                                           const std::string& local_queue) {
  std::map<std::string, int> positions;
  std::optional<json> summary;
  try {
    summary = kube.get("/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/" + ns +
                       "/localqueues/" + local_queue + "/pendingworkloads");
  } catch (const k8s::ApiError&) {
    return positions;  // 403, or the visibility server unavailable: the place is unknown
  }
  if (!summary) return positions;
  for (const auto& item : summary->value("items", json::array())) {
    const int position = item.value("positionInClusterQueue", -1) + 1;
    for (const auto& ref : item["metadata"].value("ownerReferences", json::array()))
      if (position > 0) positions[ref.value("name", "")] = position;
  }
  return positions;
}

int preemption_evictions(const std::vector<json>& events) {
  int evictions = 0;
  for (const auto& e : events)
    if (e.value("reason", "") == "Stopped" &&
        e.value("message", "").rfind("Preempted to accommodate", 0) == 0)
      evictions += std::max(1, e.value("count", 1));
  return evictions;
}

bool requeued_after_preemption(k8s::Client& kube, const std::string& ns, const json& workload) {
  return preemption_evictions(kube, ns, workload) > 0;
}

int preemption_evictions(k8s::Client& kube, const std::string& ns, const json& workload) {
  // A list's items carry no kind: a JobSet is told by its replicatedJobs.
  const bool jobset = workload.value("spec", json::object()).contains("replicatedJobs");
  const std::string name = workload.value("metadata", json::object()).value("name", "");
  return preemption_evictions(kube.list(k8s::events_path(ns), {},
                                        std::string("involvedObject.kind=") +
                                            (jobset ? "JobSet" : "Job") +
                                            ",involvedObject.name=" + name)
                                  .items);
}

std::string queued_text(const std::string& queue, int position, bool preempted) {
  const std::string why = preempted ? "preempted by a higher-priority job; " : "";
  if (position <= 0)
    return preempted ? "queued: " + why + "waiting in " + queue : "queued in " + queue;
  const int tens = position % 100;
  const char* suffix = tens >= 11 && tens <= 13 ? "th"
                       : position % 10 == 1     ? "st"
                       : position % 10 == 2     ? "nd"
                       : position % 10 == 3     ? "rd"
                                                : "th";
  return "queued: " + why + std::to_string(position) + suffix + " in line in " + queue;
}

}  // namespace kinetic::gke
