// The fake cluster's control plane: node pools and the cluster autoscaler, the scheduler, the Job
// and JobSet controllers, and a kubelet that runs each pod's first container as a local process
// (argv = command + args, no shell) whose output becomes the pod's log.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <regex>

#include "fakes/fake_encoding.h"
#include "fakes/fake_kube_internal.h"

namespace kinetic::fakes {

using json = nlohmann::json;
using namespace kube;

namespace {

const ResourceType& pods_t() {
  static const ResourceType* t = find_type("", "v1", "pods");
  return *t;
}
const ResourceType& nodes_t() {
  static const ResourceType* t = find_type("", "v1", "nodes");
  return *t;
}
const ResourceType& jobs_t() {
  static const ResourceType* t = find_type("batch", "v1", "jobs");
  return *t;
}
const ResourceType& jobsets_t() {
  static const ResourceType* t = find_type("jobset.x-k8s.io", "v1alpha2", "jobsets");
  return *t;
}
const ResourceType& secrets_t() {
  static const ResourceType* t = find_type("", "v1", "secrets");
  return *t;
}
const ResourceType& services_t() {
  static const ResourceType* t = find_type("", "v1", "services");
  return *t;
}
const ResourceType& serviceaccounts_t() {
  static const ResourceType* t = find_type("", "v1", "serviceaccounts");
  return *t;
}

// Where a container's termination message is written (its terminationMessagePath, which the
// fake cannot mount at /dev/termination-log): under the pod's own directory, named to the
// container in KINETIC_TERMINATION_LOG.
std::string termination_log_path(const std::string& pod_dir) {
  return pod_dir + "/termination-log";
}

// What the container left at its termination message path, "" when nothing.
std::string termination_message(const std::string& pod_dir) {
  std::FILE* f = std::fopen(termination_log_path(pod_dir).c_str(), "rb");
  if (!f) return "";
  char buf[4096];  // the kubelet reads at most 4096 bytes of it
  const size_t n = std::fread(buf, 1, sizeof buf, f);
  std::fclose(f);
  return std::string(buf, n);
}

// Where the kubelet mounts a pod's service-account token, under the pod's own directory: a
// process of this machine cannot see /var/run/secrets/kubernetes.io/serviceaccount, so the
// container is told the place in KINETIC_SERVICEACCOUNT_DIR.
std::string serviceaccount_dir(const std::string& pod_dir) {
  return pod_dir + "/var/run/secrets/kubernetes.io/serviceaccount";
}

bool write_file(const std::string& path, const std::string& data) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  return std::fclose(f) == 0 && ok;
}

long quantity(const json& v) {
  if (v.is_number()) return v.get<long>();
  if (!v.is_string()) return 0;
  try {
    return std::stol(v.get<std::string>());
  } catch (...) {
    return 0;
  }
}

bool is_extended(const std::string& r) {
  return r != "cpu" && r != "memory" && r != "ephemeral-storage" && r.rfind("hugepages-", 0) != 0;
}

// Extended resources a pod asks for (limits, else requests), summed over its containers.
std::map<std::string, long> extended_requests(const json& pod) {
  std::map<std::string, long> out;
  for (auto& c : pod["spec"].value("containers", json::array())) {
    auto res = c.value("resources", json::object());
    auto src = res.contains("limits") ? res["limits"] : res.value("requests", json::object());
    for (auto& [k, v] : src.items())
      if (is_extended(k)) out[k] += quantity(v);
  }
  return out;
}

bool terminal(const json& pod) {
  auto phase = pod["status"].value("phase", std::string());
  return phase == "Succeeded" || phase == "Failed";
}

bool has_condition(const json& obj, const std::string& type) {
  for (auto& c : obj["status"].value("conditions", json::array()))
    if (c.value("type", "") == type && c.value("status", "") == "True") return true;
  return false;
}

// Sets a condition of STATUS (an object's status). Nothing changes when the condition already
// reads the same; the transition time moves only when its status changes, as controllers do.
// Job-like conditions (PROBE_TIME) also carry lastProbeTime, pod conditions a null one.
void set_condition(json& status, const std::string& type, const std::string& value,
                   const std::string& reason = {}, const std::string& message = {},
                   bool probe_time = false) {
  if (!status.contains("conditions")) status["conditions"] = json::array();
  auto now = rfc3339(SysClock::now());
  for (auto& c : status["conditions"]) {
    if (c.value("type", "") != type) continue;
    if (c.value("status", "") != value) {
      c["lastTransitionTime"] = now;
      if (probe_time) c["lastProbeTime"] = now;
    }
    c["status"] = value;
    if (reason.empty())
      c.erase("reason");
    else
      c["reason"] = reason;
    if (message.empty())
      c.erase("message");
    else
      c["message"] = message;
    return;
  }
  json c = {{"type", type},
            {"status", value},
            {"lastProbeTime", probe_time ? json(now) : json(nullptr)},
            {"lastTransitionTime", now}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  status["conditions"].push_back(c);
}

bool tolerates(const json& tol, const json& taint) {
  auto effect = tol.value("effect", std::string());
  if (!effect.empty() && effect != taint.value("effect", "")) return false;
  auto op = tol.value("operator", std::string("Equal"));
  auto key = tol.value("key", std::string());
  if (key.empty()) return op == "Exists";
  if (key != taint.value("key", "")) return false;
  if (op == "Exists") return true;
  return tol.value("value", std::string()) == taint.value("value", std::string());
}

bool match_expression(const json& expr, const json& labels) {
  auto key = expr.value("key", std::string());
  auto op = expr.value("operator", std::string());
  std::optional<std::string> v;
  if (labels.contains(key) && labels[key].is_string()) v = labels[key].get<std::string>();
  auto values = expr.value("values", json::array());
  bool in = v && std::find(values.begin(), values.end(), json(*v)) != values.end();
  if (op == "In") return in;
  if (op == "NotIn") return !in;
  if (op == "Exists") return v.has_value();
  if (op == "DoesNotExist") return !v.has_value();
  if ((op == "Gt" || op == "Lt") && v && !values.empty()) {
    long a = std::atol(v->c_str()), b = std::atol(values[0].get<std::string>().c_str());
    return op == "Gt" ? a > b : a < b;
  }
  return false;
}

// GKE's TPU webhook on a multislice JobSet's pod (a child Job of a replicated Job with more than
// one replica): the MEGASCALE_* variables JAX's multislice runtime reads. Neither xpk's TPU
// JobSet (src/xpk/commands/workload.py WORKLOAD_CREATE_YAML, whose env is the user's own) nor
// JobSet's multislice example (site/static/examples/tpu-multislice/v6e-jax-workload.yaml)
// writes them, so GKE does; the names are those xpk's Pathways template writes by hand
// (src/xpk/templates/pathways_workload_create.yaml.j2). The coordinator is host 0 of slice 0,
// by its name under the JobSet's headless Service (docs/multihost.md "Multislice").
void inject_megascale(json& pod, int parallelism) {
  const json labels = pod["metadata"].value("labels", json::object());
  const int slices =
      std::atoi(labels.value("jobset.sigs.k8s.io/replicatedjob-replicas", "1").c_str());
  if (slices < 2 || parallelism < 1 || !pod["spec"].contains("subdomain")) return;
  const std::string coordinator = labels.value("jobset.sigs.k8s.io/jobset-name", "") + "-" +
                                  labels.value("jobset.sigs.k8s.io/replicatedjob-name", "") +
                                  "-0-0." + pod["spec"]["subdomain"].get<std::string>();
  for (auto& c : pod["spec"]["containers"]) {
    c["env"].push_back({{"name", "MEGASCALE_COORDINATOR_ADDRESS"}, {"value", coordinator}});
    c["env"].push_back({{"name", "MEGASCALE_NUM_SLICES"}, {"value", std::to_string(slices)}});
    c["env"].push_back({{"name", "MEGASCALE_SLICE_ID"},
                        {"value", labels.value("jobset.sigs.k8s.io/job-index", "0")}});
  }
}

// JobSet's exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology, v0.10.1
// pkg/webhooks/pod_mutating_webhook.go): the leader pod (completion index 0) gets a pod affinity
// to its own child Job (jobset.sigs.k8s.io/job-key) and an anti-affinity to every other Job's
// pods within the topology domain; a follower gets its leader's domain as a node selector. As
// one filter here: a node fits when no pod of another Job runs in its domain and, once a pod of
// its own Job is placed, the domain is that pod's.
std::string exclusive_fit(const json& pod, const json& labels, const std::vector<json*>& placed,
                          const std::map<std::string, json>& node_labels) {
  const json annotations = pod["metadata"].value("annotations", json::object());
  const std::string key = annotations.value("alpha.jobset.sigs.k8s.io/exclusive-topology", "");
  if (key.empty()) return {};
  const std::string domain = labels.value(key, "");
  const std::string own =
      pod["metadata"].value("labels", json::object()).value("jobset.sigs.k8s.io/job-key", "");
  for (const json* other : placed) {
    // A restart's old pods are going: JobSet deletes a restarted child Job in the foreground
    // (its pods first) before it makes the new one, which this fake does in the background.
    if ((*other)["metadata"].contains("deletionTimestamp")) continue;
    const std::string node = (*other)["spec"].value("nodeName", std::string());
    auto n = node_labels.find(node);
    if (n == node_labels.end()) continue;
    const std::string theirs_domain = n->second.value(key, "");
    const std::string theirs = (*other)["metadata"]
                                   .value("labels", json::object())
                                   .value("jobset.sigs.k8s.io/job-key", "");
    if (theirs.empty()) continue;
    if (theirs == own && theirs_domain != domain) return "node(s) didn't match pod affinity rules";
    if (theirs != own && theirs_domain == domain)
      return "node(s) didn't satisfy existing pods anti-affinity rules";
  }
  return {};
}

// The scheduler's filters in its order (taints, node affinity/selector, resources): "" when the
// pod fits, else the reason as FitError counts it.
std::string fit_reason(const json& pod, const json& labels, const json& taints,
                       const std::map<std::string, long>& allocatable,
                       const std::map<std::string, long>& used,
                       const std::map<std::string, long>& want) {
  auto tolerations = pod["spec"].value("tolerations", json::array());
  for (auto& taint : taints) {
    auto effect = taint.value("effect", std::string());
    if (effect != "NoSchedule" && effect != "NoExecute") continue;
    bool ok = false;
    for (auto& tol : tolerations) ok = ok || tolerates(tol, taint);
    if (!ok)
      return "node(s) had untolerated taint {" + taint.value("key", std::string()) + ": " +
             taint.value("value", std::string()) + "}";
  }
  const std::string affinity = "node(s) didn't match Pod's node affinity/selector";
  const json selector = pod["spec"].value("nodeSelector", json::object());
  for (auto& [k, v] : selector.items())
    if (!labels.contains(k) || labels[k] != v) return affinity;
  auto terms = pod["spec"]
                   .value("affinity", json::object())
                   .value("nodeAffinity", json::object())
                   .value("requiredDuringSchedulingIgnoredDuringExecution", json::object())
                   .value("nodeSelectorTerms", json::array());
  if (!terms.empty()) {
    bool any = false;
    for (auto& term : terms) {
      bool all = true;
      for (auto& e : term.value("matchExpressions", json::array()))
        all = all && match_expression(e, labels);
      any = any || all;
    }
    if (!any) return affinity;
  }
  for (auto& [r, q] : want) {
    auto a = allocatable.count(r) ? allocatable.at(r) : 0;
    auto u = used.count(r) ? used.at(r) : 0;
    if (a - u < q) return "Insufficient " + r;
  }
  return {};
}

std::map<std::string, long> parse_allocatable(const std::map<std::string, std::string>& m) {
  std::map<std::string, long> out;
  for (auto& [k, v] : m)
    if (is_extended(k)) out[k] = quantity(json(v));
  return out;
}

json pool_labels(const FakeNodePool& pool, const std::string& node_name) {
  json labels = json::object();
  for (auto& [k, v] : pool.labels) labels[k] = v;
  labels["cloud.google.com/gke-nodepool"] = pool.name;
  labels["cloud.google.com/gke-os-distribution"] = "cos";
  labels["kubernetes.io/hostname"] = node_name;
  labels["kubernetes.io/os"] = "linux";
  labels["kubernetes.io/arch"] = "amd64";
  labels["beta.kubernetes.io/os"] = "linux";
  labels["beta.kubernetes.io/arch"] = "amd64";
  labels["topology.kubernetes.io/zone"] = pool.zone;
  auto dash = pool.zone.rfind('-');
  labels["topology.kubernetes.io/region"] =
      dash == std::string::npos ? pool.zone : pool.zone.substr(0, dash);
  return labels;
}

json pool_taints(const FakeNodePool& pool) {
  json taints = json::array();
  for (auto& t : pool.taints)
    taints.push_back({{"key", t.key}, {"value", t.value}, {"effect", t.effect}});
  return taints;
}

// Kubernetes' $(VAR) expansion of env values, command and args ($$ escapes a dollar).
std::string expand(const std::string& s, const std::map<std::string, std::string>& vars) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '$') {
      out += '$';
      ++i;
    } else if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '(') {
      auto close = s.find(')', i + 2);
      if (close == std::string::npos) {
        out += s.substr(i);
        break;
      }
      auto name = s.substr(i + 2, close - i - 2);
      auto it = vars.find(name);
      out += it != vars.end() ? it->second : s.substr(i, close - i + 1);
      i = close;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string field_ref(const json& pod, const std::string& path) {
  const auto& md = pod["metadata"];
  if (path == "metadata.name") return md.value("name", std::string());
  if (path == "metadata.namespace") return md.value("namespace", std::string());
  if (path == "metadata.uid") return md.value("uid", std::string());
  if (path == "spec.nodeName") return pod["spec"].value("nodeName", std::string());
  if (path == "spec.serviceAccountName")
    return pod["spec"].value("serviceAccountName", std::string("default"));
  if (path == "status.podIP" || path == "status.hostIP") return "127.0.0.1";
  for (const char* kind : {"labels", "annotations"}) {
    std::string prefix = std::string("metadata.") + kind + "['";
    if (path.rfind(prefix, 0) == 0 && path.size() > prefix.size() + 2) {
      auto key = path.substr(prefix.size(), path.size() - prefix.size() - 2);
      auto m = md.value(kind, json::object());
      return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : std::string();
    }
  }
  return {};
}

std::string lookup_path(const std::string& prog, const std::string& path_var) {
  if (prog.find('/') != std::string::npos) return prog;
  std::size_t pos = 0;
  while (pos <= path_var.size()) {
    auto colon = path_var.find(':', pos);
    auto dir = path_var.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    if (dir.empty()) dir = ".";
    auto cand = dir + "/" + prog;
    struct stat st {};
    if (::stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(cand.c_str(), X_OK) == 0)
      return cand;
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  return {};
}

std::string hex_id(std::size_t n) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += hex[std::rand() % 16];
  return s;
}

void signal_group(pid_t pid, int sig) {
  if (pid <= 0) return;
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
}

}  // namespace

