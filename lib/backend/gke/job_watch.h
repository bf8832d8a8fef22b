// Steps 6-7 on GKE: wait for the job's lead pod with one current line saying why it is pending
// (no matching pool, scaling up, quota, image pull), then follow its log to the end; and wait
// for the Job (or JobSet) to reach a verdict.
#pragma once

#include <optional>
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
  // How long a pod may sit with no node pool that fits before the run gives up (exit 126).
  double scheduling_grace_seconds = 90;
  // How long the Job controller's refusals to create the pod (FailedCreate: quota, admission
  // webhook) must last, seen at least twice, before the run gives up (exit 126).
  double failed_create_grace_seconds = 30;
  const IOStreams* io = nullptr;
  const Interrupt* interrupt = nullptr;
};

// Lists COLLECTION; a resource the cluster does not serve (JobSet's CRD not installed) is empty.
std::vector<nlohmann::json> list_or_empty(k8s::Client& client, const std::string& collection,
                                          const std::string& selector);

// The name of the job's lead pod once it is running or has ended; nullopt when the job went
// away (cancelled). Throws Error(Errc::job_start) when the pod cannot start.
std::optional<std::string> wait_for_lead_pod(k8s::Client& client, const WatchOptions& options);

// Follows POD's log into SINK until the container ends.
void stream_pod_log(k8s::Client& client, const WatchOptions& options, const std::string& pod,
                    LogSink& sink);

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
