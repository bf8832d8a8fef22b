// Why a pod is not running yet, in one line a user can act on (run step 6 "watch"), from the
// pod's status and its events (docs/gcp-api.md §7.3, §7.4): no node pool matches, scale-up
// triggered, FailedScaleUp or quota, ErrImagePull/ImagePullBackOff. GKE's reading (its node labels,
// its autoscaler's messages, kinetic's accelerator catalog), so it lives with the gke backend.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinetic::gke {

enum class PendingKind {
  none,          // scheduled and starting (or running): nothing to say
  scheduling,    // waiting for the scheduler
  scaling_up,    // TriggeredScaleUp: waiting for a node
  queued,        // a flex-start pod waiting for GKE to find the capacity (docs/capacity.md)
  no_pool,       // no node pool can ever fit it (NotTriggerScaleUp / Unschedulable, no scale-up)
  scale_failed,  // FailedScaleUp: out of resources, quota
  image_pull,    // ErrImagePull / ImagePullBackOff / InvalidImageName
  config_error,  // CreateContainerConfigError (e.g. a missing Secret)
  mount_failed,  // FailedMount: a volume cannot be set up (e.g. a --data bucket not readable)
};

struct PendingReason {
  PendingKind kind = PendingKind::none;
  std::string message;  // one line, e.g. "waiting for a node: pool v5e-4 scaling up 0->1"
  // Whether waiting cannot help (image pull, config error); no_pool becomes fatal after a grace
  // period decided by the caller.
  bool fatal = false;
  // The raw facts, for callers that word things their own way:
  std::string detail;  // the scheduler, autoscaler or kubelet message the line was made from
  std::map<std::string, std::string> node_selector;  // the pod's spec.nodeSelector
  // The catalog accelerator the node selector (and the pod's TPU/GPU request) asks for, e.g.
  // "v5litepod-4", "l4"; "cpu" without accelerator labels; empty when the catalog has no match.
  std::string accelerator;
};

// POD: the Pod object; EVENTS: the Events whose involvedObject is the pod, oldest first.
PendingReason pending_reason(const nlohmann::json& pod, const std::vector<nlohmann::json>& events);

}  // namespace kinetic::gke