// ---- controller loop -------------------------------------------------------------------------

void FakeKube::Impl::controller_loop() {
  std::unique_lock lock(mu);
  std::optional<Steady::time_point> next;
  while (!stopping) {
    if (!dirty) {
      if (next)
        controller_cv.wait_until(lock, *next, [&] { return dirty || stopping; });
      else
        controller_cv.wait(lock, [&] { return dirty || stopping; });
      if (stopping) break;
    }
    dirty = false;
    next = reconcile();
  }
}

std::optional<Steady::time_point> FakeKube::Impl::reconcile() {
  std::optional<Steady::time_point> next;
  process_pools();
  ensure_default_service_accounts();
  reconcile_deployments();
  if (kueue_running()) reconcile_kueue();
  if (jobset_controller_running()) reconcile_jobsets();
  reconcile_jobs(Steady::now(), next);
  reconcile_cronjobs();
  schedule_pods();
  run_kubelet(next);
  probe_readiness(next);
  return next;
}

kube::PodRuntime& FakeKube::Impl::runtime(const json& pod) {
  auto uid = pod["metadata"]["uid"].get<std::string>();
  auto& slot = pods[uid];
  if (!slot) {
    slot = std::make_unique<PodRuntime>();
    slot->uid = uid;
    slot->ns = pod["metadata"].value("namespace", std::string());
    slot->name = pod["metadata"].value("name", std::string());
  }
  return *slot;
}

// ---- node pools and the cluster autoscaler ---------------------------------------------------

void FakeKube::Impl::set_pool(const FakeNodePool& pool) {
  auto& ps = pools[pool.name];
  ps.pool = pool;
  if (ps.hash.empty()) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08zx",
                  std::hash<std::string>{}(options.cluster + "/" + pool.name) & 0xffffffffu);
    ps.hash = buf;
  }
  int existing = 0;
  for (auto* n : list(nodes_t(), ""))
    if ((*n)["metadata"]["labels"].value("cloud.google.com/gke-nodepool", "") == pool.name)
      ++existing;
  ps.pool.nodes = existing;
  ps.backoff = false;
  int want = std::max(pool.nodes, pool.min_nodes);
  while (ps.pool.nodes < want) create_node(ps);
}

void FakeKube::Impl::create_node(kube::PoolState& ps) {
  static const char* alnum = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string name;
  do {
    name = "gke-" + options.cluster + "-" + ps.pool.name + "-" + ps.hash + "-";
    for (int i = 0; i < 4; ++i) name += alnum[std::rand() % 36];
  } while (find(nodes_t(), "", name));
  ++node_serial;
  json capacity = {
      {"cpu", "8"}, {"memory", "32Gi"}, {"pods", "110"}, {"ephemeral-storage", "100Gi"}};
  for (auto& [k, v] : ps.pool.allocatable) capacity[k] = v;
  auto now = rfc3339(SysClock::now());
  json ready = {{"type", "Ready"},          {"status", "True"},
                {"reason", "KubeletReady"}, {"message", "kubelet is posting ready status"},
                {"lastHeartbeatTime", now}, {"lastTransitionTime", now}};
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", name}, {"labels", pool_labels(ps.pool, name)}}},
               {"spec",
                {{"podCIDR", "10.4." + std::to_string(node_serial % 250) + ".0/24"},
                 {"providerID", "gce://" + options.project + "/" + ps.pool.zone + "/" + name}}},
               {"status",
                {{"capacity", capacity},
                 {"allocatable", capacity},
                 {"conditions", {ready}},
                 {"addresses",
                  {{{"type", "InternalIP"},
                    {"address", "10.128.0." + std::to_string(node_serial % 250 + 2)}},
                   {{"type", "Hostname"}, {"address", name}}}},
                 {"nodeInfo",
                  {{"kubeletVersion", "v1.32.2-gke.1182003"},
                   {"containerRuntimeVersion", "containerd://1.7.24"},
                   {"osImage", "Container-Optimized OS from Google"},
                   {"operatingSystem", "linux"},
                   {"architecture", "amd64"}}}}}};
  auto taints = pool_taints(ps.pool);
  if (!taints.empty()) node["spec"]["taints"] = taints;
  stamp_new(node);
  node["metadata"].erase("generation");
  insert(nodes_t(), std::move(node));
  ++ps.pool.nodes;
}

void FakeKube::Impl::drop_pool(const std::string& name) {
  std::vector<std::string> names;
  for (auto* n : list(nodes_t(), ""))
    if ((*n)["metadata"]["labels"].value("cloud.google.com/gke-nodepool", "") == name)
      names.push_back((*n)["metadata"]["name"]);
  for (auto& n : names) delete_object(nodes_t(), "", n, "Background", std::nullopt, nullptr);
  pools.erase(name);
}

void FakeKube::Impl::node_lost(json& pod) {
  auto& prt = runtime(pod);
  if (prt.running && !prt.term_sent) {
    prt.term_sent = true;
    signal_group(prt.pid, SIGKILL);
  }
  auto& status = pod["status"];
  status["phase"] = "Failed";
  set_condition(status, "DisruptionTarget", "True", "DeletionByPodGC",
                "PodGC: node no longer exists");
  set_condition(status, "Ready", "False", "PodFailed");
  update(pods_t(), pod);
  pod_terminal(pod);
  erase(pods_t(), pod["metadata"]["namespace"], pod["metadata"]["name"].get<std::string>());
}

