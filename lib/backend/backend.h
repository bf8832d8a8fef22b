// A backend supplies the object store, the image and the job runner behind one interface, so the
// run pipeline (run/pipeline.h) is the same on every backend (docs/architecture.md "The job's
// journey").
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cleanup_policy.h"
#include "backend/pipeline_records.h"
#include "backend/port_stream.h"
#include "core/error.h"
#include "core/fs.h"
#include "job/catalog.h"
#include "job/image_recipe.h"
#include "job/spec.h"
#include "pack/archive.h"

namespace kinetic {

// Job states, as `status` shows them.
inline constexpr std::string_view kPending = "pending";
inline constexpr std::string_view kRunning = "running";
inline constexpr std::string_view kSucceeded = "succeeded";
inline constexpr std::string_view kFailed = "failed";
inline constexpr std::string_view kTimedOut = "timeout";
inline constexpr std::string_view kCancelled = "cancelled";
inline constexpr std::string_view kLost = "lost";  // the runner vanished without a word

bool is_terminal_state(std::string_view state);

// One attempt of a job (docs/run-record.md): a retry after a failure or a restart after a
// preemption each make one.
// The error of an attempt that Kueue stopped to admit a higher-priority job (backend/gke/kueue.h):
// a preemption, after which the job waits in its queue to be admitted again.
inline constexpr std::string_view kEvictedError =
    "evicted from its queue for a higher-priority job";

struct AttemptRecord {
  int attempt = 0;  // from 1
  std::string state;
  std::optional<int> exit_code;
  std::string error;
  bool preempted = false;  // its node was reclaimed (Spot, maintenance): not a failure of the job
  std::string started;
  std::string finished;
  std::string pod;
};

// What status.json holds: how a job ended (or where it stands).
struct JobStatus {
  std::string id;
  std::string state = std::string(kPending);
  std::optional<int> exit_code;
  std::string error;  // one line, when the job did not succeed
  std::string file;
  std::vector<std::string> args;
  std::string accelerator;
  int slices = 1;  // multislice: the run spans this many slices of the accelerator
  std::string backend;
  std::string created;
  std::string started;
  std::string finished;
  double duration_seconds = 0;
  int attempts = 0;
  std::vector<AttemptRecord> attempt_history;  // oldest first; empty when not known
  std::string output_dir;
  // --hold-on-failure: until when (RFC 3339) a job that failed for good is kept up for `kinetic
  // exec`; empty when it is not held, or no longer.
  std::string held_until;
  // A pending job that waits its turn in a Kueue queue (`up --queue on`): "queued: 2nd in line in
  // kinetic-v5litepod-1" (backend/gke/kueue.h queued_text); empty otherwise.
  std::string queued;
  // The record is the run's verdict: no attempt follows (a gke pod's bootstrap says so in
  // status.json). Such a record wins over a workload that has not caught up with it yet
  // (backend/gke: the log has ended, the Job is still active for a beat).
  bool final = false;
  // --label K=V, as the spec has them (absent from the JSON when there are none).
  std::vector<std::pair<std::string, std::string>> labels;
  // Local backend: the job's process group, and what proves a kill still reaches it
  // (backend/process_identity.h): its leader's start time and session, this boot's id.
  long pgid = 0;
  long long pgid_start = 0;
  long pgid_session = -1;  // -1 unknown; 0 is a real session (process_identity.h)
  std::string boot_id;

