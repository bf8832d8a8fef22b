// Kueue on the cluster (docs/capacity.md "Queueing"): several people share one cluster without a
// half-scheduled slice holding nodes another needs, and without one sweep starving the rest.
// `kinetic up --queue` installs a pinned Kueue release (release.h, as JobSet is) and writes, for
// each accelerator the cluster has pools of, a ResourceFlavor (the accelerator's node labels), a
// ClusterQueue whose quota is what those pools can hold at most, and a LocalQueue in the jobs'
// namespace. `run` on such a cluster labels its Job or JobSet with the LocalQueue and creates it
// suspended; Kueue admits it whole when the quota has room and unsuspends it, and may suspend it
// again to admit a higher-priority one (an eviction, which kinetic counts as a preemption). The
// quotas follow `pool add` and `pool remove` (follow_pools).
// The fields are Kueue v0.17.1's kueue.x-k8s.io/v1beta2 (docs/gke-conformance.md "Kueue").
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cluster.h"
#include "backend/gke/release.h"
#include "job/catalog.h"

namespace kinetic::gke {

// The release xpk pins (src/xpk/core/kueue_manager.py KUEUE_VERSION).
inline constexpr const char* kKueueVersion = "v0.17.1";
// EMPTY for the reason kJobSetManifestsSha256 is (jobset_release.h).
inline constexpr const char* kKueueManifestsSha256 = "";
inline constexpr const char* kKueueNamespace = "kueue-system";
inline constexpr const char* kKueueApi = "/apis/kueue.x-k8s.io/v1beta2";
// pkg/controller/constants/constants.go QueueLabel: the LocalQueue a Job or JobSet goes to.
inline constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";
// pkg/controller/constants/constants.go WorkloadPriorityClassLabel: the job's priority class.
inline constexpr const char* kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
// apis/kueue/v1beta2/clusterqueue_types.go: a ClusterQueue admits by its LocalQueues' usage first.
inline constexpr const char* kFairAdmissionMode = "UsageBasedAdmissionFairSharing";
// Marks the queue objects kinetic wrote, so that `up --queue off` removes only those.
inline constexpr const char* kKueueManagedBy = "kinetic";

const Release& kueue_release();

// The ResourceFlavor, ClusterQueue and LocalQueue of ACCELERATOR are all named this:
// "kinetic-v5litepod-16".
std::string queue_name(const std::string& accelerator);

// `run --priority`'s levels and the value of each one's WorkloadPriorityClass, kinetic-LEVEL:
// xpk's low, medium and high (250, 500, 750), so that a job of another tool's at xpk's levels
// is ordered with kinetic's as its name says.
const std::vector<std::pair<std::string, int>>& priority_levels();

// What `up --queue on` writes for POOLS (kinetic's accelerator pools; a pool without kinetic's
// accelerator label is left out): the WorkloadPriorityClasses of priority_levels(), and per
// accelerator a ResourceFlavor, a ClusterQueue with nominalQuota = the pools' max nodes times
// the chips a node has, and a LocalQueue in NS. FAIR (`--queue fair`): each ClusterQueue in
// kFairAdmissionMode, fair sharing between the namespaces' LocalQueues. Pure.
std::vector<nlohmann::json> queue_objects(const std::vector<PoolRow>& pools, const std::string& ns,
                                          bool fair = false);

// Installs Kueue from SOURCE (the flag as given; empty: KINETIC_KUEUE_MANIFESTS, else the
// release) and applies queue_objects(POOLS, NS, FAIR); with FAIR, Kueue's configuration gets
// admissionFairSharing first (kueue_fair.h). Each change is reported through REPORT.
void ensure_queues(const Session& session, k8s::Client& kube, const std::string& source,
                   const std::vector<PoolRow>& pools, const std::string& ns, bool fair,
                   const std::function<void(ClusterChange)>& report);

// After the pools changed (`pool add`, `pool remove`, `up` adding pools) on a cluster whose
// queues are on (a ClusterQueue kinetic wrote exists; otherwise nothing is asked beyond that
// list): each accelerator's ClusterQueue quota becomes its pools' size again, a new
// accelerator gets its ResourceFlavor, ClusterQueue and LocalQueue in NS, and one with no pool
// left loses them; the mode (fair or not) stays as `up` set it. Only what changes is reported.
// Kueue itself is not installed here.
void follow_pools(k8s::Client& kube, const std::vector<PoolRow>& pools, const std::string& ns,
                  const std::function<void(ClusterChange)>& report);

// `up --queue off`: deletes the queue objects kinetic wrote (Kueue itself stays: other tools may
// use it; `down` deletes it with the cluster).
void remove_queues(k8s::Client& kube, const std::string& ns,
                   const std::function<void(ClusterChange)>& report);

// The LocalQueue a job of ACCELERATOR goes to in NS, when the cluster has one ("" otherwise:
// no Kueue, or no queue for that accelerator, as on a cluster `up --queue` never touched).
std::string local_queue_for(k8s::Client& kube, const std::string& ns,
                            const std::string& accelerator);

// Puts WORKLOAD (a batch/v1 Job or a JobSet, as job/manifest.h builds it) in QUEUE at PRIORITY
// (a level of priority_levels(); empty: normal): the queue and priority class labels, and
// created suspended, so that nothing of it starts before Kueue admits it whole.
void enqueue(nlohmann::json& workload, const std::string& queue, const std::string& priority);

// The queue a submitted WORKLOAD (Job or JobSet) waits in: its queue label while it is still
// suspended ("" once Kueue admitted it, or when it was never queued).
std::string waiting_queue(const nlohmann::json& workload);

// The place in line (from 1: the next to be admitted is 1) in its ClusterQueue of each job of
// LOCAL_QUEUE in NS that waits, by the name of its Job or JobSet, from Kueue's visibility API.
// Empty when the API does not answer (an older Kueue, or no right to read it): the job is then
// said to be queued without its place.
std::map<std::string, int> queue_positions(k8s::Client& kube, const std::string& ns,
                                           const std::string& local_queue);

// How many times EVENTS (those of a Job or JobSet) say Kueue stopped it to admit a higher-priority
// workload: the job reconciler's "Stopped" events whose message is the eviction's ("Preempted to
// accommodate a workload ...", preemption.go preemptionMessage), each by its count. Pure.
int preemption_evictions(const std::vector<nlohmann::json>& events);

// preemption_evictions of WORKLOAD (a Job or JobSet, as listed) from one list of its events.
// Kubernetes keeps events an hour by default: an older eviction is not counted.
int preemption_evictions(k8s::Client& kube, const std::string& ns, const nlohmann::json& workload);

// Whether WORKLOAD, waiting in a queue, waits again after Kueue evicted it for a higher-priority
// one (after an hour, it is said to be queued as any other).
bool requeued_after_preemption(k8s::Client& kube, const std::string& ns,
                               const nlohmann::json& workload);

// "queued: 2nd in line in kinetic-v5litepod-1"; POSITION 0 (unknown): "queued in kinetic-...".
// PREEMPTED (evicted for a higher-priority job, now waiting again): "queued: preempted by a
// higher-priority job; 1st in line in kinetic-...".
std::string queued_text(const std::string& queue, int position, bool preempted = false);

}  // namespace kinetic::gke