void FakeKube::Impl::process_pools() {
  for (auto& [name, ps] : pools) {
    if (ps.pending == 0 || ps.capacity_held) continue;
    std::optional<std::string> failure = ps.fail_next;
    if (!failure && !ps.pool.unobtainable.empty()) failure = ps.pool.unobtainable;
    if (failure) {
      auto msg = "Node scale up in zones " + ps.pool.zone +
                 " associated with this pod failed: " + *failure +
                 ". Pod is at risk of not being scheduled.";
      for (auto& uid : ps.pending_pods) {
        for (auto* p : list(pods_t(), "")) {
          if ((*p)["metadata"].value("uid", "") != uid) continue;
          new_event(*p, "Warning", "FailedScaleUp", msg, "cluster-autoscaler");
          auto& prt = runtime(*p);
          prt.scale_up_triggered = false;  // it may report the backoff next
          prt.not_trigger_message.clear();
        }
      }
      ps.fail_next.reset();
      ps.backoff = true;
      dirty = true;
    } else {
      for (int i = 0; i < ps.pending; ++i) create_node(ps);
    }
    ps.pending = 0;
    ps.pending_pods.clear();
    ps.virtual_nodes.clear();
  }
}

// ---- scheduler -------------------------------------------------------------------------------

void FakeKube::Impl::schedule_pods() {
  if (expire_next_watches > 0) return;  // held until the expired watch is served
  auto nodes = list(nodes_t(), "");
  std::map<std::string, std::map<std::string, long>> used;
  auto all_pods = list(pods_t(), "");
  std::vector<json*> on_nodes;  // pods on a node, for JobSet's exclusive placement
  for (auto* p : all_pods) {
    auto node = (*p)["spec"].value("nodeName", std::string());
    if (node.empty() || terminal(*p)) continue;
    for (auto& [r, q] : extended_requests(*p)) used[node][r] += q;
    on_nodes.push_back(p);
  }
  std::map<std::string, json> node_labels;
  for (auto* n : nodes)
    node_labels[(*n)["metadata"]["name"].get<std::string>()] =
        (*n)["metadata"].value("labels", json::object());
  for (auto* p : all_pods) {
    auto& pod = *p;
    if (!pod["spec"].value("nodeName", std::string()).empty() || terminal(pod) ||
        pod["metadata"].contains("deletionTimestamp"))
      continue;
    auto want = extended_requests(pod);
    std::map<std::string, int> histogram;
    json* chosen = nullptr;
    for (auto* n : nodes) {
      std::map<std::string, long> alloc;
      const json allocatable = (*n)["status"].value("allocatable", json::object());
      for (auto& [k, v] : allocatable.items())
        if (is_extended(k)) alloc[k] = quantity(v);
      auto name = (*n)["metadata"]["name"].get<std::string>();
      auto reason =
          fit_reason(pod, (*n)["metadata"].value("labels", json::object()),
                     (*n)["spec"].value("taints", json::array()), alloc, used[name], want);
      if (reason.empty()) reason = exclusive_fit(pod, node_labels[name], on_nodes, node_labels);
      if (reason.empty()) {
        chosen = n;
        break;
      }
      ++histogram[reason];
    }
    auto& prt = runtime(pod);
    auto& status = pod["status"];
    if (chosen) {
      auto node = (*chosen)["metadata"]["name"].get<std::string>();
      pod["spec"]["nodeName"] = node;
      set_condition(status, "PodScheduled", "True");
      json statuses = json::array();
      for (auto& c : pod["spec"]["containers"])
        statuses.push_back({{"name", c.value("name", std::string())},
                            {"image", c.value("image", std::string())},
                            {"imageID", ""},
                            {"ready", false},
                            {"started", false},
                            {"restartCount", 0},
                            {"state", {{"waiting", {{"reason", "ContainerCreating"}}}}},
                            {"lastState", json::object()}});
      status["containerStatuses"] = statuses;
      status["hostIP"] = "127.0.0.1";
      status["hostIPs"] = {{{"ip", "127.0.0.1"}}};
      status["startTime"] = rfc3339(SysClock::now());
      update(pods_t(), pod);
      for (auto& [r, q] : want) used[node][r] += q;
      on_nodes.push_back(&pod);
      new_event(pod, "Normal", "Scheduled",
                "Successfully assigned " + pod["metadata"]["namespace"].get<std::string>() + "/" +
                    pod["metadata"]["name"].get<std::string>() + " to " + node,
                "default-scheduler");
      continue;
    }
    // FitError, as the scheduler words it
    std::string msg;
    if (nodes.empty()) {
      msg = "no nodes available to schedule pods";
    } else {
      auto n = std::to_string(nodes.size());
      std::vector<std::string> parts;
      std::map<std::string, int> preemption;
      for (auto& [reason, count] : histogram) {
        parts.push_back(std::to_string(count) + " " + reason);
        preemption[reason.rfind("Insufficient", 0) == 0
                       ? "No preemption victims found for incoming pod"
                       : "Preemption is not helpful for scheduling"] += count;
      }
      std::sort(parts.begin(), parts.end());
      msg = "0/" + n + " nodes are available: ";
      for (std::size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
      msg += ". preemption: 0/" + n + " nodes are available: ";
      bool first = true;
      for (auto& [reason, count] : preemption) {
        msg += (first ? "" : ", ") + std::to_string(count) + " " + reason;
        first = false;
      }
      msg += ".";
    }
    if (prt.unschedulable_message != msg) {
      prt.unschedulable_message = msg;
      set_condition(status, "PodScheduled", "False", "Unschedulable", msg);
      update(pods_t(), pod);
      new_event(pod, "Warning", "FailedScheduling", msg, "default-scheduler");
    }
    if (prt.scale_up_triggered) continue;
    // the cluster autoscaler: which pool's template node would take this pod?
    std::map<std::string, int> why_not;
    bool triggered = false;
    for (auto& [pname, ps] : pools) {
      auto alloc = parse_allocatable(ps.pool.allocatable);
      auto reason =
          fit_reason(pod, pool_labels(ps.pool, "template"), pool_taints(ps.pool), alloc, {}, want);
      if (!reason.empty()) {
        ++why_not[reason];
        continue;
      }
      if (ps.backoff) {
        ++why_not["in backoff after failed scale-up"];
        continue;
      }
      bool placed = false;
      for (auto& vn : ps.virtual_nodes) {
        bool fits = true;
        for (auto& [r, q] : want) fits = fits && vn[r] >= q;
        if (fits) {
          for (auto& [r, q] : want) vn[r] -= q;
          placed = true;
          break;
        }
      }
      int before = ps.pool.nodes + ps.pending;
      if (!placed && before >= ps.pool.max_nodes) {
        ++why_not["max node group size reached"];
        continue;
      }
      if (!placed) {
        auto vn = alloc;
        for (auto& [r, q] : want) vn[r] -= q;
        ps.virtual_nodes.push_back(vn);
        ++ps.pending;
      }
      auto mig = "https://www.googleapis.com/compute/v1/projects/" + options.project + "/zones/" +
                 ps.pool.zone + "/instanceGroups/gke-" + options.cluster + "-" + ps.pool.name +
                 "-" + ps.hash + "-grp";
      int from = placed ? before - 1 : before;
      new_event(pod, "Normal", "TriggeredScaleUp",
                "pod triggered scale-up: [{" + mig + " " + std::to_string(from) + "->" +
                    std::to_string(from + 1) + " (max: " + std::to_string(ps.pool.max_nodes) +
                    ")}]",
                "cluster-autoscaler");
      ps.pending_pods.push_back(pod["metadata"]["uid"]);
      prt.scale_up_triggered = true;
      triggered = true;
      dirty = true;  // the nodes come up on the next controller step
      break;
    }
    if (triggered) continue;
    std::string nt = "pod didn't trigger scale-up:";
    bool first = true;
    for (auto& [reason, count] : why_not) {
      nt += (first ? " " : ", ") + std::to_string(count) + " " + reason;
      first = false;
    }
    if (prt.not_trigger_message != nt) {
      prt.not_trigger_message = nt;
      new_event(pod, "Normal", "NotTriggerScaleUp", nt, "cluster-autoscaler");
    }
  }
}

// ---- Job controller --------------------------------------------------------------------------

void FakeKube::Impl::apply_job_defaults(json& job) {
  auto& spec = job["spec"];
  auto uid = job["metadata"]["uid"].get<std::string>();
  auto name = job["metadata"]["name"].get<std::string>();
  bool had_parallelism = spec.contains("parallelism") && !spec["parallelism"].is_null();
  if (!had_parallelism) spec["parallelism"] = 1;
  if (!spec.contains("completions") || spec["completions"].is_null()) {
    if (!had_parallelism) spec["completions"] = 1;
  }
  if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
  if (!spec.contains("completionMode")) spec["completionMode"] = "NonIndexed";
  if (!spec.contains("suspend")) spec["suspend"] = false;
  if (!spec.contains("podReplacementPolicy")) spec["podReplacementPolicy"] = "TerminatingOrFailed";
  if (!spec.contains("manualSelector") || !spec["manualSelector"].get<bool>())
    spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
  auto& tmd = spec["template"]["metadata"];
  if (!tmd.is_object()) tmd = json::object();
  tmd["labels"]["batch.kubernetes.io/controller-uid"] = uid;
  tmd["labels"]["controller-uid"] = uid;
  tmd["labels"]["batch.kubernetes.io/job-name"] = name;
  tmd["labels"]["job-name"] = name;
  auto& tspec = spec["template"]["spec"];
  if (!tspec.contains("terminationGracePeriodSeconds"))
    tspec["terminationGracePeriodSeconds"] = options.default_grace_seconds;
  default_pod_spec(tspec);
  job["status"] = json::object();
}

// The action of the first podFailurePolicy rule of JOB that matches the failed POD ("Ignore",
// "FailJob", "Count"; "" when none does), with the message the Job controller writes for it.
std::pair<std::string, std::string> pod_failure_action(const json& job, const json& pod) {
  const json rules =
      job["spec"].value("podFailurePolicy", json::object()).value("rules", json::array());
  const std::string who = pod["metadata"].value("namespace", std::string()) + "/" +
                          pod["metadata"].value("name", std::string());
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const json& rule = rules[i];
    const std::string action = rule.value("action", std::string());
    const std::string at = " matching " + action + " rule at index " + std::to_string(i);
    if (rule.contains("onExitCodes")) {
      const json& on = rule["onExitCodes"];
      const std::string container = on.value("containerName", std::string());
      const bool in = on.value("operator", std::string("In")) == "In";
      for (const auto& cs : pod["status"].value("containerStatuses", json::array())) {
        if (!container.empty() && cs.value("name", "") != container) continue;
        if (!cs.contains("state") || !cs["state"].contains("terminated")) continue;
        int code = cs["state"]["terminated"].value("exitCode", 0);
        bool listed = false;
        for (const auto& v : on.value("values", json::array())) listed = listed || v == code;
        if (code != 0 && listed == in)
          return {action, "Container " + cs.value("name", std::string()) + " for pod " + who +
                              " failed with exit code " + std::to_string(code) + at};
      }
    }
    for (const auto& pc : rule.value("onPodConditions", json::array())) {
      const std::string type = pc.value("type", std::string());
      for (const auto& c : pod["status"].value("conditions", json::array()))
        if (c.value("type", "") == type && c.value("status", "") == pc.value("status", "True"))
          return {action, "Pod " + who + " has condition " + type + at};
    }
  }
  return {"", ""};
}