  bool terminal() const { return is_terminal_state(state); }
};

// Whether ST is held (--hold-on-failure) at NOW (an RFC 3339 time as core/duration.h rfc3339
// writes it, as every held_until is written: the two compare as text).
bool is_held(const JobStatus& st, const std::string& now);

// The status of a job that has not reported yet: what its spec says.
JobStatus initial_status(const JobSpec& spec);

// Usage error unless ST has ended (and is not held): what may be removed alone.
void require_ended_for_removal(const JobStatus& st);

// Whether ST carries every label of SELECTOR (`status -l K=V`; empty: every job does).
bool has_labels(const JobStatus& st,
                const std::vector<std::pair<std::string, std::string>>& selector);

nlohmann::json to_json(const JobStatus& s);
nlohmann::json to_json(const AttemptRecord& a);

// The kinetic line that announces attempt NEXT after PREVIOUS ended, on every backend:
// "preempted: node reclaimed; attempt 3 on a new node, ...", "preempted by a higher-priority
// job; attempt 2 now that the queue admitted it again, ..." or "attempt 2/3: previous attempt
// exited 1; resuming from the checkpoint". MAX_ATTEMPTS counts --retries + 1 plus the
// preemptions so far.
std::string attempt_line(const AttemptRecord& previous, int next, int max_attempts,
                         bool has_checkpoint);
AttemptRecord attempt_record_from_json(const nlohmann::json& j);
JobStatus job_status_from_json(const nlohmann::json& j);

enum class LogStream : unsigned char { out = 1, err = 2, system = 3 };

// What is asked of a job's log (`logs`, and `run` as it follows).
struct LogRequest {
  bool follow = false;     // keep streaming until the job ends
  bool all_hosts = false;  // every host of a multi-host slice, lines prefixed "[host N] "
  // >= 0: only the last TAIL lines of the log so far (then, with follow, what comes after),
  // read from the log's end without reading all of it where the backend can.
  long tail = -1;
  // Set: only what the job wrote from this Unix time on (`--since`; not with TAIL). Exact to
  // the second on the local backend and from the kubelet, to the 5 s a recorded log part
  // covers on gke.
  std::optional<int64_t> since;
};

// Where a job's output goes as it streams.
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void write(LogStream stream, std::string_view data) = 0;
};

// Lets a long wait be interrupted: when FD becomes readable, ON_INTERRUPT runs (once per wake-up)
// and the wait goes on until the job ends.
struct Interrupt {
  int fd = -1;
  std::function<void()> on_interrupt;
};

// One thing `cleanup` found (and removed unless --dry-run).
struct CleanupItem {
  std::string kind;  // "job", "context", "temp"
  std::string name;
  uint64_t bytes = 0;
  std::string detail;
};

// `kinetic exec`: a command to run inside a running job, as `kubectl exec` runs one in a pod.
struct ExecRequest {
  std::string job;
  int host = 0;  // the host of a multi-host slice
  std::vector<std::string> command;
  bool stdin_open = false;  // -i: pass kinetic's stdin on (else the command's is empty)
  bool tty = false;         // -t: a terminal (kinetic's own is put in raw mode meanwhile)
};

// What a backend would do with a job, known without credentials or a single request: `run
// --dry-run` asks it, so a dry run shows what run would submit (docs/architecture.md "The
// Backend interface"). Each backend has one (backend/local, backend/gke).
class SubmissionPreview {
 public:
  virtual ~SubmissionPreview() = default;
  // As BackendCapabilities::gzip_for_prebuilt_images.
  virtual bool gzip_for_prebuilt_images() const = 0;
  // The image the job would run in: RECIPE's, as this backend names it, else CUSTOM (--image).
  virtual std::string image(const ImageRecipe* recipe, const std::string& custom) const = 0;
  // Where the context archive SHA256, compressed with COMPRESSION, would be staged.
  virtual std::string context_uri(const std::string& sha256, Compression compression) const = 0;
  // The objects submit would create for SPEC, every secret's value "<redacted>"; none when the
  // backend creates no API objects.
  virtual std::vector<nlohmann::ordered_json> manifests(const JobSpec& spec) const = 0;
};

// What a backend keeps for pipelines (docs/pipelines.md "Cache"): small named documents (the
// step cache's entries, the runs' records) and the outputs of the jobs that ran their steps.
// Locally these are files in the state directory and ./kinetic-out; on gke, objects in the
// job bucket, so a cache is shared by everyone using the cluster and a step's outputs reach the
// steps that need it without passing through the laptop.
class PipelineStore {
 public:
  virtual ~PipelineStore() = default;
  // The document NAME ("cache/KEY.json"), or nullopt when there is none.
  virtual std::optional<std::string> read(const std::string& name) = 0;
  virtual void write(const std::string& name, const std::string& data) = 0;
  // Where the outputs of job JOB are for the steps that need them (JobSpec::inputs) and for
  // the cache, given that they were delivered to OUTPUT_DIR (spec.output_dir).
  virtual std::string outputs_of(const std::string& job, const fs::path& output_dir) const = 0;
  // Whether the outputs at LOCATION (from outputs_of) are all still there.
  virtual bool outputs_present(const std::string& location) = 0;
  // Delivers the outputs at LOCATION to DIR, with the status.json of the job that made them.
  virtual void fetch_outputs(const std::string& location, const fs::path& dir) = 0;
  // Where the document NAME is (a path, a gs:// URI), for a runner that writes it itself.
  virtual std::string location(const std::string& name) const = 0;
};

