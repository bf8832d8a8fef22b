// Kueue v0.17.1 in the fake cluster (docs/fakes.md "Kueue"): once its release is applied (the
// CRDs, then the controller's Deployment available), a batch/v1 Job or a JobSet labelled
// kueue.x-k8s.io/queue-name is suspended at creation (the webhook's ApplyDefaultForSuspend), gets
// a Workload (pkg/controller/jobframework: one per owner, named KIND-NAME-HASH), and is admitted
// whole when its ClusterQueue's nominal quota has room: highest priority first, then the oldest
// (BestEffortFIFO: one that does not fit does not hold back a smaller one behind it). Admission
// unsuspends it with the flavor's nodeLabels in its pods' nodeSelector; its quota is released
// when it finishes or is deleted. A higher-priority Workload that does not fit evicts admitted
// lower-priority ones of its ClusterQueue (withinClusterQueue: LowerPriority): they are suspended
// again, and requeued with their quota released once their pods are gone. The visibility API
// answers each pending Workload's position. A ClusterQueue in UsageBasedAdmissionFairSharing mode,
// with admissionFairSharing in the configuration the controller started with, admits by its
// LocalQueues' usage first (simplified: all it was admitted with so far, no decay).
#include <openssl/evp.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fakes/fake_kube_internal.h"

