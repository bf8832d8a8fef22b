// Why a pod is pending. Decisions:
// - Precedence: a container that cannot start (image pull, config error) > FailedScaleUp >
//   TriggeredScaleUp (when it is the latest autoscaler event) > no node pool fits (Unschedulable
//   with NotTriggerScaleUp or no autoscaler event yet) > waiting for the scheduler.
// - NotTriggerScaleUp saying "max node group size reached" is not "no pool": a pool fits but is
//   full, so waiting helps (kind scheduling). "in backoff after failed scale-up" is a failed
//   scale-up whose FailedScaleUp event has aged out (kind scale_failed).
// - Events are ordered by their last time (lastTimestamp, series.lastObservedTime, eventTime,
//   firstTimestamp) when every one has a time, else taken in the order given.
// - Messages keep the server's words in parentheses or after a colon and end with what to do.
#include "backend/gke/pending_reason.h"

#include <algorithm>
#include <regex>

#include "core/strings.h"
#include "gcp/json_fields.h"
#include "job/catalog.h"
#include "k8s/timestamp.h"

namespace kinetic::gke {
namespace {

using k8s::parse_timestamp;
using k8s::Timestamp;
using nlohmann::json;

constexpr const char* kTpuAccelerator = "cloud.google.com/gke-tpu-accelerator";
constexpr const char* kGpuAccelerator = "cloud.google.com/gke-accelerator";
constexpr const char* kNodePool = "cloud.google.com/gke-nodepool";
constexpr const char* kSpot = "cloud.google.com/gke-spot";
constexpr const char* kFlexStart = "cloud.google.com/gke-flex-start";

using gcp::member;
using gcp::str;

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

long quantity(const json& q) {
  if (q.is_number_integer()) return q.get<long>();
  if (q.is_string()) {
    try {
      return std::stol(q.get<std::string>());
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

// google.com/tpu or nvidia.com/gpu asked for by one of the pod's containers.
long accelerator_request(const json& pod) {
  const json& containers = member(member(pod, "spec"), "containers");
  if (!containers.is_array()) return 0;
  for (const auto& c : containers) {
    const json& resources = member(c, "resources");
    for (const char* kind : {"limits", "requests"}) {
      const json& amounts = member(resources, kind);
      for (const char* name : {"google.com/tpu", "nvidia.com/gpu"}) {
        long n = quantity(member(amounts, name));
        if (n > 0) return n;
      }
    }
  }
  return 0;
}

std::string accelerator_hint(const json& pod, const std::map<std::string, std::string>& selector) {
  if (!selector.count(kTpuAccelerator) && !selector.count(kGpuAccelerator)) return "cpu";
  long requested = accelerator_request(pod);
  std::string by_selector;
  for (const auto& a : accelerator_catalog()) {
    if (a.family == AcceleratorFamily::cpu || a.node_selector.empty()) continue;
    bool match = std::all_of(a.node_selector.begin(), a.node_selector.end(), [&](const auto& kv) {
      auto it = selector.find(kv.first);
      return it != selector.end() && it->second == kv.second;
    });
    if (!match) continue;
    if (requested > 0 && a.chips_per_host == requested) return a.name;
    if (by_selector.empty()) by_selector = a.name;
  }
  return by_selector;
}

std::optional<Timestamp> event_time(const json& e) {
  for (const std::string& t :
       {str(e, "lastTimestamp"), str(member(e, "series"), "lastObservedTime"), str(e, "eventTime"),
        str(e, "firstTimestamp"), str(member(e, "metadata"), "creationTimestamp")}) {
    if (auto parsed = parse_timestamp(t)) return parsed;
  }
  return std::nullopt;
}

std::vector<const json*> ordered(const std::vector<json>& events) {
  std::vector<std::pair<Timestamp, const json*>> timed;
  std::vector<const json*> out;
  bool all_timed = true;
  for (const auto& e : events) {
    out.push_back(&e);
    if (auto t = event_time(e)) {
      timed.emplace_back(*t, &e);
    } else {
      all_timed = false;
    }
  }
  if (!all_timed) return out;
  std::stable_sort(timed.begin(), timed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < timed.size(); ++i) out[i] = timed[i].second;
  return out;
}

// The first container (init containers first) waiting for REASONS, with its name.
struct Waiting {
  std::string container;
  std::string reason;
  std::string message;
  std::string image;
};

std::optional<Waiting> waiting_container(const json& pod) {
  const json& status = member(pod, "status");
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    const json& statuses = member(status, list);
    if (!statuses.is_array()) continue;
    for (const auto& cs : statuses) {
      const json& waiting = member(member(cs, "state"), "waiting");
      std::string reason = str(waiting, "reason");
      if (reason.empty()) continue;
      if (reason == "ErrImagePull" || reason == "ImagePullBackOff" ||
          reason == "InvalidImageName" || reason == "ErrImageNeverPull" ||
          reason == "RegistryUnavailable" || reason == "CreateContainerConfigError") {
        return Waiting{str(cs, "name"), reason, one_line(str(waiting, "message")),
                       str(cs, "image")};
      }
    }
  }
  return std::nullopt;
}

std::string spec_image(const json& pod, const std::string& container) {
  for (const char* list : {"initContainers", "containers"}) {
    const json& containers = member(member(pod, "spec"), list);
    if (!containers.is_array()) continue;
    for (const auto& c : containers) {
      if (str(c, "name") == container) return str(c, "image");
    }
  }
  return {};
}

// "Failed to pull image \"IMG\": rpc error: ..." → "rpc error: ..."
std::string without_pull_prefix(std::string message, const std::string& image) {
  for (std::string prefix :
       {"Failed to pull image \"" + image + "\": ", "failed to pull image \"" + image + "\": ",
        "Back-off pulling image \"" + image + "\": "}) {
    if (message.rfind(prefix, 0) == 0) return message.substr(prefix.size());
  }
  return message;
}

PendingReason container_problem(const json& pod, const std::vector<const json*>& events,
                                const Waiting& w) {
  PendingReason out;
  out.fatal = true;
  if (w.reason == "CreateContainerConfigError") {
    out.kind = PendingKind::config_error;
    out.detail = w.message;
    std::string said = trim_period(w.message);
    out.message = "cannot start container " + w.container + ": " +
                  (said.empty() ? "its configuration is invalid" : said) +
                  "; check the job's secrets and environment";
    return out;
  }
  out.kind = PendingKind::image_pull;
  std::string image = spec_image(pod, w.container);
  if (image.empty()) image = w.image;
  // The kubelet's "Failed" event carries the registry's answer; ImagePullBackOff's own message
  // only says it is backing off.
  std::string said;
  if (w.reason != "ImagePullBackOff") said = w.message;
  for (auto it = events.rbegin(); said.empty() && it != events.rend(); ++it) {
    const json& e = **it;
    std::string message = one_line(str(e, "message"));
    if (str(e, "reason") == "Failed" && (contains(message, "pull") || contains(message, "image")))
      said = message;
  }
  if (said.empty()) said = w.message;
  if (said.empty()) said = w.reason;
  out.detail = said;
  said = trim_period(without_pull_prefix(said, image));
  out.message =
      "cannot pull image " + (image.empty() ? std::string("(unknown)") : image) + ": " + said;
  return out;
}

// "Node scale up in zones us-west4-a associated with this pod failed: GCE quota exceeded. Pod
// is at risk of not being scheduled." → "cannot add a node: GCE quota exceeded in us-west4-a;
// request more quota or try another zone".
std::string scale_failed_message(const std::string& message) {
  static const std::regex shape(
      R"(Node scale up in zones? (.+?) associated with this pod failed: (.+?)\.?(?: Pod is at risk of not being scheduled\.?)?$)");
  std::smatch m;
  std::string zones, cause;
  if (std::regex_search(message, m, shape)) {
    zones = m[1].str();
    cause = trim_period(m[2].str());
  } else {
    cause = trim_period(message);
    static const std::regex prefix(R"(^[^:]*scale[- ]up[^:]*failed: )", std::regex::icase);
    cause = std::regex_replace(cause, prefix, "");
  }
  if (cause.empty()) cause = "the cluster autoscaler could not create one";
  std::string lower = cause;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  std::string advice;
  if (contains(lower, "quota")) {
    advice = "request more quota or try another zone";
  } else if (contains(lower, "out of resources") || contains(lower, "resource pool exhausted") ||
             contains(lower, "stockout") || contains(lower, "does not have enough resources")) {
    advice =
        "the zone has no free capacity for this machine type now; try another zone, a "
        "reservation or --spot, or wait";
  } else if (contains(lower, "ip space")) {
    advice = "the cluster has no free IP addresses for new nodes; enlarge its IP ranges";
  } else {
    advice = "check the node pool with `kinetic status`";
  }
  return "cannot add a node: " + cause + (zones.empty() ? "" : " in " + zones) + "; " + advice;
}

// "pod triggered scale-up: [{https://.../instanceGroups/gke-kinetic-v5e-4-1a2b3c4d-grp 0->1
// (max: 4)}]" → "scale-up of pool kinetic-v5e-4 triggered (0->1)".
std::string scaling_up_message(const std::string& message,
                               const std::map<std::string, std::string>& selector) {
  static const std::regex group(R"(\{?([^\s{\[]+)\s+(\d+)->(\d+)\s*\(max: (\d+)\)\}?)");
  std::vector<std::string> parts;
  auto pool_selected = selector.find(kNodePool);
  for (auto it = std::sregex_iterator(message.begin(), message.end(), group);
       it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1].str();
    if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    static const std::regex mig(R"(^gke-(.+?)(?:-[0-9a-f]{8})?-grp$)");
    std::smatch m;
    if (std::regex_match(name, m, mig)) name = m[1].str();
    if (pool_selected != selector.end() && contains(name, pool_selected->second))
      name = pool_selected->second;
    parts.push_back(name + " (" + (*it)[2].str() + "->" + (*it)[3].str() + ")");
  }
  if (parts.empty()) {
    std::string said = trim_period(message);
    return "waiting for a node: scale-up triggered" + (said.empty() ? "" : " (" + said + ")");
  }
  if (parts.size() == 1) {
    auto paren = parts[0].rfind(" (");
    return "waiting for a node: scale-up of pool " + parts[0].substr(0, paren) + " triggered" +
           parts[0].substr(paren);
  }
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
  return "waiting for a node: scale-up of pools " + joined + " triggered";
}

// "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption:
// ..." → "0/3 nodes: 3 node(s) didn't match Pod's node affinity/selector".
std::string scheduler_summary(const std::string& message) {
  std::string m = message;
  if (auto p = m.find(" preemption:"); p != std::string::npos) m = m.substr(0, p);
  m = trim_period(m);
  static const std::regex nodes(R"(^(\d+/\d+) nodes are available:?\s*)");
  std::smatch match;
  if (std::regex_search(m, match, nodes)) m = match[1].str() + " nodes: " + match.suffix().str();
  return trim_period(m);
}

// What the pod's PodScheduled condition says.
struct Scheduling {
  bool scheduled = false;
  bool unschedulable = false;
  std::string scheduler_message;
};

Scheduling scheduling_of(const json& pod) {
  Scheduling s;
  s.scheduled = !str(member(pod, "spec"), "nodeName").empty();
  if (const json& conditions = member(member(pod, "status"), "conditions"); conditions.is_array()) {
    for (const auto& c : conditions) {
      if (str(c, "type") != "PodScheduled") continue;
      if (str(c, "status") == "True") s.scheduled = true;
      if (str(c, "status") == "False" && str(c, "reason") == "Unschedulable") {
        s.unschedulable = true;
        s.scheduler_message = one_line(str(c, "message"));
      }
    }
  }
  return s;
}

// A scheduled pod the kubelet cannot set up a volume for (a --data gs:// bucket the pods may not
// read): its latest FailedMount says why. It keeps trying, so the caller decides when to give up.
PendingReason mount_problem(const std::vector<const json*>& events) {
  const json* mount = nullptr;
  for (const json* e : events)
    if (str(*e, "reason") == "FailedMount") mount = e;
  if (mount == nullptr) return {};
  PendingReason out;
  out.kind = PendingKind::mount_failed;
  out.detail = one_line(str(*mount, "message"));
  out.message = "cannot mount the job's volumes: " + trim_period(out.detail);
  return out;
}

// An unschedulable pod the autoscaler did not scale up for (AUTO_MESSAGE: its latest word):
// backing off, the pool at its maximum, or no pool that fits (with the command that adds one).
PendingReason unschedulable_reason(const json& pod,
                                   const std::map<std::string, std::string>& selector,
                                   const std::string& auto_message,
                                   const std::string& scheduler_message) {
  PendingReason out;
  std::string why = auto_message;
  static const std::string kNot = "pod didn't trigger scale-up: ";
  if (why.rfind(kNot, 0) == 0) why = why.substr(kNot.size());
  why = trim_period(why);
  if (contains(auto_message, "in backoff after failed scale-up")) {
    out.kind = PendingKind::scale_failed;
    out.detail = auto_message;
    out.message = "cannot add a node: a recent scale-up failed and the node pool is in backoff (" +
                  why + "); the autoscaler retries later";
    return out;
  }
  if (contains(auto_message, "max node group size reached")) {
    out.kind = PendingKind::scheduling;
    out.detail = auto_message;
    out.message = "waiting for capacity: the node pool that fits is at its maximum size (" + why +
                  "); it frees up as running jobs finish, or raise the pool's --max-nodes";
    return out;
  }
  out.kind = PendingKind::no_pool;
  out.detail = scheduler_message.empty() ? auto_message : scheduler_message;
  std::string summary = scheduler_message.empty() ? why : scheduler_summary(scheduler_message);
  if (contains(summary, "no nodes available")) summary = "the cluster has no nodes";
  std::string accelerator = accelerator_hint(pod, selector);
  auto spot = selector.find(kSpot);
  auto flex_start = selector.find(kFlexStart);
  std::string command =
      "kinetic pool add --accelerator " +
      (accelerator.empty() ? std::string("ACCELERATOR") : accelerator) +
      (spot != selector.end() && spot->second == "true" ? " --spot" : "") +
      (flex_start != selector.end() && flex_start->second == "true" ? " --flex-start" : "");
  out.message = "no node pool fits this job" + (summary.empty() ? "" : " (" + summary + ")") +
                "; add one with `" + command + "`";
  return out;
}

// Why a pod that is neither scheduled nor stuck on a container waits: the autoscaler's latest
// word (failed, triggered) or the scheduler's.
PendingReason unscheduled_reason(const json& pod, const std::vector<const json*>& events,
                                 const std::map<std::string, std::string>& selector,
                                 Scheduling scheduling) {
  const json* failed = nullptr;
  const json* autoscaler = nullptr;  // the latest autoscaler event
  const json* failed_scheduling = nullptr;
  for (const json* e : events) {
    std::string reason = str(*e, "reason");
    if (reason == "FailedScaleUp") failed = e;
    if (reason == "FailedScaleUp" || reason == "TriggeredScaleUp" || reason == "NotTriggerScaleUp")
      autoscaler = e;
    if (reason == "FailedScheduling") failed_scheduling = e;
  }
  if (failed_scheduling) {
    scheduling.unschedulable = true;
    if (scheduling.scheduler_message.empty())
      scheduling.scheduler_message = one_line(str(*failed_scheduling, "message"));
  }
  PendingReason out;
  if (failed) {
    out.kind = PendingKind::scale_failed;
    out.detail = one_line(str(*failed, "message"));
    out.message = scale_failed_message(out.detail);
    return out;
  }
  std::string auto_reason = autoscaler ? str(*autoscaler, "reason") : "";
  std::string auto_message = autoscaler ? one_line(str(*autoscaler, "message")) : "";
  if (auto_reason == "TriggeredScaleUp") {
    out.kind = PendingKind::scaling_up;
    out.detail = auto_message;
    out.message = scaling_up_message(auto_message, selector);
    return out;
  }
  if (scheduling.unschedulable)
    return unschedulable_reason(pod, selector, auto_message, scheduling.scheduler_message);
  out.kind = PendingKind::scheduling;
  out.detail = auto_message;
  out.message = "waiting for the scheduler";
  return out;
}

// A flex-start pod whose pool is scaling up, or whose scale-up found no capacity, is queued: with
// flex-start, waiting for GKE to find the capacity is the normal course, not a trouble. A
// scale-up that failed for another reason (quota) stays one: waiting will not fix it. The caller
// says for how long (it knows the time).
PendingReason as_queued(PendingReason r, const std::map<std::string, std::string>& selector) {
  auto flex_start = selector.find(kFlexStart);
  if (flex_start == selector.end() || flex_start->second != "true") return r;
  const bool no_capacity =
      r.kind == PendingKind::scale_failed && contains(r.message, "no free capacity");
  if (r.kind != PendingKind::scaling_up && !no_capacity) return r;
  r.kind = PendingKind::queued;
  r.message = "waiting for capacity";
  return r;
}

}  // namespace

PendingReason pending_reason(const json& pod, const std::vector<json>& events) {
  std::map<std::string, std::string> selector;
  if (const json& s = member(member(pod, "spec"), "nodeSelector"); s.is_object()) {
    for (const auto& [k, v] : s.items()) {
      if (v.is_string()) selector.emplace(k, v.get<std::string>());
    }
  }
  auto finish = [&](PendingReason r) {
    r.node_selector = selector;
    r.accelerator = accelerator_hint(pod, selector);
    return r;
  };
  const std::string phase = str(member(pod, "status"), "phase");
  if (phase == "Running" || phase == "Succeeded" || phase == "Failed") return finish({});
  const std::vector<const json*> sorted = ordered(events);
  if (auto w = waiting_container(pod)) return finish(container_problem(pod, sorted, *w));
  const Scheduling scheduling = scheduling_of(pod);
  // Scheduled: the kubelet is starting it.
  if (scheduling.scheduled) return finish(mount_problem(sorted));
  return finish(as_queued(unscheduled_reason(pod, sorted, selector, scheduling), selector));
}

}  // namespace kinetic::gke
