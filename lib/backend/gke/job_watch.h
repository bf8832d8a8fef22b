// Steps 6-7 on GKE: wait for the job's lead pod with one current line saying why it is pending
// (no matching pool, scaling up, quota, image pull), then follow its log to the end; and wait
// for the Job (or JobSet) to reach a verdict.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "k8s/client.h"
#include "render/output.h"

namespace kinetic::gke {

struct WatchOptions {
  std::string ns = "default";
  std::string job_id;
  std::string accelerator;  // for the `kinetic pool add` hint
  // How long a pod may sit with no node pool that fits, or with a volume failing to mount,
  // before the run gives up (exit 126).
  double scheduling_grace_seconds = 90;
  // How long the Job controller's refusals to create the pod (FailedCreate: quota, admission
  // webhook) must last, seen at least twice, before the run gives up (exit 126).
  double failed_create_grace_seconds = 30;
  const IOStreams* io = nullptr;
  const Interrupt* interrupt = nullptr;
  // Pods already followed (earlier attempts): never the lead pod again.
  std::set<std::string> skip_pods;
  // Called once when a lead pod not in SKIP_PODS first appears, even while it is pending: a new
  // attempt is announced before its wait for a node.
  std::function<void(const std::string& pod)> on_new_pod;
  // The sha256 of the job's spec.json, which the bootstrap's end-of-log lines carry (log_end.h);
  // empty when unknown (the spec is gone): the log is then followed to the container's end.
  std::string spec_sha256;
  // `logs --since`: only the lines the kubelet stamped at or after this Unix second.
  std::optional<int64_t> since;
};

// One line of a pod's log into SINK: the bootstrap's own lines ("kinetic: ...", on the
// container's stderr) go to the system stream, so a run's stdout holds only the job's output.
void write_log_line(LogSink& sink, std::string_view line);

// Lists COLLECTION; a resource the cluster does not serve (JobSet's CRD not installed) is empty.
std::vector<nlohmann::json> list_or_empty(k8s::Client& client, const std::string& collection,
                                          const std::string& selector);

// The name of the job's lead pod once it is running or has ended; nullopt when the job went
// away (cancelled) or finished without another pod. Throws Error(Errc::job_start) when the pod
// cannot start.
std::optional<std::string> wait_for_lead_pod(k8s::Client& client, const WatchOptions& options);

// POD's log so far into SINK, line by line (nothing when its container has not started),
// without the bootstrap's end-of-log lines of the job whose spec has SPEC_SHA256; with
// TAIL_LINES, only about its last lines (the kubelet counts the end-of-log lines too); with
// SINCE, only the lines from that Unix second on (sinceTime).
void print_pod_log(k8s::Client& client, const std::string& ns, const std::string& pod,
                   LogSink& sink, const std::string& spec_sha256 = {},
                   std::optional<long> tail_lines = std::nullopt,
                   std::optional<int64_t> since = std::nullopt);

// How a followed log ended: the pod as last read once ended, or the bootstrap's own word.
struct PodLogEnd {
  // The pod as last read, once ended (nullopt when it is gone or was not read).
  std::optional<nlohmann::json> pod;
  // The bootstrap's exit code from its end-of-log lines (log_end.h): the log is complete, and
  // the pod was not asked.
  std::optional<int> reported_exit;
  // The bootstrap said the run failed for good and its pod is held (--hold-on-failure): the pod
  // runs on, and was not waited for.
  bool held = false;
};

// Follows POD's log into SINK until the container ends or the bootstrap's end-of-log lines of
// OPTIONS.spec_sha256 arrive (those are not written to SINK).
PodLogEnd stream_pod_log(k8s::Client& client, const WatchOptions& options, const std::string& pod,
                         LogSink& sink);

// How one attempt (pod) ended, read from the pod once its log has ended: the container's exit
// code, and whether it was disrupted (the DisruptionTarget condition: Spot reclaim, maintenance,
// scale-down) or vanished with its node, which counts as a preemption too. ENDED is the pod as
// stream_pod_log last read it; without it, the pod is read again.
AttemptRecord observe_attempt(k8s::Client& client, const std::string& ns, const std::string& pod,
                              int attempt, const std::optional<nlohmann::json>& ended = {});

// Waits for the workload (Job or JobSet, found by the job label) to finish; returns it, or
// nullopt when it no longer exists.
std::optional<nlohmann::json> wait_for_workload(k8s::Client& client, const std::string& ns,
                                                const std::string& job_id, bool jobset,
                                                double timeout_seconds);

// Runs ON_INTERRUPT when the interrupt's fd becomes readable, from a thread of its own, while
// this object lives (a blocked log stream cannot poll it).
class InterruptWatcher {
 public:
  explicit InterruptWatcher(const Interrupt* interrupt);
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kinetic::gke