namespace kinetic::fakes {

using json = nlohmann::json;
using kube::ApiError;
using kube::ResourceType;
using kube::SysClock;

namespace {

constexpr const char* kKueueQueueLabel = "kueue.x-k8s.io/queue-name";

const ResourceType& kueue_type(const char* plural) {
  return *kube::find_type("kueue.x-k8s.io", "v1beta2", plural);
}

std::string kueue_sha1_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha1(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

// jobframework.GetWorkloadNameForOwnerWithGVK: "job-NAME-" and 5 hex digits of the SHA-1 of the
// owner's kind, group, name and uid.
std::string kueue_workload_name(const json& owner, const std::string& group) {
  std::string kind = owner.value("kind", "");
  const std::string name = owner["metadata"].value("name", "");
  const std::string uid = owner["metadata"].value("uid", "");
  std::string prefix = kube::lower(kind) + "-" + name;
  prefix = prefix.substr(0, 253 - 1 - 5);
  return prefix + "-" + kueue_sha1_hex(kind + "\n" + group + "\n" + name + "\n" + uid).substr(0, 5);
}

long kueue_count(const json& v) {
  if (v.is_number()) return v.get<long>();
  if (v.is_string()) return std::atol(v.get<std::string>().c_str());
  return 0;
}

// What one pod of TEMPLATE asks for: each container's requests, its limits where it has no
// request (workload.UseLimitsAsMissingRequestsInPod), summed.
std::map<std::string, long> kueue_pod_requests(const json& pod_spec) {
  std::map<std::string, long> out;
  for (const auto& c : pod_spec.value("containers", json::array())) {
    json resources = c.value("resources", json::object());
    json requests = resources.value("requests", json::object());
    const json limits = resources.value("limits", json::object());
    for (auto& [k, v] : limits.items())
      if (!requests.contains(k)) requests[k] = v;
    for (auto& [k, v] : requests.items()) out[k] += kueue_count(v);
  }
  return out;
}

// The Workload's podSets for a Job ("main") or a JobSet (one per replicated job).
json kueue_pod_sets(const json& owner) {
  json sets = json::array();
  const json& spec = owner["spec"];
  if (owner.value("kind", "") == "Job") {
    sets.push_back({{"name", "main"},
                    {"count", spec.value("parallelism", 1)},
                    {"template", spec.value("template", json::object())}});
    return sets;
  }
  for (const auto& rj : spec.value("replicatedJobs", json::array())) {
    const json job_spec = rj["template"].value("spec", json::object());
    sets.push_back({{"name", rj.value("name", "")},
                    {"count", rj.value("replicas", 1) * job_spec.value("parallelism", 1)},
                    {"template", job_spec.value("template", json::object())}});
  }
  return sets;
}

std::map<std::string, long> kueue_workload_requests(const json& wl) {
  std::map<std::string, long> total;
  for (const auto& ps : wl["spec"].value("podSets", json::array())) {
    const long count = ps.value("count", 1);
    for (auto& [k, v] : kueue_pod_requests(ps["template"].value("spec", json::object())))
      total[k] += v * count;
  }
  return total;
}

bool kueue_has_condition(const json& obj, const std::string& type) {
  for (const auto& c : obj["status"].value("conditions", json::array()))
    if (c.value("type", "") == type && c.value("status", "") == "True") return true;
  return false;
}

// Sets a metav1.Condition; the transition time moves only when its status does.
void kueue_set_condition(json& status, const std::string& type, const std::string& value,
                         const std::string& reason, const std::string& message) {
  if (!status.contains("conditions")) status["conditions"] = json::array();
  for (auto& c : status["conditions"])
    if (c.value("type", "") == type) {
      if (c.value("status", "") != value) c["lastTransitionTime"] = kube::rfc3339(SysClock::now());
      c["status"] = value;
      c["reason"] = reason;
      c["message"] = message;
      return;
    }
  status["conditions"].push_back({{"type", type},
                                  {"status", value},
                                  {"reason", reason},
                                  {"message", message},
                                  {"observedGeneration", 1},
                                  {"lastTransitionTime", kube::rfc3339(SysClock::now())}});
}

bool kueue_owner_finished(const json& owner) {
  if (owner.value("kind", "") == "JobSet")
    return owner["status"].is_object() && owner["status"].contains("terminalState");
  return kueue_has_condition(owner, "Complete") || kueue_has_condition(owner, "Failed");
}

// The order Kueue's queues keep: higher priority first, then the oldest.
bool kueue_before(const json* a, const json* b) {
  const int pa = (*a)["spec"].value("priority", 0), pb = (*b)["spec"].value("priority", 0);
  if (pa != pb) return pa > pb;
  const std::string ta = (*a)["metadata"].value("creationTimestamp", "");
  const std::string tb = (*b)["metadata"].value("creationTimestamp", "");
  if (ta != tb) return ta < tb;
  return (*a)["metadata"].value("name", "") < (*b)["metadata"].value("name", "");
}

std::string kueue_local_queue_key(const json& wl) {
  return wl["metadata"].value("namespace", "") + "/" + wl["spec"].value("queueName", "");
}

// Whether Kueue's configuration file turns admission fair sharing on: a top-level
// admissionFairSharing key with something under it (a commented-out one, as in the release's
// own file, is not).
bool kueue_config_has_fair_sharing(const std::string& config) {
  std::size_t at = 0;
  while ((at = config.find("admissionFairSharing:", at)) != std::string::npos) {
    const bool line_start = at == 0 || config[at - 1] == '\n';
    at += 21;
    if (!line_start) continue;
    const std::size_t end = config.find('\n', at);
    const std::string rest = config.substr(at, end == std::string::npos ? end : end - at);
    if (rest.find_first_not_of(" ") != std::string::npos)
      return rest.find("null") == std::string::npos;
    return end != std::string::npos && end + 1 < config.size() && config[end + 1] == ' ';
  }
  return false;
}

}  // namespace

bool FakeKube::Impl::kueue_config_fair_sharing() {
  json* d = find(*kube::find_type("apps", "v1", "deployments"), "kueue-system",
                 "kueue-controller-manager");
  if (!d) return false;
  // The controller reads its file once at start (cmd/kueue/main.go), from a subPath mount that
  // is never refreshed: a new pod template is a new pod, which reads it again.
  const std::string started = (*d)["spec"].value("template", json::object()).dump();
  if (started != kueue_started_template) {
    kueue_started_template = started;
    json* cm =
        find(*kube::find_type("", "v1", "configmaps"), "kueue-system", "kueue-manager-config");
    kueue_started_fair =
        cm && kueue_config_has_fair_sharing(
                  (*cm).value("data", json::object()).value("controller_manager_config.yaml", ""));
  }
  return kueue_started_fair;
}

std::vector<json*> FakeKube::Impl::kueue_ordered(std::vector<json*> queue, const json* cq) {
  std::sort(queue.begin(), queue.end(), kueue_before);
  // Kueue ignores the mode when its configuration has no admissionFairSharing
  // (pkg/util/admissionfairsharing ResourceWeights).
  const bool fair =
      cq && (*cq)["spec"].value("admissionScope", json::object()).is_object() &&
      (*cq)["spec"].value("admissionScope", json::object()).value("admissionMode", "") ==
          "UsageBasedAdmissionFairSharing" &&
      kueue_config_fair_sharing();
  if (!fair) return queue;
  std::stable_sort(queue.begin(), queue.end(), [&](const json* a, const json* b) {
    return kueue_local_queue_usage[kueue_local_queue_key(*a)] <
           kueue_local_queue_usage[kueue_local_queue_key(*b)];
  });
  return queue;
}

bool FakeKube::Impl::kueue_running() {
  if (!find(*kube::find_type("apiextensions.k8s.io", "v1", "customresourcedefinitions"), "",
            "workloads.kueue.x-k8s.io"))
    return false;
  json* d = find(*kube::find_type("apps", "v1", "deployments"), "kueue-system",
                 "kueue-controller-manager");
  return d && (*d)["status"].value("availableReplicas", 0) > 0;
}

void FakeKube::Impl::kueue_default_suspend(const ResourceType& rt, json& obj) {
  if (rt.plural != "jobs" && rt.plural != "jobsets") return;
  if (obj["metadata"].value("labels", json::object()).value(kKueueQueueLabel, "").empty()) return;
  if (!kueue_running()) return;
  obj["spec"]["suspend"] = true;
}

std::vector<json*> FakeKube::Impl::kueue_owners() {
  std::vector<json*> owners;
  for (const char* plural : {"jobs", "jobsets"}) {
    const ResourceType* rt = plural == std::string("jobs")
                                 ? kube::find_type("batch", "v1", "jobs")
                                 : kube::find_type("jobset.x-k8s.io", "v1alpha2", "jobsets");
    for (auto* o : list(*rt, ""))
      if (!(*o)["metadata"].value("labels", json::object()).value(kKueueQueueLabel, "").empty())
        owners.push_back(o);
  }
  return owners;
}

// One Workload per queued Job or JobSet; a Workload whose owner is gone goes too (the garbage
// collector, by its ownerReference), and one whose owner finished is Finished.
void FakeKube::Impl::kueue_sync_workloads() {
  const ResourceType& wl_t = kueue_type("workloads");
  std::map<std::string, json*> by_owner;
  for (auto* wl : list(wl_t, ""))
    for (const auto& ref : (*wl)["metadata"].value("ownerReferences", json::array()))
      by_owner[ref.value("uid", "")] = wl;
  std::set<std::string> owners_seen;
  for (auto* op : kueue_owners()) {
    json& owner = *op;
    const std::string uid = owner["metadata"].value("uid", "");
    owners_seen.insert(uid);
    auto it = by_owner.find(uid);
    if (it == by_owner.end()) {
      const bool jobset = owner.value("kind", "") == "JobSet";
      json wl = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "Workload"}};
      wl["metadata"] = {{"name", kueue_workload_name(owner, jobset ? "jobset.x-k8s.io" : "batch")},
                        {"namespace", owner["metadata"].value("namespace", "")},
                        {"labels", {{"kueue.x-k8s.io/job-uid", uid}}},
                        {"ownerReferences",
                         {{{"apiVersion", owner.value("apiVersion", "")},
                           {"kind", owner.value("kind", "")},
                           {"name", owner["metadata"].value("name", "")},
                           {"uid", uid},
                           {"controller", true},
                           {"blockOwnerDeletion", true}}}}};
      wl["spec"] = {{"queueName", owner["metadata"]["labels"][kKueueQueueLabel]},
                    {"podSets", kueue_pod_sets(owner)},
                    {"priority", 0},
                    {"active", true}};
      // The priority class the owner names (jobframework PrepareWorkloadPriority): its value
      // and a reference to it; none, or one that does not exist: 0.
      const std::string priority_class =
          owner["metadata"]["labels"].value("kueue.x-k8s.io/priority-class", "");
      if (json* wpc = priority_class.empty()
                          ? nullptr
                          : find(kueue_type("workloadpriorityclasses"), "", priority_class)) {
        wl["spec"]["priority"] = wpc->value("value", 0);
        wl["spec"]["priorityClassRef"] = {{"group", "kueue.x-k8s.io"},
                                          {"kind", "WorkloadPriorityClass"},
                                          {"name", priority_class}};
      }
      wl["status"] = json::object();
      const std::string ns = wl["metadata"]["namespace"];
      try {
        create(wl_t, ns, std::move(wl), false);
      } catch (const ApiError&) {
      }
      continue;
    }
    json& wl = *it->second;
    if (kueue_owner_finished(owner) && !kueue_has_condition(wl, "Finished")) {
      json status = wl["status"];
      kueue_set_condition(status, "Finished", "True",
                          kueue_has_condition(owner, "Failed") ? "Failed" : "Succeeded",
                          "Job finished");
      wl["status"] = status;
      update(wl_t, wl);
    }
  }
  for (auto& [uid, wl] : by_owner)
    if (!owners_seen.count(uid))
      erase(wl_t, (*wl)["metadata"].value("namespace", ""), (*wl)["metadata"].value("name", ""));
}