// What a backend can do, known without a request: callers branch on these, never on its name.
struct BackendCapabilities {
  // Contexts and --data archives for a prebuilt image (--image) ship as tar.gz, which any
  // python3's tarfile reads, rather than the faster tar.zst: such an image may lack the zstd tool
  // the runner unpacks with. Kinetic's own images carry it (job/image_recipe.cpp).
  bool gzip_for_prebuilt_images = false;
  // --data: a local directory reaches the job as an archive staged like a context
  // (stage_context, unpacked at DST by the runner) rather than as it is.
  bool copies_data_dirs = false;
  // A detached pipeline is run by the backend itself (gke: a runner Job in the cluster) rather
  // than by a process of this machine (docs/pipelines.md "Detached on GKE").
  bool runs_pipelines_itself = false;
  // `kinetic serve` (docs/serving.md): a server is a job that runs until stopped, ready once its
  // port accepts (gke: a Deployment and a Service, backend/gke/server_manifest.h).
  bool runs_servers = false;
};

// The journey's steps 3-9 (docs/architecture.md "The job's journey"): what `run` and a
// pipeline's steps ask of a backend.
class JobRunner {
 public:
  virtual ~JobRunner() = default;
  virtual std::string name() const = 0;
  virtual BackendCapabilities capabilities() const { return {}; }
  // Refuses (Error, one line naming the fix) a server SERVE this backend cannot run as asked,
  // before anything is packaged or staged (gke: --idle-stop without the auto-down controller).
  virtual void check_server(const ServeSpec& serve) { (void)serve; }

  // Step 3: makes sure the image exists (building it if needed) and returns its reference. The
  // local backend runs on the host's own tools and returns the tag.
  virtual std::string prepare_image(const ImageRecipe& recipe) { return recipe.tag; }
  // Step 4: makes the context archive available to the runner. Returns its URI; sets *UPLOADED
  // to false when the store already had it (content-addressed).
  virtual std::string stage_context(const fs::path& archive, const std::string& sha256,
                                    Compression compression, bool* uploaded) = 0;
  // The URI of the context archive SHA256 when the store already holds it (a run over an
  // unchanged tree then skips packing and staging); nullopt otherwise.
  virtual std::optional<std::string> staged_context(const std::string& sha256,
                                                    Compression compression) = 0;
  // Step 4, --data: MOUNT with staged_uri set to where the runner finds its data (a local
  // directory that is not copied: the directory itself). GRANT (--grant): give the job's
  // identity access to a gs:// bucket rather than say how. A backend that cannot reach gs://
  // says so (Errc::unsupported).
  virtual DataMount stage_data(const DataMount& mount, bool grant) {
    (void)grant;
    if (mount.is_gcs())
      throw Error(Errc::unsupported,
                  "--data " + mount.source + ": the " + name() + " backend cannot read gs:// data");
    DataMount staged = mount;
    staged.staged_uri = "file://" + mount.source;
    return staged;
  }
  // Step 5: starts the job. SECRETS are the values of spec.secret_env; they never reach the
  // spec object or any file others can read.
  virtual void submit(const JobSpec& spec, const std::map<std::string, std::string>& secrets) = 0;
  // Steps 6-7: the job's output so far, and with REQUEST.follow everything until it ends.
  virtual void stream_logs(const std::string& id, const LogRequest& request, LogSink& sink,
                           const Interrupt* interrupt) = 0;
  // Step 8: delivers outputs and status.json to spec.output_dir; returns the final status.
  virtual JobStatus collect(const JobSpec& spec) = 0;
  // Step 9: removes the job's staging objects and runtime objects unless spec.keep.
  virtual void clean(const JobSpec& spec) = 0;
  // Asks for the job to stop and returns at once (Ctrl-C); asking again stops it without grace.
  virtual void request_cancel(const std::string& id) = 0;
};

