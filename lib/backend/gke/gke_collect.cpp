// The gke backend's collect (docs/run-record.md): the job's verdict from its record and its
// workload, and its outputs from the bucket.
#include <algorithm>
#include <future>

#include "backend/gke/gke_backend.h"
#include "backend/gke/job_state.h"
#include "backend/gke/job_watch.h"
#include "backend/gke/names.h"
#include "backend/notify.h"
#include "backend/prefixed_log_sink.h"
#include "backend/stopped_verdict.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/strings.h"
#include "gcp/storage.h"
#include "job/catalog.h"
#include "pack/archive.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

// Seconds to wait for a Job to be marked finished once its pod has ended.
constexpr double kVerdictTimeoutSeconds = 120;

// Downloads a job's outputs archive OBJECT to PATH; false when there is none (a job that never
// started). No metadata probe first: download_file reads what it needs from the media answer.
bool download_outputs(gcp::StorageClient& storage, const std::string& bucket,
                      const std::string& object, const fs::path& path) {
  try {
    storage.download_file(bucket, object, path);
    return true;
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return false;
    throw;
  }
}

}  // namespace

std::optional<JobStatus> GkeBackend::results_status(const std::string& id, int host) {
  gcp::StorageClient& storage = session_.storage();
  try {
    return job_status_from_json(json::parse(
        storage.download_string(session_.bucket(), host_results_prefix(id, host) + "status.json")));
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return std::nullopt;
    throw;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

void GkeBackend::blame_failing_host(const JobSpec& spec, int hosts, bool host0_reported,
                                    JobStatus& st) {
  // The other hosts were stopped because of it (cancelled by SIGTERM): the first to fail is the
  // one whose state is failed and that finished earliest (millisecond timestamps). Only hosts
  // whose bootstrap reported count: a host stopped before it started says nothing.
  int blamed = -1;
  JobStatus culprit;
  for (int host = 0; host < hosts; ++host) {
    std::optional<JobStatus> s;
    if (host > 0)
      s = results_status(spec.id, host);
    else if (host0_reported)
      s = st;
    if (!s || s->state != kFailed) continue;
    if (blamed < 0 || s->finished < culprit.finished) {
      blamed = host;
      culprit = *s;
    }
  }
  if (blamed < 0) return;
  // "host 2 of 4"; a multislice run's "slice 1 host 0 of 2 slices" (hosts numbered across them).
  const int per_slice = hosts / std::max(1, spec.slices);
  const std::string who =
      run_host_name(blamed, per_slice, spec.slices) + " of " +
      (spec.slices > 1 ? std::to_string(spec.slices) + " slices" : std::to_string(hosts));
  st.state = std::string(kFailed);
  st.exit_code = culprit.exit_code;
  st.error = who + ": " + (culprit.error.empty() ? "failed" : culprit.error);
  // Host 0's output was streamed; another host's is only in the record.
  if (blamed == 0) return;
  try {
    const std::string tail = host_log_tail(spec.id, blamed, 10);
    if (!tail.empty()) {
      session_.io->info("kinetic: " + who + " failed; its last lines:");
      for (const auto& line : split(tail, '\n'))
        if (!line.empty()) session_.io->info("  " + line);
    }
  } catch (const Error&) {
    // the verdict stands without the lines
  }
}

// Whether WORKLOAD failed by its deadline: a Job by its own; a JobSet by the failure-policy rule
// that fails it when a child Job exceeded its deadline (lib/job/manifest.cpp), which is known by
// that child's reason. (A deadline the bootstrap enforced is in status.json already.)
bool GkeBackend::ended_by_deadline(const json& workload) {
  const std::string reason = workload_failure_reason(workload);
  if (reason == "DeadlineExceeded") return true;
  if (reason != "FailJobSetFailurePolicyAction") return false;
  const std::string child = jobset_failed_child(workload);
  if (child.empty()) return false;
  const auto job = kube().get(k8s::job_path(session_.target.ns, child));
  return job && workload_failure_reason(*job) == "DeadlineExceeded";
}

// The job's final status: host 0's record when it reported (a slice's first failing host
// blamed), else what the workload says; a deadline, and a workload gone, decide over both.
JobStatus GkeBackend::verdict_of(const JobSpec& spec, const std::optional<JobStatus>& reported,
                                 const std::optional<nlohmann::json>& workload) {
  const bool jobset = resolve_accelerator(spec.accelerator).hosts > 1;
  JobStatus st = initial_status(spec);
  const bool host0_reported = reported.has_value();
  if (reported) {
    st.state = reported->state;
    st.exit_code = reported->exit_code;
    st.error = reported->error;
    st.started = reported->started;
    st.finished = reported->finished;
    st.duration_seconds = reported->duration_seconds;
    st.attempts = std::max(1, reported->attempts);
    st.attempt_history = reported->attempt_history;
  } else if (workload) {
    JobStatus w = status_from_workload(*workload);
    st.state = w.state;
    st.error = w.error.empty() ? "the job ended without reporting (no status.json)" : w.error;
    st.started = w.started;
    st.finished = w.finished;
    st.duration_seconds = w.duration_seconds;
    // The bootstrap never ran: say why the container did not start (an image without python3).
    for (const auto& pod :
         kube().list(k8s::pods_path(session_.target.ns), job_selector(spec.id)).items) {
      if (auto why = container_start_error(pod)) {
        st.state = std::string(kFailed);
        st.exit_code = exit_codes::not_run;
        st.error = start_error_message(spec.image, *why);
        break;
      }
    }
  } else {
    st.state = std::string(kCancelled);
    st.error = "cancelled before it reported";
  }
  if (workload && ended_by_deadline(*workload)) {
    // The verdict the bootstrap records when it stops the job itself (backend/stopped_verdict.h).
    const StoppedVerdict v = deadline_verdict(spec);
    st.state = v.state;
    st.exit_code = v.exit_code;
    st.error = v.error;
  } else if (!workload && st.state != kSucceeded && st.state != kFailed) {
    st.state = std::string(kCancelled);
  }
  const int hosts = resolve_accelerator(spec.accelerator).hosts * spec.slices;
  if (jobset && st.state != kSucceeded && st.state != kTimedOut)
    blame_failing_host(spec, hosts, host0_reported, st);
  st.backend = "gke";
  st.output_dir = spec.output_dir;
  merge_observed_attempts(st, attempts_[spec.id]);
  return st;
}

JobStatus GkeBackend::collect(const JobSpec& spec) {
  const bool jobset = resolve_accelerator(spec.accelerator).hosts > 1;
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  const std::string outputs = results_prefix(spec.id) + "outputs.tar.gz";
  TempDir dir(session_.state_dir / "tmp", "collect-");
  const fs::path archive = dir / "outputs.tar.gz";
  // A single-host job whose last pod was seen succeed, and whose record says so, has its
  // verdict: the Job need not be waited for (issue #14), and its outputs, final, download while
  // the record is read (one round trip, not two). Anything else waits for the workload's
  // verdict first (a deadline, a retry), then reads the record and the outputs.
  const std::vector<AttemptRecord>& observed = attempts_[spec.id];
  const bool seen_succeed = !jobset && !observed.empty() && observed.back().state == "succeeded";
  std::future<bool> early_outputs;
  if (seen_succeed && session_.new_cloud)
    early_outputs = std::async(std::launch::async, [this, &bucket, &outputs, &archive] {
      const std::shared_ptr<http::Transport> own = session_.new_cloud();
      gcp::StorageClient storage(*own, session_.endpoint("storage"));
      return download_outputs(storage, bucket, outputs, archive);
    });
  // --hold-on-failure: a single-host run that failed for good keeps its pod up, so its Job ends
  // only when the hold does; the record has the run's verdict, and says it is held.
  const bool may_be_held = !jobset && spec.hold_on_failure_seconds > 0 && !observed.empty() &&
                           observed.back().state == kFailed;
  std::optional<JobStatus> reported;
  std::optional<json> workload;
  if (seen_succeed || may_be_held) reported = results_status(spec.id);
  const bool held = may_be_held && reported && is_held(*reported, rfc3339(now_unix()));
  const bool settled = reported && (reported->state == kSucceeded || held);
  if (held) held_.insert(spec.id);
  if (!settled) {
    workload =
        wait_for_workload(kube(), session_.target.ns, spec.id, jobset, kVerdictTimeoutSeconds);
    reported = results_status(spec.id);
  }

  JobStatus st = verdict_of(spec, reported, workload);
  // A cancel this process asked for (Ctrl-C): the pod saw only a SIGTERM.
  bool asked_to_cancel = false;
  {
    std::lock_guard lock(cancel_mu_);
    asked_to_cancel = cancel_requested_.contains(spec.id);
  }
  if (st.state == kCancelled && asked_to_cancel)
    if (auto it = notify_.find(spec.id); it != notify_.end())
      notify_cancelled(it->second, st, &spec);

  // Outputs, then status.json beside them.
  make_dirs(spec.output_dir, 0755);
  try {
    bool fetched = false;
    if (settled && early_outputs.valid()) {
      fetched = early_outputs.get();
    } else {
      if (early_outputs.valid()) {
        try {
          early_outputs.get();  // from before a verdict that was not final: fetched again
        } catch (const Error&) {
        }
      }
      fetched = download_outputs(storage, bucket, outputs, archive);
    }
    if (fetched) unpack_job_outputs(archive, spec.output_dir, *session_.io);
  } catch (const Error& e) {
    throw Error(e.code(), "could not fetch the outputs of " + spec.id + " (they stay at gs://" +
                              bucket + "/" + outputs + "): " + e.what());
  }
  dir.reset();
  atomic_write(fs::path(spec.output_dir) / "status.json", to_json(st).dump(2) + "\n", 0644,
               Durability::unsynced);
  return st;
}

}  // namespace kinetic::gke