// Unsuspends the owner of WL with FLAVOR's nodeLabels in its pods' nodeSelector
// (jobframework's RunWithPodSetsInfo), and says so on it ("Started").
void FakeKube::Impl::kueue_start_owner(const json& wl, const json& flavor,
                                       const std::string& cluster_queue) {
  const json ref = wl["metadata"]["ownerReferences"][0];
  const bool jobset = ref.value("kind", "") == "JobSet";
  const ResourceType& rt = jobset ? *kube::find_type("jobset.x-k8s.io", "v1alpha2", "jobsets")
                                  : *kube::find_type("batch", "v1", "jobs");
  json* owner = find(rt, wl["metadata"].value("namespace", ""), ref.value("name", ""));
  if (!owner) return;
  const json labels = flavor["spec"].value("nodeLabels", json::object());
  auto inject = [&](json& pod_template) {
    for (auto& [k, v] : labels.items()) pod_template["spec"]["nodeSelector"][k] = v;
  };
  if (jobset)
    for (auto& rj : (*owner)["spec"]["replicatedJobs"]) inject(rj["template"]["spec"]["template"]);
  else
    inject((*owner)["spec"]["template"]);
  (*owner)["spec"]["suspend"] = false;
  update(rt, *owner);
  new_event(*owner, "Normal", "Started", "Admitted by clusterQueue " + cluster_queue,
            jobset ? "jobset-kueue-controller" : "job-kueue-controller");
}