void FakeKube::Impl::pod_terminal(const json& pod) {
  auto& prt = runtime(pod);
  auto phase = pod["status"].value("phase", std::string());
  if (phase != "Succeeded" && phase != "Failed") return;
  prt.counted = true;
  for (auto& ref : pod["metadata"].value("ownerReferences", json::array())) {
    if (ref.value("kind", "") != "Job" || !ref.value("controller", false)) continue;
    auto& tr = jobs[ref["uid"].get<std::string>()];
    auto uid = pod["metadata"]["uid"].get<std::string>();
    if (tr.succeeded.count(uid) || tr.failed.count(uid)) return;
    std::optional<int> index;
    auto ann = pod["metadata"].value("annotations", json::object());
    if (ann.contains("batch.kubernetes.io/job-completion-index"))
      index = std::atoi(ann["batch.kubernetes.io/job-completion-index"].get<std::string>().c_str());
    if (tr.ignored.count(uid)) return;
    json* job = find(jobs_t(), pod["metadata"].value("namespace", std::string()),
                     ref.value("name", std::string()));
    auto [action, message] = phase == "Failed" && job ? pod_failure_action(*job, pod)
                                                      : std::pair<std::string, std::string>{};
    if (action == "Ignore") {  // not counted against backoffLimit; a replacement is made
      tr.ignored.insert(uid);
      kick();
      return;
    }
    if (action == "FailJob" && !tr.fail_job) tr.fail_job = message;
    if (phase == "Succeeded") {
      tr.succeeded.insert(uid);
      if (index) tr.succeeded_indexes.insert(*index);
    } else {
      tr.failed.insert(uid);
      if (index) tr.failed_indexes.insert(*index);
    }
    kick();
  }
}

// The Job's Suspended condition and its events (syncJob: "JobSuspended" / "JobResumed"); a
// resumed Job's startTime is reset, as its activeDeadlineSeconds counts from the resume.
// Returns whether the Job was resumed just now.
bool FakeKube::Impl::job_suspension(json& job, json& status, bool suspended,
                                    SysClock::time_point now) {
  bool was_suspended = false;
  for (const auto& c : status.value("conditions", json::array()))
    if (c.value("type", "") == "Suspended") was_suspended = c.value("status", "") == "True";
  if (suspended && !was_suspended) {
    set_condition(status, "Suspended", "True", "JobSuspended", "Job suspended", true);
    new_event(job, "Normal", "Suspended", "Job suspended", "job-controller");
  } else if (!suspended && was_suspended) {
    set_condition(status, "Suspended", "False", "JobResumed", "Job resumed", true);
    new_event(job, "Normal", "Resumed", "Job resumed", "job-controller");
    status["startTime"] = rfc3339(now);
    return true;
  }
  return false;
}

