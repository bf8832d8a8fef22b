// A Kubernetes Job (or JobSet) read back as kinetic's JobStatus: its state from the conditions
// (Complete, Failed with DeadlineExceeded as a timeout), times, and what the annotations recorded
// at submit time (file, accelerator). Pure, so `status` needs no bucket read per job.
#pragma once

#include <nlohmann/json.hpp>

#include "backend/backend.h"

namespace kinetic::gke {

inline constexpr const char* kFileAnnotation = "kinetic.dev/file";
inline constexpr const char* kAcceleratorAnnotation = "kinetic.dev/accelerator";
inline constexpr const char* kOutputAnnotation = "kinetic.dev/output-dir";
// A multislice run's slices (absent for one): what `status` prices the run at.
inline constexpr const char* kSlicesAnnotation = "kinetic.dev/slices";
// --hold-on-failure's seconds: a Job that carries it may be active while its run has failed and
// its pod is held for `kinetic exec`; its record (held_until) says which.
inline constexpr const char* kHoldAnnotation = "kinetic.dev/hold-on-failure";
// --label K=V, as a JSON object: `status -l` selects a job by them while its Job lives (the
// record's status.json carries them after). Not Kubernetes labels: their syntax is stricter.
inline constexpr const char* kLabelsAnnotation = "kinetic.dev/labels";

JobStatus status_from_workload(const nlohmann::json& workload);

// Whether the workload has finished (a Complete/Completed or Failed condition that is True).
bool workload_finished(const nlohmann::json& workload);

// The failure reason of a finished workload ("DeadlineExceeded", "BackoffLimitExceeded"...).
std::string workload_failure_reason(const nlohmann::json& workload);

// The child Job a failed JobSet names in its Failed condition's message ("... (first failed job:
// NAME)", JobSet's messageWithFirstFailedJob), or "".
std::string jobset_failed_child(const nlohmann::json& jobset);

// Folds what the CLI saw of a job's attempts (pods, and whether each was disrupted) into the
// status the bootstrap reported: the pods' DisruptionTarget condition says "preempted" better
// than the bootstrap, which only saw a SIGTERM. Attempts are matched by pod name; with no
// reported history, the observed one stands.
void merge_observed_attempts(JobStatus& status, const std::vector<AttemptRecord>& observed);

// Why the container of POD could not start (the runtime's StartError message), or nullopt. Used
// when a job ends without status.json: the bootstrap never ran.
std::optional<std::string> container_start_error(const nlohmann::json& pod);

// The one-line error for a job whose container could not start in IMAGE: a missing python3
// (a --image without it) is said plainly, anything else quotes the runtime.
std::string start_error_message(const std::string& image, const std::string& runtime_message);

}  // namespace kinetic::gke