namespace {

// Why a request waits in CQ, in the scheduler's words (flavorassigner.go), or "" when it fits.
std::string kueue_no_fit(const std::map<std::string, long>& request, const json& cq,
                         const std::map<std::string, long>& used, std::string* flavor_name) {
  for (const auto& [resource, amount] : request) {
    if (amount == 0) continue;
    bool covered = false;
    for (const auto& rg : cq["spec"].value("resourceGroups", json::array()))
      for (const auto& flavor : rg.value("flavors", json::array()))
        for (const auto& r : flavor.value("resources", json::array())) {
          if (r.value("name", "") != resource) continue;
          covered = true;
          *flavor_name = flavor.value("name", "");
          const long nominal = kueue_count(r["nominalQuota"]);
          const long in_use = used.count(resource) ? used.at(resource) : 0;
          const std::string f = *flavor_name;
          if (amount > nominal)
            return "insufficient quota for " + resource + " in flavor " + f +
                   ", previously considered podsets requests (0) + current podset request (" +
                   std::to_string(amount) + ") > maximum capacity (" + std::to_string(nominal) +
                   ")";
          if (in_use + amount > nominal)
            return "insufficient unused quota for " + resource + " in flavor " + f + ", " +
                   std::to_string(in_use + amount - nominal) + " more needed";
        }
    if (!covered) return "resource " + resource + " unavailable in ClusterQueue";
  }
  return "";
}

}  // namespace