void FakeKube::Impl::reconcile_jobs(Steady::time_point now_steady,
                                    std::optional<Steady::time_point>& next) {
  auto now = SysClock::now();
  for (auto* jp : list(jobs_t(), "")) {
    auto& job = *jp;
    auto uid = job["metadata"]["uid"].get<std::string>();
    auto ns = job["metadata"]["namespace"].get<std::string>();
    auto name = job["metadata"]["name"].get<std::string>();
    auto& spec = job["spec"];
    auto& tr = jobs[uid];
    json status = job["status"].is_object() ? job["status"] : json::object();
    bool finished = has_condition(job, "Complete") || has_condition(job, "Failed");
    bool indexed = spec.value("completionMode", "") == "Indexed";
    std::optional<int> completions;
    if (spec.contains("completions") && spec["completions"].is_number())
      completions = spec["completions"].get<int>();
    int parallelism = spec.value("parallelism", 1);
    std::vector<json*> owned;
    for (auto* p : list(pods_t(), ns))
      if ((*p)["metadata"]
              .value("labels", json::object())
              .value("batch.kubernetes.io/controller-uid", "") == uid)
        owned.push_back(p);
    int active = 0, terminating = 0, ready = 0;
    std::set<int> active_indexes;
    std::vector<json*> active_pods;
    for (auto* p : owned) {
      if (terminal(*p)) {
        pod_terminal(*p);
        continue;
      }
      if ((*p)["metadata"].contains("deletionTimestamp")) {
        ++terminating;
        continue;
      }
      ++active;
      active_pods.push_back(p);
      if (has_condition(*p, "Ready")) ++ready;
      auto ann = (*p)["metadata"].value("annotations", json::object());
      if (ann.contains("batch.kubernetes.io/job-completion-index"))
        active_indexes.insert(
            std::atoi(ann["batch.kubernetes.io/job-completion-index"].get<std::string>().c_str()));
    }
    bool suspended = spec.value("suspend", false);
    if (!finished && job_suspension(job, status, suspended, now)) tr.start = now;
    if (!finished && suspended && !active_pods.empty()) {
      // manageJob of a suspended Job: "Deleting all active pods in suspended job". Each is
      // terminating until its container exits, then counted as any deleted pod that failed is
      // (isPodFailed), by the podFailurePolicy when the Job has one.
      for (auto* p : active_pods) {
        auto pname = (*p)["metadata"]["name"].get<std::string>();
        new_event(job, "Normal", "SuccessfulDelete", "Deleted pod: " + pname, "job-controller");
        delete_object(pods_t(), ns, pname, "Background", std::nullopt, nullptr);
      }
      terminating += active;
      active = 0;
      ready = 0;
      active_pods.clear();
    }
    if (!finished && !suspended && !status.contains("startTime")) {
      tr.start = now;
      status["startTime"] = rfc3339(now);
    }
    if (!tr.start && status.contains("startTime"))
      tr.start = parse_rfc3339(status["startTime"].get<std::string>());
    if (!finished) {
      auto fail = [&](const std::string& reason, const std::string& message) {
        if (has_condition(job, "FailureTarget") ||
            (status.contains("conditions") &&
             std::any_of(status["conditions"].begin(), status["conditions"].end(),
                         [](const json& c) { return c.value("type", "") == "FailureTarget"; })))
          return;
        set_condition(status, "FailureTarget", "True", reason, message, true);
        new_event(job, "Warning", reason, message, "job-controller");
        for (auto* p : active_pods) {
          auto pod_uid = (*p)["metadata"]["uid"].get<std::string>();
          tr.failed.insert(pod_uid);
          auto pname = (*p)["metadata"]["name"].get<std::string>();
          new_event(job, "Normal", "SuccessfulDelete", "Deleted pod: " + pname, "job-controller");
          delete_object(pods_t(), ns, pname, "Background", std::nullopt, nullptr);
        }
        active = 0;
        active_pods.clear();
      };
      if (tr.fail_job) fail("PodFailurePolicy", *tr.fail_job);
      int backoff_limit = spec.value("backoffLimit", 6);
      if (static_cast<int>(tr.failed.size()) > backoff_limit)
        fail("BackoffLimitExceeded", "Job has reached the specified backoff limit");
      if (spec.contains("activeDeadlineSeconds") && spec["activeDeadlineSeconds"].is_number() &&
          tr.start) {
        auto deadline = *tr.start + std::chrono::seconds(spec["activeDeadlineSeconds"].get<long>());
        if (now >= deadline)
          fail("DeadlineExceeded", "Job was active longer than specified deadline");
        else {
          auto at = now_steady + std::chrono::duration_cast<Steady::duration>(deadline - now) +
                    std::chrono::milliseconds(1);
          if (!next || at < *next) next = at;
        }
      }
      bool failure_target = false;
      for (auto& c : status.value("conditions", json::array()))
        if (c.value("type", "") == "FailureTarget" && c.value("status", "") == "True")
          failure_target = true;
      int succeeded = static_cast<int>(tr.succeeded.size());
      if (failure_target) {
        // the terminating pods must be gone before the Job is Failed (Kubernetes >= 1.31)
        int still = 0;
        terminating = 0;
        for (auto* p : list(pods_t(), ns))
          if ((*p)["metadata"]
                      .value("labels", json::object())
                      .value("batch.kubernetes.io/controller-uid", "") == uid &&
              !terminal(*p)) {
            ++still;
            if ((*p)["metadata"].contains("deletionTimestamp")) ++terminating;
          }
        if (still == 0) {
          json ft;
          for (auto& c : status["conditions"])
            if (c.value("type", "") == "FailureTarget") ft = c;
          set_condition(status, "Failed", "True", ft.value("reason", ""), ft.value("message", ""),
                        true);
          finished = true;
        }
      } else {
        bool done = false;
        if (indexed && completions) {
          done = true;
          for (int i = 0; i < *completions; ++i) done = done && tr.succeeded_indexes.count(i);
        } else if (completions) {
          done = succeeded >= *completions;
        } else {
          done = succeeded > 0 && active == 0;
        }
        if (done) {
          set_condition(status, "SuccessCriteriaMet", "True", "CompletionsReached",
                        "Reached expected number of succeeded pods", true);
          set_condition(status, "Complete", "True", "CompletionsReached",
                        "Reached expected number of succeeded pods", true);
          status["completionTime"] = rfc3339(now);
          new_event(job, "Normal", "Completed", "Job completed", "job-controller");
          finished = true;
        } else if (!suspended) {
          // false when the pod could not be created (fail_pod_creates, or its service account
          // is missing; retried after a backoff).
          auto create_pod = [&](std::optional<int> index) {
            if (tr.create_retry_at && now_steady < *tr.create_retry_at) {
              if (!next || *tr.create_retry_at < *next) next = tr.create_retry_at;
              return false;
            }
            // A refused POST: a FailedCreate event on the Job, and a retry after a backoff.
            auto refused = [&](const std::string& why) {
              new_event(job, "Warning", "FailedCreate", "Error creating: " + why, "job-controller");
              ++tr.failed_creates;
              auto delay = std::chrono::milliseconds(
                  std::min(1000, 100 << std::min(tr.failed_creates - 1, 4)));
              tr.create_retry_at = now_steady + delay;
              if (!next || *tr.create_retry_at < *next) next = tr.create_retry_at;
              return false;
            };
            if (!pod_create_failure.empty()) {
              // As a ResourceQuota or an admission webhook answers the controller's POST: the
              // name was generated before admission refused it.
              std::string pod_name =
                  name + "-" + (index ? std::to_string(*index) + "-" : "") + random_suffix(5);
              return refused("pods \"" + pod_name + "\" is forbidden: " + pod_create_failure);
            }
            json tmpl = spec["template"];
            json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
            auto& md = pod["metadata"];
            md["generateName"] = name + "-" + (index ? std::to_string(*index) + "-" : "");
            md["labels"] = tmpl["metadata"].value("labels", json::object());
            md["annotations"] = tmpl["metadata"].value("annotations", json::object());
            md["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                      {"kind", "Job"},
                                      {"name", name},
                                      {"uid", uid},
                                      {"controller", true},
                                      {"blockOwnerDeletion", true}}};
            pod["spec"] = tmpl["spec"];
            if (index) {
              auto idx = std::to_string(*index);
              md["labels"]["batch.kubernetes.io/job-completion-index"] = idx;
              md["annotations"]["batch.kubernetes.io/job-completion-index"] = idx;
              if (pod["spec"].contains("subdomain") && !pod["spec"].contains("hostname"))
                pod["spec"]["hostname"] = name + "-" + idx;
              for (auto& c : pod["spec"]["containers"]) {
                if (!c.contains("env")) c["env"] = json::array();
                c["env"].push_back(
                    {{"name", "JOB_COMPLETION_INDEX"},
                     {"valueFrom",
                      {{"fieldRef",
                        {{"apiVersion", "v1"},
                         {"fieldPath",
                          "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}}}});
              }
              // GKE's TPU webhook: an Indexed Job with a subdomain, parallelism > 1 and
              // google.com/tpu requested gets each host's id and every host's name.
              bool tpu = false;
              for (auto& c : pod["spec"]["containers"])
                tpu = tpu ||
                      c["resources"].value("limits", json::object()).contains("google.com/tpu");
              if (tpu && parallelism > 1 && pod["spec"].contains("subdomain")) {
                std::string hosts;
                for (int h = 0; h < parallelism; ++h)
                  hosts += (h ? "," : "") + name + "-" + std::to_string(h) + "." +
                           pod["spec"]["subdomain"].get<std::string>();
                for (auto& c : pod["spec"]["containers"]) {
                  c["env"].push_back({{"name", "TPU_WORKER_ID"}, {"value", idx}});
                  c["env"].push_back({{"name", "TPU_WORKER_HOSTNAMES"}, {"value", hosts}});
                }
                inject_megascale(pod, parallelism);
              }
            }
            try {
              json created = create(pods_t(), ns, std::move(pod), false);
              tr.failed_creates = 0;
              tr.create_retry_at.reset();
              new_event(job, "Normal", "SuccessfulCreate",
                        "Created pod: " + created["metadata"]["name"].get<std::string>(),
                        "job-controller");
              ++active;
              return true;
            } catch (const ApiError& e) {
              // The ServiceAccount admission plugin: the pod's service account does not exist.
              if (e.code == 403) return refused(e.message);
              return false;  // e.g. the namespace is going away
            }
          };
          if (indexed && completions) {
            for (int i = 0; i < *completions && active < parallelism; ++i)
              if (!tr.succeeded_indexes.count(i) && !active_indexes.count(i) && !create_pod(i))
                break;
          } else {
            int want = completions ? std::min(parallelism, *completions - succeeded)
                                   : (succeeded > 0 ? 0 : parallelism);
            while (active < want && create_pod(std::nullopt)) {
            }
          }
        }
      }
    }
    // counters (omitempty, as the API serves them)
    for (const char* k : {"active", "succeeded", "failed"}) status.erase(k);
    if (active > 0) status["active"] = active;
    if (!tr.succeeded.empty()) status["succeeded"] = static_cast<int>(tr.succeeded.size());
    if (!tr.failed.empty()) status["failed"] = static_cast<int>(tr.failed.size());
    status["ready"] = ready;
    status["terminating"] = terminating;
    status["uncountedTerminatedPods"] = json::object();
    if (indexed && !tr.succeeded_indexes.empty()) {
      std::string s;
      std::vector<int> idx(tr.succeeded_indexes.begin(), tr.succeeded_indexes.end());
      for (std::size_t i = 0; i < idx.size();) {
        std::size_t j = i;
        while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
        s += (s.empty() ? "" : ",") + std::to_string(idx[i]) +
             (j > i ? "-" + std::to_string(idx[j]) : "");
        i = j + 1;
      }
      status["completedIndexes"] = s;
    }
    if (status != job["status"]) {
      job["status"] = status;
      update(jobs_t(), job);
    }
  }
}

// ---- Deployment controller --------------------------------------------------------------------

// A Deployment becomes available at once, with no pods: the fake runs no controller image (the
// JobSet controller a release deploys is this fake's own, below).
bool FakeKube::Impl::jobset_controller_running() {
  if (!find(*kube::find_type("apiextensions.k8s.io", "v1", "customresourcedefinitions"), "",
            "jobsets.jobset.x-k8s.io"))
    return false;
  if (options.jobset_installed) return true;
  json* d = find(*kube::find_type("apps", "v1", "deployments"), "jobset-system",
                 "jobset-controller-manager");
  return d && (*d)["status"].value("availableReplicas", 0) > 0;
}

// ---- JobSet controller -----------------------------------------------------------------------

namespace {

// The Failed condition of a Job (True), or null.
const json* job_failure(const json& job) {
  auto status = job.find("status");
  if (status == job.end() || !status->is_object()) return nullptr;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return nullptr;
  for (const auto& c : *conditions)
    if (c.value("type", "") == "Failed" && c.value("status", "") == "True") return &c;
  return nullptr;
}

// JobSet v0.10's rule matching (pkg/controllers/failure_policy.go): the job's failure reason in
// onJobFailureReasons, its message matching one of onJobFailureMessagePatterns, its replicated
// job among targetReplicatedJobs; an empty list matches anything.
bool rule_applies(const json& rule, const json& job, const json& failure) {
  auto reasons = rule.value("onJobFailureReasons", json::array());
  if (!reasons.empty() &&
      std::find(reasons.begin(), reasons.end(), failure.value("reason", "")) == reasons.end())
    return false;
  auto patterns = rule.value("onJobFailureMessagePatterns", json::array());
  if (!patterns.empty()) {
    bool any = false;
    for (const auto& p : patterns) {
      try {
        any = any || std::regex_search(failure.value("message", std::string()),
                                       std::regex(p.get<std::string>()));
      } catch (const std::regex_error&) {
      }
    }
    if (!any) return false;
  }
  auto targets = rule.value("targetReplicatedJobs", json::array());
  const std::string parent = job["metadata"]
                                 .value("labels", json::object())
                                 .value("jobset.sigs.k8s.io/replicatedjob-name", "");
  return targets.empty() || std::find(targets.begin(), targets.end(), parent) != targets.end();
}

}  // namespace

void FakeKube::Impl::reconcile_jobsets() {
  for (auto* jsp : list(jobsets_t(), "")) {
    auto& js = *jsp;
    auto uid = js["metadata"]["uid"].get<std::string>();
    auto ns = js["metadata"]["namespace"].get<std::string>();
    auto name = js["metadata"]["name"].get<std::string>();
    auto& spec = js["spec"];
    json status = js["status"].is_object() ? js["status"] : json::object();
    const int restarts = status.value("restarts", 0);
    const std::string attempt = std::to_string(restarts);
    auto& created = jobset_children[uid];
    std::vector<json*> owned;
    for (auto* j : list(jobs_t(), ns))
      for (const auto& ref : (*j)["metadata"].value("ownerReferences", json::array()))
        if (ref.value("uid", "") == uid) owned.push_back(j);
    auto attempt_of = [](const json& job) {
      return job["metadata"]
          .value("labels", json::object())
          .value("jobset.sigs.k8s.io/restart-attempt", "0");
    };
    auto finished = [](const json& job) {
      return has_condition(job, "Complete") || has_condition(job, "Failed");
    };

    if (status.contains("terminalState")) {
      // A finished JobSet leaves no child running (jobset_controller.go: deleteJobs(active)).
      if (status["terminalState"] == "Failed")
        for (auto* j : owned)
          if (!finished(*j) && !(*j)["metadata"].contains("deletionTimestamp"))
            delete_object(jobs_t(), ns, (*j)["metadata"]["name"], "Background", std::nullopt,
                          nullptr);
      continue;
    }
    // A restart: the jobs of earlier attempts go (their pods with them), then are made anew.
    for (auto* j : owned)
      if (attempt_of(*j) != attempt && !(*j)["metadata"].contains("deletionTimestamp"))
        delete_object(jobs_t(), ns, (*j)["metadata"]["name"], "Background", std::nullopt, nullptr);

    json owner = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                  {"kind", "JobSet"},
                  {"name", name},
                  {"uid", uid},
                  {"controller", true},
                  {"blockOwnerDeletion", true}};
    bool dns = spec["network"].value("enableDNSHostnames", true);
    auto subdomain = spec["network"].value("subdomain", name);
    if (dns && !created.count("service:") && !find(services_t(), ns, subdomain)) {
      json svc = {{"metadata", {{"name", subdomain}, {"ownerReferences", {owner}}}},
                  {"spec",
                   {{"clusterIP", "None"},
                    {"selector", {{"jobset.sigs.k8s.io/jobset-name", name}}},
                    {"publishNotReadyAddresses", true}}}};
      try {
        create(services_t(), ns, svc, false);
      } catch (const ApiError&) {
      }
    }
    created.insert("service:");
    int global = 0;
    json rstatus = json::array();
    std::vector<json*> failed;
    bool all_complete = true;
    for (auto& rj : spec["replicatedJobs"]) {
      auto rname = rj.value("name", std::string());
      int replicas = rj.value("replicas", 1);
      json counts = {{"name", rname}, {"ready", 0},  {"succeeded", 0},
                     {"failed", 0},   {"active", 0}, {"suspended", 0}};
      for (int i = 0; i < replicas; ++i, ++global) {
        auto jname = name + "-" + rname + "-" + std::to_string(i);
        json* child = find(jobs_t(), ns, jname);
        if (child && attempt_of(*child) != attempt) {  // the earlier attempt's, still going
          all_complete = false;
          continue;
        }
        if (!child && !created.count(jname + "@" + attempt)) {
          json labels = {{"jobset.sigs.k8s.io/jobset-name", name},
                         {"jobset.sigs.k8s.io/replicatedjob-name", rname},
                         {"jobset.sigs.k8s.io/replicatedjob-replicas", std::to_string(replicas)},
                         {"jobset.sigs.k8s.io/job-index", std::to_string(i)},
                         {"jobset.sigs.k8s.io/job-global-index", std::to_string(global)},
                         {"jobset.sigs.k8s.io/restart-attempt", attempt},
                         {"jobset.sigs.k8s.io/job-key", hex_id(40)}};
          json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}};
          job["metadata"] = {{"name", jname},
                             {"labels", labels},
                             {"annotations", labels},
                             {"ownerReferences", {owner}}};
          job["spec"] = rj["template"].value("spec", json::object());
          auto& tmd = job["spec"]["template"]["metadata"];
          if (!tmd.is_object()) tmd = json::object();
          for (auto& [k, v] : labels.items()) {
            tmd["labels"][k] = v;
            tmd["annotations"][k] = v;
          }
          // JobSet-level exclusive placement reaches the Job and its pods
          // (jobset_controller.go labelAndAnnotateObject).
          const json js_annotations = js["metadata"].value("annotations", json::object());
          if (js_annotations.contains("alpha.jobset.sigs.k8s.io/exclusive-topology")) {
            const json key = js_annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"];
            job["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] = key;
            tmd["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] = key;
          }
          if (dns && !job["spec"]["template"]["spec"].contains("subdomain"))
            job["spec"]["template"]["spec"]["subdomain"] = subdomain;
          // A suspended JobSet's Jobs are made suspended (jobset_controller.go constructJob).
          job["spec"]["suspend"] = spec.value("suspend", false);
          try {
            create(jobs_t(), ns, std::move(job), false);
          } catch (const ApiError&) {
          }
          created.insert(jname + "@" + attempt);
          child = find(jobs_t(), ns, jname);
        }
        if (!child) {
          all_complete = false;
          continue;
        }
        // Resumed (Kueue admitted it): its Jobs take the template's node selector and start
        // (jobset_controller.go resumeJob).
        if ((*child)["spec"].value("suspend", false) && !spec.value("suspend", false)) {
          (*child)["spec"]["template"]["spec"]["nodeSelector"] =
              rj["template"]["spec"]["template"]["spec"].value("nodeSelector", json::object());
          (*child)["spec"]["suspend"] = false;
          update(jobs_t(), *child);
        }
        // Suspended again (Kueue evicted it): so are its Jobs, whose pods go (suspendJobs).
        if (!(*child)["spec"].value("suspend", false) && spec.value("suspend", false) &&
            !has_condition(*child, "Complete") && !job_failure(*child)) {
          (*child)["spec"]["suspend"] = true;
          update(jobs_t(), *child);
        }
        if (has_condition(*child, "Complete")) {
          counts["succeeded"] = counts["succeeded"].get<int>() + 1;
        } else if (job_failure(*child)) {
          counts["failed"] = counts["failed"].get<int>() + 1;
          failed.push_back(child);
          all_complete = false;
        } else {
          all_complete = false;
          if ((*child)["spec"].value("suspend", false))
            counts["suspended"] = counts["suspended"].get<int>() + 1;
          else
            counts["active"] = counts["active"].get<int>() + 1;
          int parallelism = (*child)["spec"].value("parallelism", 1);
          if ((*child)["status"].value("ready", 0) >= parallelism)
            counts["ready"] = counts["ready"].get<int>() + 1;
        }
      }
      rstatus.push_back(counts);
    }
    status["replicatedJobsStatus"] = rstatus;
    if (!status.contains("restarts")) status["restarts"] = 0;
    auto fail_jobset = [&](const std::string& reason, const std::string& message) {
      set_condition(status, "Failed", "True", reason, message, true);
      status["terminalState"] = "Failed";
      new_event(js, "Warning", reason, message, "jobset-controller");
    };
    auto restart = [&](bool counts_towards_max, const std::string& reason,
                       const std::string& message) {
      status["restarts"] = restarts + 1;
      if (counts_towards_max)
        status["restartsCountTowardsMax"] = status.value("restartsCountTowardsMax", 0) + 1;
      new_event(js, "Warning", reason, message, "jobset-controller");
      kick();
    };
    if (!failed.empty()) {
      // The rule of the first failed job it matches, rules in order (failure_policy.go).
      std::sort(failed.begin(), failed.end(), [](const json* a, const json* b) {
        return job_failure(*a)->value("lastTransitionTime", "") <
               job_failure(*b)->value("lastTransitionTime", "");
      });
      const std::string first =
          " (first failed job: " + (*failed[0])["metadata"].value("name", std::string()) + ")";
      if (!spec.contains("failurePolicy") || !spec["failurePolicy"].is_object()) {
        fail_jobset("FailedJobs", "jobset failed due to one or more job failures" + first);
      } else {
        const json& policy = spec["failurePolicy"];
        std::string action = "RestartJobSet";
        std::string matched_job = first;
        for (const auto& rule : policy.value("rules", json::array())) {
          auto hit = std::find_if(failed.begin(), failed.end(), [&](const json* j) {
            return rule_applies(rule, *j, *job_failure(*j));
          });
          if (hit == failed.end()) continue;
          action = rule.value("action", std::string("RestartJobSet"));
          matched_job =
              " (first failed job: " + (**hit)["metadata"].value("name", std::string()) + ")";
          break;
        }
        if (action == "FailJobSet") {
          fail_jobset("FailJobSetFailurePolicyAction",
                      "applying FailJobSet failure policy action" + matched_job);
        } else if (action == "RestartJobSetAndIgnoreMaxRestarts") {
          restart(false, "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction",
                  "applying RestartJobSetAndIgnoreMaxRestarts failure policy action" + matched_job);
        } else if (status.value("restartsCountTowardsMax", 0) >= policy.value("maxRestarts", 0)) {
          fail_jobset("ReachedMaxRestarts",
                      "jobset failed due to reaching max number of restarts" + matched_job);
        } else {
          restart(true, "RestartJobSetFailurePolicyAction",
                  "applying RestartJobSet failure policy action" + matched_job);
        }
      }
    } else if (all_complete) {
      set_condition(status, "Completed", "True", "AllJobsCompleted",
                    "jobset completed successfully", true);
      status["terminalState"] = "Completed";
      new_event(js, "Normal", "AllJobsCompleted", "jobset completed successfully",
                "jobset-controller");
    }
    if (status != js["status"]) {
      js["status"] = status;
      update(jobsets_t(), js);
    }
  }
}

// ---- kubelet ---------------------------------------------------------------------------------

void FakeKube::Impl::run_kubelet(std::optional<Steady::time_point>& next) {
  auto now = Steady::now();
  for (auto& [uid, prt] : pods) {
    if (prt->running && prt->kill_at) {
      if (now >= *prt->kill_at) {
        signal_group(prt->pid, SIGKILL);
        prt->kill_at.reset();
      } else if (!next || *prt->kill_at < *next) {
        next = *prt->kill_at;
      }
    }
  }
  for (auto* p : list(pods_t(), "")) {
    auto& pod = *p;
    auto node = pod["spec"].value("nodeName", std::string());
    if (node.empty() || terminal(pod) || pod["metadata"].contains("deletionTimestamp")) continue;
    auto& prt = runtime(pod);
    if (prt.started) continue;
    auto& c = pod["spec"]["containers"][0];
    auto image = c.value("image", std::string());
    auto& status = pod["status"];
    auto set_waiting = [&](const std::string& reason, const std::string& message) {
      auto& cs = status["containerStatuses"][0];
      json w = {{"reason", reason}};
      if (!message.empty()) w["message"] = message;
      cs["state"] = {{"waiting", w}};
      update(pods_t(), pod);
    };
    if (!prt.pulled) {
      std::string why;
      bool ok = !options.image_pullable || options.image_pullable(image, &why);
      if (prt.pull_stage == 0)
        new_event(pod, "Normal", "Pulling", "Pulling image \"" + image + "\"", "kubelet", node);
      if (!ok) {
        if (why.empty())
          why = "rpc error: code = NotFound desc = failed to pull and unpack image \"" + image +
                "\": failed to resolve reference \"" + image + "\": " + image + ": not found";
        if (prt.pull_stage == 0) {
          prt.pull_stage = 1;
          set_waiting("ErrImagePull", why);
          new_event(pod, "Warning", "Failed", "Failed to pull image \"" + image + "\": " + why,
                    "kubelet", node);
          new_event(pod, "Warning", "Failed", "Error: ErrImagePull", "kubelet", node);
          dirty = true;  // back-off on the next step
        } else if (prt.pull_stage == 1) {
          prt.pull_stage = 2;
          set_waiting("ImagePullBackOff", "Back-off pulling image \"" + image + "\"");
          new_event(pod, "Normal", "BackOff", "Back-off pulling image \"" + image + "\"", "kubelet",
                    node);
          new_event(pod, "Warning", "Failed", "Error: ImagePullBackOff", "kubelet", node);
        }
        continue;
      }
      prt.pulled = true;
      prt.pull_stage = 3;
      new_event(pod, "Normal", "Pulled",
                "Successfully pulled image \"" + image +
                    "\" in 1ms (1ms including waiting). Image size: 1048576 bytes.",
                "kubelet", node);
    }
    start_container(pod, prt);
  }
}

void FakeKube::Impl::start_container(json& pod, kube::PodRuntime& prt) {
  auto node = pod["spec"].value("nodeName", std::string());
  auto& c = pod["spec"]["containers"][0];
  auto ns = pod["metadata"]["namespace"].get<std::string>();
  auto& status = pod["status"];
  if (prt.dir.empty()) prt.dir = work_root + "/" + ns + "_" + prt.name + "_" + prt.uid.substr(0, 8);
  // The service account's token is mounted unless automountServiceAccountToken (the pod's, else
  // the ServiceAccount's) is false; without the account, the volume cannot be set up.
  const auto sa_name = pod["spec"].value("serviceAccountName", std::string("default"));
  json* sa = find(serviceaccounts_t(), ns, sa_name);
  bool automount = true;
  if (pod["spec"].contains("automountServiceAccountToken") &&
      pod["spec"]["automountServiceAccountToken"].is_boolean())
    automount = pod["spec"]["automountServiceAccountToken"].get<bool>();
  else if (sa && sa->contains("automountServiceAccountToken") &&
           (*sa)["automountServiceAccountToken"].is_boolean())
    automount = (*sa)["automountServiceAccountToken"].get<bool>();
  if (automount && !sa) {
    auto msg =
        "MountVolume.SetUp failed for volume \"kube-api-access\" : failed to fetch token: "
        "serviceaccounts \"" +
        sa_name + "\" not found";
    if (prt.config_error != msg) {
      prt.config_error = msg;
      new_event(pod, "Warning", "FailedMount", msg, "kubelet", node);
    }
    return;
  }
  // GKE's Cloud Storage FUSE CSI volumes, set up before the container starts: not without the
  // driver (the add-on), nor without the annotation that has GKE inject its sidecar, nor where
  // a process of this machine cannot have them (docs/fakes.md).
  std::string data_mount_root;
  for (const auto& v : pod["spec"].value("volumes", json::array())) {
    const json csi = v.value("csi", json::object());
    if (csi.value("driver", std::string()) != "gcsfuse.csi.storage.gke.io") continue;
    const auto volume = v.value("name", std::string());
    std::string mount_path;
    bool read_only = csi.value("readOnly", false);
    for (const auto& m : c.value("volumeMounts", json::array())) {
      if (m.value("name", std::string()) != volume) continue;
      mount_path = m.value("mountPath", std::string());
      read_only = read_only || m.value("readOnly", false);
    }
    const json annotations = pod["metadata"].value("annotations", json::object());
    const std::string modelled = "/mnt/kinetic-data/";
    std::string failure;
    if (!options.gcs_fuse_mount) {
      failure =
          "kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name "
          "gcsfuse.csi.storage.gke.io not found in the list of registered CSI drivers";
    } else if (annotations.value("gke-gcsfuse/volumes", std::string()) != "true") {
      failure =
          "rpc error: code = FailedPrecondition desc = failed to find the sidecar container in "
          "Pod spec";
    } else if (mount_path.rfind(modelled, 0) != 0) {
      failure = "kinetic fake kubelet: cannot mount at " + mount_path +
                " (pods are processes of this machine: only paths under " + modelled +
                " are modelled)";
    } else {
      failure = options.gcs_fuse_mount(ns, sa_name, csi.value("volumeAttributes", json::object()),
                                       prt.dir + mount_path, read_only);
    }
    if (!failure.empty()) {
      auto msg = "MountVolume.SetUp failed for volume \"" + volume + "\" : " + failure;
      if (prt.config_error != msg) {
        prt.config_error = msg;
        new_event(pod, "Warning", "FailedMount", msg, "kubelet", node);
      }
      return;
    }
    data_mount_root = prt.dir + modelled.substr(0, modelled.size() - 1);
  }
  // the environment: image defaults < kubelet's < pod_env < pod_identity_env < envFrom < env
  std::vector<std::pair<std::string, std::string>> env;
  std::map<std::string, std::string> vars;
  auto put = [&](const std::string& k, const std::string& v) {
    if (vars.count(k)) {
      for (auto& e : env)
        if (e.first == k) e.second = v;
    } else {
      env.push_back({k, v});
    }
    vars[k] = v;
  };
  if (options.image_env) {
    for (auto& [k, v] : options.image_env(c.value("image", std::string()))) put(k, v);
  } else {
    const char* path = std::getenv("PATH");
    put("PATH", path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  }
  put("HOSTNAME", pod["spec"].value("hostname", prt.name));
  put("HOME", prt.dir);
  put("TMPDIR", prt.dir);
  put("KUBERNETES_SERVICE_HOST", "127.0.0.1");
  put("KUBERNETES_SERVICE_PORT", std::to_string(port));
  put("KUBERNETES_SERVICE_PORT_HTTPS", std::to_string(port));
  if (automount) put("KINETIC_SERVICEACCOUNT_DIR", serviceaccount_dir(prt.dir));
  // The container's terminationMessagePath, which a process of this machine cannot be given at
  // /dev/termination-log: the bootstrap writes where this says (docs/fakes.md).
  put("KINETIC_TERMINATION_LOG", termination_log_path(prt.dir));
  // Where the fake mounted /mnt/kinetic-data (the bootstrap reads it there unless told).
  if (!data_mount_root.empty()) put("KINETIC_DATA_MOUNT_ROOT", data_mount_root);
  // The size of the pod's /dev/shm, which its processes cannot be given (docs/fakes.md).
  put("KINETIC_FAKE_DEV_SHM_BYTES", dev_shm_bytes(pod["spec"], c));
  for (auto& [k, v] : options.pod_env) put(k, v);
  if (options.pod_identity_env)
    for (auto& [k, v] : options.pod_identity_env(ns, sa_name)) put(k, v);
  std::string error;
  auto secret = [&](const std::string& name) -> json* { return find(secrets_t(), ns, name); };
  for (auto& from : c.value("envFrom", json::array())) {
    auto prefix = from.value("prefix", std::string());
    if (from.contains("secretRef")) {
      auto sname = from["secretRef"].value("name", std::string());
      json* s = secret(sname);
      if (!s) {
        if (!from["secretRef"].value("optional", false) && error.empty())
          error = "secret \"" + sname + "\" not found";
        continue;
      }
      const json data = s->value("data", json::object());
      for (auto& [k, v] : data.items()) put(prefix + k, base64_decode(v.get<std::string>()));
    } else if (from.contains("configMapRef")) {
      if (!from["configMapRef"].value("optional", false) && error.empty())
        error = "configmap \"" + from["configMapRef"].value("name", std::string()) + "\" not found";
    }
  }
  for (auto& e : c.value("env", json::array())) {
    auto name = e.value("name", std::string());
    if (e.contains("value")) {
      put(name, expand(e["value"].get<std::string>(), vars));
    } else if (e.contains("valueFrom")) {
      auto& vf = e["valueFrom"];
      if (vf.contains("secretKeyRef")) {
        auto sname = vf["secretKeyRef"].value("name", std::string());
        auto key = vf["secretKeyRef"].value("key", std::string());
        bool optional = vf["secretKeyRef"].value("optional", false);
        json* s = secret(sname);
        if (!s) {
          if (!optional && error.empty()) error = "secret \"" + sname + "\" not found";
        } else if (!(*s).value("data", json::object()).contains(key)) {
          if (!optional && error.empty())
            error = "couldn't find key " + key + " in Secret " + ns + "/" + sname;
        } else {
          put(name, base64_decode((*s)["data"][key].get<std::string>()));
        }
      } else if (vf.contains("fieldRef")) {
        put(name, field_ref(pod, vf["fieldRef"].value("fieldPath", std::string())));
      } else if (vf.contains("configMapKeyRef")) {
        if (!vf["configMapKeyRef"].value("optional", false) && error.empty())
          error =
              "configmap \"" + vf["configMapKeyRef"].value("name", std::string()) + "\" not found";
      } else {
        put(name, "");
      }
    } else {
      put(name, "");
    }
  }
  if (!error.empty()) {
    if (prt.config_error != error) {
      prt.config_error = error;
      status["containerStatuses"][0]["state"] = {
          {"waiting", {{"reason", "CreateContainerConfigError"}, {"message", error}}}};
      update(pods_t(), pod);
      new_event(pod, "Warning", "Failed", "Error: " + error, "kubelet", node);
    }
    return;
  }
  std::vector<std::string> argv;
  for (auto& a : c.value("command", json::array()))
    argv.push_back(expand(a.get<std::string>(), vars));
  for (auto& a : c.value("args", json::array())) argv.push_back(expand(a.get<std::string>(), vars));
  auto now = SysClock::now();
  auto container_id = "containerd://" + hex_id(64);
  std::string exe = argv.empty() ? std::string() : lookup_path(argv[0], vars["PATH"]);
  std::error_code ec;
  std::filesystem::create_directories(prt.dir, ec);
  if (automount) {
    // token, ca.crt and namespace, as the projected volume kube-api-access-* holds them
    const auto sa_dir = serviceaccount_dir(prt.dir);
    std::filesystem::create_directories(sa_dir, ec);
    write_file(sa_dir + "/token", mint_token(*sa, &pod, std::nullopt));
    write_file(sa_dir + "/ca.crt", ca_pem);
    write_file(sa_dir + "/namespace", ns);
  }
  if (exe.empty()) {
    auto msg = argv.empty() ? std::string("failed to create containerd task: no command specified")
                            : "failed to create containerd task: failed to create shim task: OCI "
                              "runtime create failed: runc create failed: unable to start "
                              "container process: exec: \"" +
                                  argv[0] + "\": executable file not found in $PATH: unknown";
    new_event(pod, "Normal", "Created", "Created container: " + c.value("name", std::string()),
              "kubelet", node);
    new_event(pod, "Warning", "Failed", "Error: " + msg, "kubelet", node);
    prt.started = true;
    prt.log_done = true;
    prt.exited = true;
    prt.exit_code = 128;
    prt.started_at = prt.finished_at = now;
    auto& cs = status["containerStatuses"][0];
    cs["state"] = {{"terminated",
                    {{"exitCode", 128},
                     {"reason", "StartError"},
                     {"message", msg},
                     {"startedAt", "1970-01-01T00:00:00Z"},
                     {"finishedAt", rfc3339(now)},
                     {"containerID", container_id}}}};
    cs["containerID"] = container_id;
    status["phase"] = "Failed";
    set_condition(status, "Ready", "False", "PodFailed");
    update(pods_t(), pod);
    pod_terminal(pod);
    return;
  }
  // everything the child needs is built before fork(): it only makes async-signal-safe calls
  std::vector<std::string> env_s;
  for (auto& [k, v] : env) env_s.push_back(k + "=" + v);
  std::vector<char*> argv_p, env_p;
  for (auto& a : argv) argv_p.push_back(const_cast<char*>(a.c_str()));
  argv_p.push_back(nullptr);
  for (auto& e : env_s) env_p.push_back(const_cast<char*>(e.c_str()));
  env_p.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  sigset_t empty;
  sigemptyset(&empty);
  const char* dir = prt.dir.c_str();
  const char* exe_c = exe.c_str();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2})
      ::sigaction(sig, &dfl, nullptr);
    ::sigprocmask(SIG_SETMASK, &empty, nullptr);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    if (::chdir(dir) != 0) ::_exit(127);
    ::execve(exe_c, argv_p.data(), env_p.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return;
  }
  ::setpgid(pid, pid);
  prt.env = env_s;
  prt.pid = pid;
  prt.out_fd = fds[0];
  prt.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  prt.running = true;
  prt.started = true;
  prt.started_at = now;
  auto cname = c.value("name", std::string());
  new_event(pod, "Normal", "Created", "Created container: " + cname, "kubelet", node);
  new_event(pod, "Normal", "Started", "Started container " + cname, "kubelet", node);
  status["phase"] = "Running";
  status["podIP"] = "127.0.0.1";
  status["podIPs"] = {{{"ip", "127.0.0.1"}}};
  set_condition(status, "PodReadyToStartContainers", "True");
  set_condition(status, "Initialized", "True");
  set_condition(status, "Ready", "True");
  set_condition(status, "ContainersReady", "True");
  for (auto& cs : status["containerStatuses"]) {
    cs["state"] = {{"running", {{"startedAt", rfc3339(now)}}}};
    cs["ready"] = true;
    cs["started"] = true;
    cs["containerID"] = container_id;
    cs["imageID"] = cs.value("image", std::string()) + "@sha256:" + hex_id(64);
  }
  // A readiness probe decides when it is Ready (probe_readiness); other pods are at once.
  if (has_readiness_probe(pod))
    set_pod_ready(pod, false);
  else
    update(pods_t(), pod);
  prt.reaper = std::thread([this, p = &prt] { reap(p); });
}

void FakeKube::Impl::reap(kube::PodRuntime* prt) {
  const int fd = prt->out_fd;
  const int pidfd = prt->pidfd;
  const pid_t pid = prt->pid;
  bool eof = false, exited = false;
  int status = 0;
  char buf[16384];
  auto append = [&](const char* data, std::size_t n) {
    std::lock_guard lock(mu);
    prt->partial.append(data, n);
    auto now = SysClock::now();
    std::size_t start = 0, nl;
    while ((nl = prt->partial.find('\n', start)) != std::string::npos) {
      prt->log.push_back({now, prt->partial.substr(start, nl - start + 1)});
      start = nl + 1;
    }
    prt->partial.erase(0, start);
    changed.notify_all();
  };
  while (!(eof && exited)) {
    pollfd p[2];
    int n = 0, pidx = -1;
    if (!eof) p[n++] = {fd, POLLIN, 0};
    if (!exited && pidfd >= 0) {
      pidx = n;
      p[n++] = {pidfd, POLLIN, 0};
    }
    if (n == 0) {  // no pidfd: the output ended, wait for the process itself
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      std::lock_guard lock(mu);
      prt->running = false;
      for (pid_t e : prt->exec_pids) ::kill(-e, SIGKILL);  // exec'd commands die with it
      exited = true;
      continue;
    }
    // Once the process is gone (and its group killed), the output drains quickly; a descendant
    // that escaped the group must not hold the pod open forever.
    int r = ::poll(p, static_cast<nfds_t>(n), exited ? 2000 : -1);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      eof = true;
      continue;
    }
    if (!eof && p[0].revents) {
      ssize_t got = ::read(fd, buf, sizeof buf);
      if (got > 0)
        append(buf, static_cast<std::size_t>(got));
      else if (got == 0 || (errno != EINTR && errno != EAGAIN))
        eof = true;
    }
    if (pidx >= 0 && p[pidx].revents) {
      {
        // still a zombie: its pid (and process group) cannot be reused yet
        std::lock_guard lock(mu);
        prt->running = false;
        ::kill(-pid, SIGKILL);  // the rest of the container goes with its main process
        for (pid_t e : prt->exec_pids) ::kill(-e, SIGKILL);  // exec'd commands too
      }
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      exited = true;
    }
  }
  ::close(fd);
  if (pidfd >= 0) ::close(pidfd);
  std::lock_guard lock(mu);
  if (!prt->partial.empty()) {
    prt->log.push_back({SysClock::now(), prt->partial});
    prt->partial.clear();
  }
  prt->running = false;
  prt->exited = true;
  if (WIFEXITED(status)) {
    prt->exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    prt->signal = WTERMSIG(status);
    prt->exit_code = 128 + prt->signal;
  }
  prt->finished_at = SysClock::now();
  prt->kill_at.reset();
  if (hold_exit_reports)
    held_exits.push_back(prt->uid);
  else
    on_exit(*prt);
  prt->log_done = true;
  changed.notify_all();
  kick();
}

void FakeKube::Impl::on_exit(kube::PodRuntime& prt) {
  json* p = find(pods_t(), prt.ns, prt.name);
  if (!p || (*p)["metadata"].value("uid", "") != prt.uid) return;
  auto& pod = *p;
  auto& status = pod["status"];
  bool ok = prt.exit_code == 0;
  auto finished = rfc3339(prt.finished_at);
  bool first = true;
  for (auto& cs : status["containerStatuses"]) {
    json term = {{"exitCode", first ? prt.exit_code : 0},
                 {"reason", (!first || ok) ? "Completed" : "Error"},
                 {"startedAt", rfc3339(prt.started_at)},
                 {"finishedAt", finished},
                 {"containerID", cs.value("containerID", std::string())}};
    // The kubelet reads the file at terminationMessagePath into the terminated state's
    // message (the Pod API's terminationMessagePath).
    if (const std::string message = termination_message(prt.dir); first && !message.empty())
      term["message"] = message;
    cs["state"] = {{"terminated", term}};
    cs["ready"] = false;
    cs["started"] = false;
    first = false;
  }
  // A pod stopped by its node's shutdown fails whatever its container exited with, as the
  // kubelet's node shutdown manager records it.
  if (prt.disrupted) {
    ok = false;
    status["reason"] = "Terminated";
    status["message"] = "Pod was terminated in response to imminent node shutdown.";
  }
  status["phase"] = ok ? "Succeeded" : "Failed";
  auto reason = ok ? "PodCompleted" : "PodFailed";
  set_condition(status, "PodReadyToStartContainers", "False");
  set_condition(status, "Ready", "False", reason);
  set_condition(status, "ContainersReady", "False", reason);
  update(pods_t(), pod);
  pod_terminal(pod);
  const std::string node = pod["spec"].value("nodeName", std::string());
  if (pod["metadata"].contains("deletionTimestamp")) erase(pods_t(), prt.ns, prt.name);
  retire_node_if_idle(node);
}

void FakeKube::Impl::terminate_pod(json& pod, int grace_seconds, bool record_event) {
  auto& prt = runtime(pod);
  if (!prt.running) return;
  if (record_event)
    new_event(pod, "Normal", "Killing",
              "Stopping container " + pod["spec"]["containers"][0].value("name", std::string()),
              "kubelet", pod["spec"].value("nodeName", std::string()));
  if (grace_seconds <= 0) {
    signal_group(prt.pid, SIGKILL);
    prt.term_sent = true;
    return;
  }
  if (!prt.term_sent) {
    prt.term_sent = true;
    signal_group(prt.pid, SIGTERM);
    prt.kill_at = Steady::now() + std::chrono::seconds(grace_seconds);
    kick();
  }
}

// ---- node shutdown (Spot preemption) -------------------------------------------------------

bool FakeKube::Impl::preempt_node_of(const std::string& ns, const std::string& pod_name) {
  json* target = find(pods_t(), ns, pod_name);
  if (!target) return false;
  const std::string node = (*target)["spec"].value("nodeName", std::string());
  if (node.empty()) return false;
  if (json* n = find(nodes_t(), "", node)) {
    // Cordoned, as the node shutdown manager leaves it: nothing new lands there.
    (*n)["spec"]["unschedulable"] = true;
    auto& taints = (*n)["spec"]["taints"];
    if (!taints.is_array()) taints = json::array();
    taints.push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}});
    update(nodes_t(), *n);
  }
  retiring_nodes.insert(node);
  for (json* p : list(pods_t(), "")) {
    if ((*p)["spec"].value("nodeName", std::string()) != node || terminal(*p)) continue;
    auto& prt = runtime(*p);
    prt.disrupted = true;
    set_condition((*p)["status"], "DisruptionTarget", "True", "TerminationByKubelet",
                  "Pod was terminated in response to imminent node shutdown.");
    update(pods_t(), *p);
    if (prt.running) {
      terminate_pod(*p, (*p)["spec"].value("terminationGracePeriodSeconds", 30), true);
    } else {
      // Not started yet: it fails at once.
      (*p)["status"]["phase"] = "Failed";
      (*p)["status"]["reason"] = "Terminated";
      (*p)["status"]["message"] = "Pod was terminated in response to imminent node shutdown.";
      update(pods_t(), *p);
      pod_terminal(*p);
    }
  }
  retire_node_if_idle(node);
  kick();
  return true;
}

void FakeKube::Impl::retire_node_if_idle(const std::string& node) {
  if (!retiring_nodes.count(node)) return;
  for (json* p : list(pods_t(), ""))
    if ((*p)["spec"].value("nodeName", std::string()) == node && !terminal(*p)) return;
  retiring_nodes.erase(node);
  json* n = find(nodes_t(), "", node);
  if (!n) return;
  const std::string pool =
      (*n)["metadata"].value("labels", json::object()).value("cloud.google.com/gke-nodepool", "");
  erase(nodes_t(), "", node);
  if (pools.count(pool) && pools[pool].pool.nodes > 0) --pools[pool].pool.nodes;
  dirty = true;
}

void FakeKube::Impl::kill_all() {
  std::vector<std::thread*> reapers;
  {
    std::lock_guard lock(mu);
    for (auto& [uid, prt] : pods) {
      if (prt->running) signal_group(prt->pid, SIGKILL);
      if (prt->reaper.joinable()) reapers.push_back(&prt->reaper);
    }
  }
  for (auto* t : reapers) t->join();
}

}  // namespace kinetic::fakes