// The jobs a backend knows, after their run: what `status`, `logs`, `cancel`, `cleanup`,
// `exec` and `wait` ask.
class JobStore {
 public:
  virtual ~JobStore() = default;
  virtual std::string name() const = 0;
  virtual std::optional<JobStatus> get(const std::string& id) = 0;
  virtual std::optional<JobSpec> get_spec(const std::string& id) = 0;
  // Every job the backend knows, newest first.
  virtual std::vector<JobStatus> list() = 0;
  // What each job's record holds, in bytes, by id (`status -o wide`): its directory locally, its
  // objects under jobs/ID/ on gke. A job missing from the map has no record to measure.
  virtual std::map<std::string, uint64_t> record_bytes() { return {}; }
  // Stops a running job (its whole process tree / pods). Returns its final status.
  virtual JobStatus cancel(const std::string& id) = 0;
  // Finished jobs' records as POLICY says (backend/cleanup_policy.h), and staging objects unused
  // for its older_than_seconds.
  virtual std::vector<CleanupItem> cleanup(const CleanupPolicy& policy, bool dry_run) = 0;
  // One ended job, whatever its age (`kinetic cleanup JOB`, the Python API's cleanup()): its
  // record and anything of it the backend still holds. A job that still runs (or is held) is
  // Error(Errc::usage) saying to cancel it first. Outputs delivered to kinetic-out/ stay.
  virtual std::vector<CleanupItem> remove_job(const std::string& id, bool dry_run) {
    (void)dry_run;
    throw Error(Errc::unsupported, "this backend cannot remove " + id + " alone");
  }
  // Runs REQUEST.command in the running job, with its environment and working directory, on
  // kinetic's stdin/stdout/stderr; returns the command's exit code (126 it could not run,
  // 127 not found). A job that is not running is Error(Errc::not_found) naming its state.
  virtual int exec(const ExecRequest& request) = 0;
  // Connections to ports of host HOST of the running job JOB (`kinetic port-forward`). A job
  // that is not running is Error(Errc::not_found) naming its state; HOST out of range
  // Error(Errc::usage).
  virtual std::unique_ptr<PortDialer> port_dialer(const std::string& job, int host) {
    (void)host;
    throw Error(Errc::unsupported, "this backend cannot forward ports of " + job);
  }
};

// Where pipelines live on a backend (docs/pipelines.md).
class PipelineHost {
 public:
  virtual ~PipelineHost() = default;
  // Where this backend keeps their cache and their steps' outputs; null when pipelines do not
  // run on it.
  virtual PipelineStore* pipeline_store() { return nullptr; }
  // Where this backend keeps pipeline runs' records (backend/pipeline_records.h); null when
  // pipelines do not run on it.
  virtual std::unique_ptr<PipelineRecords> pipeline_records() { return nullptr; }
  // A detached pipeline run by the backend itself (capabilities().runs_pipelines_itself):
  // - stage_step does everything submit does for SPEC but start it (its spec stored, its
  //   Secret created) and returns how the runner starts it: {job, manifest, create, object,
  //   secret, status}; undone by clean(SPEC);
  // - start_pipeline_runner hands the run's PLAN to a runner of pipeline ID and returns what
  //   its record's `runner` says.
  virtual nlohmann::ordered_json stage_step(const JobSpec& spec,
                                            const std::map<std::string, std::string>& secrets) {
    (void)spec;
    (void)secrets;
    throw Error(Errc::unsupported, "this backend runs no pipeline by itself");
  }
  virtual nlohmann::ordered_json start_pipeline_runner(const std::string& id,
                                                       const nlohmann::ordered_json& plan) {
    (void)id;
    (void)plan;
    throw Error(Errc::unsupported, "this backend runs no pipeline by itself");
  }
};

// A backend (local, gke) in its three roles: it runs jobs, keeps them, and hosts pipelines. A
// caller that needs one role takes that role's interface.
class Backend : public JobRunner, public JobStore, public PipelineHost {
 public:
  // One name for both roles that have one (an override of either is an override of this).
  std::string name() const override = 0;
  // A backend of the same context for another thread to run jobs on at the same time; null
  // when this one may itself be used from several threads at once (the local backend).
  virtual std::unique_ptr<Backend> for_another_thread() { return nullptr; }
};

}  // namespace kinetic