// The scheduler: each ClusterQueue admits its pending Workloads, in its order, while they fit.
void FakeKube::Impl::kueue_admit() {
  const ResourceType& wl_t = kueue_type("workloads");
  std::map<std::string, std::vector<json*>> pending;         // by ClusterQueue
  std::map<std::string, std::map<std::string, long>> used;   // by ClusterQueue
  std::map<std::string, std::map<std::string, int>> counts;  // "pending", "admitted" by CQ
  std::map<std::string, std::vector<json*>> admitted;        // by ClusterQueue
  kueue_requeue_evicted();
  for (auto* wp : list(wl_t, "")) {
    json& wl = *wp;
    const std::string ns = wl["metadata"].value("namespace", "");
    json* lq = find(kueue_type("localqueues"), ns, wl["spec"].value("queueName", ""));
    if (kueue_has_condition(wl, "Finished")) continue;
    if (kueue_has_condition(wl, "QuotaReserved")) {
      const std::string cq = wl["status"]["admission"].value("clusterQueue", "");
      for (auto& [k, v] : kueue_workload_requests(wl)) used[cq][k] += v;
      ++counts[cq]["admitted"];
      admitted[cq].push_back(&wl);
      continue;
    }
    if (!lq) {
      json status = wl["status"];
      kueue_set_condition(status, "QuotaReserved", "False", "Inadmissible",
                          "LocalQueue " + wl["spec"].value("queueName", "") + " doesn't exist");
      if (status != wl["status"]) {
        wl["status"] = status;
        update(wl_t, wl);
      }
      continue;
    }
    const std::string cq = (*lq)["spec"].value("clusterQueue", "");
    pending[cq].push_back(&wl);
  }
  for (auto& [cq_name, queue] : pending) {
    json* cq = find(kueue_type("clusterqueues"), "", cq_name);
    // One at a time, the order taken again after each: an admission adds to its LocalQueue's
    // usage, which in fair sharing moves the rest of that queue back.
    while (!queue.empty()) {
      json* wp = kueue_ordered(queue, cq).front();
      queue.erase(std::find(queue.begin(), queue.end(), wp));
      json& wl = *wp;
      json status = wl["status"];
      const auto request = kueue_workload_requests(wl);
      std::string flavor_name;
      std::string why = cq ? kueue_no_fit(request, *cq, used[cq_name], &flavor_name)
                           : "ClusterQueue " + cq_name + " doesn't exist";
      json* flavor =
          flavor_name.empty() ? nullptr : find(kueue_type("resourceflavors"), "", flavor_name);
      if (why.empty() && !flavor) why = "flavor " + flavor_name + " not found";
      if (!why.empty()) {
        ++counts[cq_name]["pending"];
        std::string message = "couldn't assign flavors to pod set " +
                              wl["spec"]["podSets"][0].value("name", std::string("main")) + ": " +
                              why;
        // It would fit in the nominal quota but for lower-priority workloads admitted before it:
        // they are evicted, and it waits for their quota to come back (scheduler.go).
        if (cq && why.rfind("insufficient unused quota", 0) == 0)
          if (const int preempted = kueue_preempt(wl, *cq, admitted[cq_name], used[cq_name]))
            message += ". Pending the preemption of " + std::to_string(preempted) + " workload(s)";
        kueue_set_condition(status, "QuotaReserved", "False", "Pending", message);
        if (status != wl["status"]) {
          wl["status"] = status;
          update(wl_t, wl);
          new_event(wl, "Warning", "Pending", message, "kueue-admission");
        }
        continue;
      }
      for (const auto& [k, v] : request) used[cq_name][k] += v;
      ++counts[cq_name]["admitted"];
      kueue_reserve(wl, cq_name, flavor_name);
      kueue_start_owner(wl, *flavor, cq_name);
    }
  }
  kueue_publish_counts(counts);
}

