// The Kubernetes objects `run` submits on GKE: a batch/v1 Job (a JobSet for multi-host TPU
// slices) and the Secret holding the job's environment. Pure functions, shared by `run --dry-run`
// and the GKE backend.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "job/catalog.h"
#include "job/data_mount.h"

namespace kinetic {

struct ManifestInput {
  std::string job_id;  // "job-1a2b3c4d"; objects are named kinetic-JOBID
  std::string namespace_ = "default";
  // The Kubernetes service account the pods run as (its Workload Identity principal is what the
  // job may do on Google's APIs); empty: the namespace's `default`.
  std::string service_account;
  Accelerator accelerator;
  std::string image;                 // full image reference
  std::vector<std::string> command;  // the container command (the in-pod bootstrap)
  // Plain, non-secret environment (KINETIC_JOB_ID, bucket and object names...), in order.
  std::vector<std::pair<std::string, std::string>> env;
  // Names of the variables that come from the job's Secret (--env, --capture-env values).
  std::vector<std::string> secret_env;
  std::optional<long> timeout_seconds;  // activeDeadlineSeconds
  int retries = 0;                      // backoffLimit (JobSet: failurePolicy.maxRestarts)
  long ttl_seconds_after_finished = 3600;
  std::map<std::string, std::string> labels;  // extra labels, besides kinetic's own
  // --data gs:// sources: Cloud Storage FUSE CSI volumes, mounted at csi_mount_path().
  std::vector<DataMount> gcs_data;
  // Annotations on the Job (or JobSet): what `status` shows without the bucket (file, accelerator).
  std::map<std::string, std::string> annotations;
};

// The bootstrap's exit code for "this run is over, start no other attempt" (the preemption cap
// was reached); the Job's podFailurePolicy fails the Job on it. A job's own exit code 197 is
// passed to Kubernetes as 1 (status.json keeps 197). The bootstrap's copy is EXIT_RUN_OVER
// (lib/job/incluster_common.py); tests/golden/exit_codes.json holds both to the same value.
inline constexpr int kRunOverExitCode = 197;

// The bootstrap's exit code when a signal from outside stopped the attempt (128 + SIGTERM): its
// Job was suspended by Kueue (an eviction, docs/capacity.md), its pod deleted or its node
// reclaimed. The Job's podFailurePolicy ignores it: such a pod is not a failure, does not count
// against --retries, and the bootstrap's --max-preemptions caps how often it happens. A job's own
// exit code 143, with no signal to the bootstrap, is passed to Kubernetes as 1 (status.json keeps
// 143). The bootstrap's copy is EXIT_STOPPED (lib/job/incluster_common.py).
inline constexpr int kStoppedExitCode = 143;

// "kinetic-" + job id: the name of the Job (or JobSet) and of its Secret.
std::string k8s_object_name(const std::string& job_id);

// The Job, or the JobSet (with its headless-service networking) when the slice spans hosts.
nlohmann::ordered_json build_workload(const ManifestInput& in);

// The pod template of IN's Job (single host): what a server's Deployment runs too
// (backend/gke/server_manifest.h), so a server gets the same image, bootstrap, environment,
// data, node selectors, tolerations and resources as a run.
nlohmann::ordered_json build_pod_template(const ManifestInput& in);

// The Secret with the job's secret environment. VALUES maps names to values; pass redacted values
// when printing. Returns nullopt when there are no secret variables.
std::optional<nlohmann::ordered_json> build_secret(
    const ManifestInput& in, const std::map<std::string, std::string>& values);

// Everything `run` would submit, in creation order (Secret first).
std::vector<nlohmann::ordered_json> build_manifests(
    const ManifestInput& in, const std::map<std::string, std::string>& secret_values);

}  // namespace kinetic
