#include "backend/gke/job_state.h"

#include <algorithm>
#include <ctime>
#include <optional>

#include "backend/gke/names.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

std::optional<json> true_condition(const json& workload, std::initializer_list<const char*> types) {
  auto status = workload.find("status");
  if (status == workload.end() || !status->is_object()) return std::nullopt;
  for (const auto& c : status->value("conditions", json::array())) {
    if (c.value("status", "") != "True") continue;
    for (const char* t : types) {
      if (c.value("type", "") == t) return c;
    }
  }
  return std::nullopt;
}

}  // namespace

void merge_observed_attempts(JobStatus& status, const std::vector<AttemptRecord>& observed) {
  if (observed.empty()) return;
  if (status.attempt_history.empty()) {
    status.attempt_history = observed;
  } else {
    for (const auto& seen : observed) {
      for (auto& reported : status.attempt_history) {
        if (reported.pod.empty() || reported.pod != seen.pod || !seen.preempted) continue;
        reported.preempted = true;
        reported.state = "preempted";
      }
    }
  }
  status.attempts = std::max<int>(status.attempts, static_cast<int>(observed.size()));
}

std::optional<std::string> container_start_error(const json& pod) {
  const json status = pod.value("status", json::object());
  for (const auto& cs : status.value("containerStatuses", json::array())) {
    const json term = cs.value("state", json::object()).value("terminated", json::object());
    if (term.value("reason", "") == "StartError") return term.value("message", "StartError");
  }
  return std::nullopt;
}

std::string start_error_message(const std::string& image, const std::string& runtime_message) {
  if (runtime_message.find("\"python3\"") != std::string::npos &&
      runtime_message.find("not found") != std::string::npos)
    return "the image " + image +
           " has no python3 on its PATH, and kinetic's bootstrap runs with it: add python3 to "
           "the image, or drop --image to let kinetic build one";
  return "the container could not start in " + image + ": " + runtime_message;
}

bool workload_finished(const json& workload) {
  return true_condition(workload, {"Complete", "Completed", "Failed"}).has_value();
}

std::string workload_failure_reason(const json& workload) {
  if (auto c = true_condition(workload, {"Failed"})) return c->value("reason", "");
  return {};
}

std::string jobset_failed_child(const json& jobset) {
  const auto failed = true_condition(jobset, {"Failed"});
  if (!failed) return {};
  const std::string message = failed->value("message", "");
  const std::string marker = "(first failed job: ";
  const auto at = message.rfind(marker);
  if (at == std::string::npos || message.back() != ')') return {};
  return message.substr(at + marker.size(), message.size() - 1 - at - marker.size());
}

namespace {

// A JobSet has neither a Job's `ready` count nor its `startTime`: it runs once a child Job is
// ready, which JobSet v0.10.1 counts per replicated job as the children whose pods are all ready
// or done (api/jobset/v1alpha2/jobset_types.go ReplicatedJobStatus.Ready).
bool jobset_has_a_ready_child(const json& status) {
  for (const json& replicated : status.value("replicatedJobsStatus", json::array()))
    if (replicated.value("ready", 0) > 0) return true;
  return false;
}

}  // namespace

JobStatus status_from_workload(const json& workload) {
  JobStatus st;
  const json meta = workload.value("metadata", json::object());
  const json labels = meta.value("labels", json::object());
  const json annotations = meta.value("annotations", json::object());
  st.id = labels.value(kJobLabel, "");
  st.backend = "gke";
  st.file = annotations.value(kFileAnnotation, "");
  st.accelerator = annotations.value(kAcceleratorAnnotation, "");
  st.slices = std::max(1, std::atoi(annotations.value(kSlicesAnnotation, "1").c_str()));
  st.output_dir = annotations.value(kOutputAnnotation, "");
  if (annotations.contains(kLabelsAnnotation)) {
    const json labels_doc = json::parse(annotations.value(kLabelsAnnotation, ""), nullptr, false);
    st.labels = labels_from_json(labels_doc);
  }
  st.created = meta.value("creationTimestamp", "");
  const json status = workload.value("status", json::object());
  st.started = status.value("startTime", "");
  st.attempts = status.value("failed", 0) + (status.value("active", 0) > 0 ? 1 : 0) +
                status.value("succeeded", 0);

  if (auto done = true_condition(workload, {"Complete", "Completed"})) {
    st.state = std::string(kSucceeded);
    st.exit_code = 0;
    st.finished = status.value("completionTime", done->value("lastTransitionTime", ""));
  } else if (auto failed = true_condition(workload, {"Failed"})) {
    const std::string reason = failed->value("reason", "");
    st.state = std::string(reason == "DeadlineExceeded" ? kTimedOut : kFailed);
    st.error = failed->value("message", reason);
    st.finished = failed->value("lastTransitionTime", "");
  } else if (status.contains("replicatedJobsStatus")) {
    st.state = std::string(jobset_has_a_ready_child(status) ? kRunning : kPending);
  } else if (status.value("active", 0) > 0) {
    st.state =
        std::string(status.value("ready", 0) > 0 || !st.started.empty() ? kRunning : kPending);
  }
  if (meta.contains("deletionTimestamp") && !st.terminal()) st.state = std::string(kCancelled);
  const double start = parse_rfc3339(st.started.empty() ? st.created : st.started);
  const double end = st.finished.empty() ? now_unix() : parse_rfc3339(st.finished);
  if (start > 0 && end >= start) st.duration_seconds = end - start;
  return st;
}

}  // namespace kinetic::gke