// The scheduler's admission of WL into CQ_NAME with FLAVOR_NAME: its status.admission, the
// QuotaReserved and Admitted conditions and their events.
void FakeKube::Impl::kueue_reserve(json& wl, const std::string& cq_name,
                                   const std::string& flavor_name) {
  json status = wl["status"];
  json assignments = json::array();
  for (const auto& ps : wl["spec"]["podSets"]) {
    json flavors = json::object(), usage = json::object();
    const long count = ps.value("count", 1);
    for (auto& [k, v] : kueue_pod_requests(ps["template"].value("spec", json::object()))) {
      flavors[k] = flavor_name;
      usage[k] = std::to_string(v * count);
    }
    assignments.push_back({{"name", ps.value("name", "")},
                           {"flavors", flavors},
                           {"resourceUsage", usage},
                           {"count", count}});
  }
  status["admission"] = {{"clusterQueue", cq_name}, {"podSetAssignments", assignments}};
  for (const auto& [resource, amount] : kueue_workload_requests(wl))
    kueue_local_queue_usage[kueue_local_queue_key(wl)] += amount;
  kueue_set_condition(status, "QuotaReserved", "True", "QuotaReserved",
                      "Quota reserved in ClusterQueue " + cq_name);
  kueue_set_condition(status, "Admitted", "True", "Admitted", "The workload is admitted");
  // An eviction is over once readmitted (SetQuotaReservation resetActiveCondition).
  for (const char* type : {"Evicted", "Preempted"})
    for (const auto& c : wl["status"].value("conditions", json::array()))
      if (c.value("type", "") == type && c.value("status", "") == "True")
        kueue_set_condition(status, type, "False", "QuotaReserved",
                            "Previously: " + c.value("message", ""));
  wl["status"] = status;
  update(kueue_type("workloads"), wl);
  new_event(wl, "Normal", "QuotaReserved",
            "Quota reserved in ClusterQueue " + cq_name + ", wait time since queued was 0s",
            "kueue-admission");
  new_event(wl, "Normal", "Admitted",
            "Admitted by ClusterQueue " + cq_name + ", wait time since reservation was 0s",
            "kueue-admission");
}

// What each ClusterQueue says of its Workloads (COUNTS: "pending", "admitted" by queue).
void FakeKube::Impl::kueue_publish_counts(
    std::map<std::string, std::map<std::string, int>>& counts) {
  for (auto* cqp : list(kueue_type("clusterqueues"), "")) {
    json& cq = *cqp;
    const std::string name = cq["metadata"].value("name", "");
    json status = cq["status"].is_object() ? cq["status"] : json::object();
    status["pendingWorkloads"] = counts[name]["pending"];
    status["reservingWorkloads"] = counts[name]["admitted"];
    status["admittedWorkloads"] = counts[name]["admitted"];
    kueue_set_condition(status, "Active", "True", "Ready", "Can admit new workloads");
    if (status != cq["status"]) {
      cq["status"] = status;
      update(kueue_type("clusterqueues"), cq);
    }
  }
}

namespace {

long kueue_priority(const json& wl) {
  return wl["spec"].value("priority", 0L);
}

std::string kueue_reserved_at(const json& wl) {
  for (const auto& c : wl["status"].value("conditions", json::array()))
    if (c.value("type", "") == "QuotaReserved") return c.value("lastTransitionTime", "");
  return "";
}

// Preemption's candidate order (preemption/common/ordering.go CandidatesOrdering, within one
// ClusterQueue): those already evicted first, then the lowest priority, then the most recently
// admitted.
bool kueue_evict_before(const json* a, const json* b) {
  const bool ea = kueue_has_condition(*a, "Evicted"), eb = kueue_has_condition(*b, "Evicted");
  if (ea != eb) return ea;
  if (kueue_priority(*a) != kueue_priority(*b)) return kueue_priority(*a) < kueue_priority(*b);
  if (kueue_reserved_at(*a) != kueue_reserved_at(*b))
    return kueue_reserved_at(*a) > kueue_reserved_at(*b);
  return (*a)["metadata"].value("uid", "") < (*b)["metadata"].value("uid", "");
}

}  // namespace

// withinClusterQueue: LowerPriority (preemption.go classicalPreemptions, simplified to a greedy
// pick): the candidates, in their order, are taken until PREEMPTOR fits CQ's nominal quota;
// each not yet evicted is evicted. Returns how many it waits for (0: no preemption helps).
int FakeKube::Impl::kueue_preempt(const json& preemptor, const json& cq,
                                  const std::vector<json*>& admitted,
                                  const std::map<std::string, long>& used) {
  if (cq["spec"].value("preemption", json::object()).value("withinClusterQueue", "Never") !=
      "LowerPriority")
    return 0;
  std::vector<json*> candidates;
  for (json* wl : admitted)
    if (kueue_priority(*wl) < kueue_priority(preemptor)) candidates.push_back(wl);
  std::sort(candidates.begin(), candidates.end(), kueue_evict_before);
  const auto request = kueue_workload_requests(preemptor);
  std::map<std::string, long> left = used;
  std::vector<json*> targets;
  std::string flavor;
  for (json* wl : candidates) {
    for (const auto& [k, v] : kueue_workload_requests(*wl)) left[k] -= v;
    targets.push_back(wl);
    if (!kueue_no_fit(request, cq, left, &flavor).empty()) continue;
    for (json* target : targets)
      if (!kueue_has_condition(*target, "Evicted")) kueue_evict(*target, preemptor, cq);
    return static_cast<int>(targets.size());
  }
  return 0;
}

// workload.Evict with SetPreemptedCondition (preemption.go IssuePreemptions), then the job
// reconciler's stopJob: the owner is suspended again, and the Job controller deletes its pods.
void FakeKube::Impl::kueue_evict(json& wl, const json& preemptor, const json& cq) {
  const std::string cq_name = cq["metadata"].value("name", "");
  const std::string message =
      "Preempted to accommodate a workload (UID: " + preemptor["metadata"].value("uid", "") +
      ", JobUID: " +
      preemptor["metadata"]["labels"].value("kueue.x-k8s.io/job-uid", std::string("UNKNOWN")) +
      ") due to prioritization in the ClusterQueue; preemptor path: /" + cq_name +
      "; preemptee path: /" + cq_name;
  json status = wl["status"];
  kueue_set_condition(status, "Evicted", "True", "Preempted", message);
  kueue_set_condition(status, "Preempted", "True", "InClusterQueue", message);
  wl["status"] = status;
  update(kueue_type("workloads"), wl);
  new_event(wl, "Normal", "EvictedDueToPreempted", message, "kueue-admission");
  const std::string priorities =
      "; preemptor effective priority: " + std::to_string(kueue_priority(preemptor)) +
      " (base: " + std::to_string(kueue_priority(preemptor)) +
      ", boost: 0); preemptee effective priority: " + std::to_string(kueue_priority(wl)) +
      " (base: " + std::to_string(kueue_priority(wl)) + ", boost: 0)";
  new_event(wl, "Normal", "Preempted", message + priorities, "kueue-admission");
  new_event(preemptor, "Normal", "PreemptedWorkload",
            "Preempted workload " + wl["metadata"].value("namespace", "") + "/" +
                wl["metadata"].value("name", "") + " (UID: " + wl["metadata"].value("uid", "") +
                ") in ClusterQueue " + cq_name + priorities,
            "kueue-admission");
  if (json* owner = kueue_owner_of(wl); owner && !(*owner)["spec"].value("suspend", false)) {
    (*owner)["spec"]["suspend"] = true;
    update(*kueue_owner_type(wl), *owner);
    new_event(
        *owner, "Normal", "Stopped", message,
        owner->value("kind", "") == "JobSet" ? "jobset-kueue-controller" : "job-kueue-controller");
  }
}

// The job reconciler, once an evicted Workload's owner has no active pod: Requeued (reason
// Preempted) and its quota released, QuotaReserved False "Pending" (reconciler.go step 6).
void FakeKube::Impl::kueue_requeue_evicted() {
  const ResourceType& wl_t = kueue_type("workloads");
  for (auto* wp : list(wl_t, "")) {
    json& wl = *wp;
    if (!kueue_has_condition(wl, "Evicted") || !kueue_has_condition(wl, "QuotaReserved")) continue;
    if (kueue_owner_active(wl)) continue;
    std::string message;
    for (const auto& c : wl["status"]["conditions"])
      if (c.value("type", "") == "Evicted") message = c.value("message", "");
    json status = wl["status"];
    kueue_set_condition(status, "Requeued", "True", "Preempted", message);
    kueue_set_condition(status, "QuotaReserved", "False", "Pending", message);
    kueue_set_condition(status, "Admitted", "False", "NoReservation",
                        "The workload has no reservation");
    status.erase("admission");
    wl["status"] = status;
    update(wl_t, wl);
  }
}

const ResourceType* FakeKube::Impl::kueue_owner_type(const json& wl) {
  const bool jobset = wl["metadata"]["ownerReferences"][0].value("kind", "") == "JobSet";
  return jobset ? kube::find_type("jobset.x-k8s.io", "v1alpha2", "jobsets")
                : kube::find_type("batch", "v1", "jobs");
}

json* FakeKube::Impl::kueue_owner_of(const json& wl) {
  const json refs = wl["metadata"].value("ownerReferences", json::array());
  if (refs.empty()) return nullptr;
  return find(*kueue_owner_type(wl), wl["metadata"].value("namespace", ""),
              refs[0].value("name", ""));
}

// Job.IsActive: status.active != 0; a JobSet's, any of its Jobs'.
bool FakeKube::Impl::kueue_owner_active(const json& wl) {
  json* owner = kueue_owner_of(wl);
  if (!owner) return false;
  if (owner->value("kind", "") == "Job") return (*owner)["status"].value("active", 0) > 0;
  const std::string uid = (*owner)["metadata"].value("uid", "");
  for (auto* job :
       list(*kube::find_type("batch", "v1", "jobs"), (*owner)["metadata"].value("namespace", "")))
    for (const auto& ref : (*job)["metadata"].value("ownerReferences", json::array()))
      if (ref.value("uid", "") == uid && (*job)["status"].value("active", 0) > 0) return true;
  return false;
}

void FakeKube::Impl::reconcile_kueue() {
  (void)kueue_config_fair_sharing();  // the controller (re)started: its configuration read now
  kueue_sync_workloads();
  kueue_admit();
}

// GET /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/NS/localqueues/LQ/pendingworkloads and
// .../clusterqueues/CQ/pendingworkloads: the PendingWorkloadsSummary of the queue, positions
// from 0 (apis/visibility/v1beta2/types.go).
json FakeKube::Impl::kueue_pending_workloads(const std::string& ns, const std::string& local_queue,
                                             const std::string& cluster_queue) {
  std::lock_guard lock(mu);
  if (!kueue_running())
    throw ApiError{404, "NotFound", "the server could not find the requested resource",
                   json::object()};
  std::string cq_name = cluster_queue;
  if (!local_queue.empty()) {
    json* lq = find(kueue_type("localqueues"), ns, local_queue);
    if (!lq) throw kube::not_found(kueue_type("localqueues"), local_queue);
    cq_name = (*lq)["spec"].value("clusterQueue", "");
  } else if (!find(kueue_type("clusterqueues"), "", cq_name)) {
    throw kube::not_found(kueue_type("clusterqueues"), cq_name);
  }
  std::vector<json*> queue;
  for (auto* wp : list(kueue_type("workloads"), "")) {
    json& wl = *wp;
    if (kueue_has_condition(wl, "QuotaReserved") || kueue_has_condition(wl, "Finished")) continue;
    json* lq = find(kueue_type("localqueues"), wl["metadata"].value("namespace", ""),
                    wl["spec"].value("queueName", ""));
    if (lq && (*lq)["spec"].value("clusterQueue", "") == cq_name) queue.push_back(&wl);
  }
  queue = kueue_ordered(queue, find(kueue_type("clusterqueues"), "", cq_name));
  json items = json::array();
  std::map<std::string, int> in_local;
  // newPendingWorkload (pkg/visibility/storage/utils.go) copies these four fields of each.
  auto owner_refs = [](const json& wl) {
    json refs = json::array();
    for (const auto& ref : wl["metadata"].value("ownerReferences", json::array()))
      refs.push_back({{"apiVersion", ref.value("apiVersion", "")},
                      {"kind", ref.value("kind", "")},
                      {"name", ref.value("name", "")},
                      {"uid", ref.value("uid", "")}});
    return refs;
  };  // "ns/lq" -> position
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const json& wl = *queue[i];
    const std::string wl_ns = wl["metadata"].value("namespace", "");
    const std::string lq = wl["spec"].value("queueName", "");
    const int local = in_local[wl_ns + "/" + lq]++;
    if (!local_queue.empty() && (wl_ns != ns || lq != local_queue)) continue;
    items.push_back({{"metadata",
                      {{"name", wl["metadata"].value("name", "")},
                       {"namespace", wl_ns},
                       {"creationTimestamp", wl["metadata"].value("creationTimestamp", "")},
                       {"ownerReferences", owner_refs(wl)}}},
                     {"priority", wl["spec"].value("priority", 0)},
                     {"localQueueName", lq},
                     {"positionInClusterQueue", static_cast<int>(i)},
                     {"positionInLocalQueue", local}});
  }
  return {{"kind", "PendingWorkloadsSummary"},
          {"apiVersion", "visibility.kueue.x-k8s.io/v1beta2"},
          {"metadata", json::object()},
          {"items", items}};
}

}  // namespace kinetic::fakes
