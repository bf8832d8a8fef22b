// The embedded `local` backend: the object store is a directory under the state dir, the image is
// the host's own tools, and the runner is a local process group (backend/local/supervisor.h).
//
//   STATE/store/contexts/SHA256.tar.zst   staged contexts (content-addressed, shared by jobs)
//   STATE/jobs/JOBID/                     one job: spec.json, log, status.json, supervisor.json,
//                                         work/ (removed when done unless --keep), output/
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/local/local_pipeline_store.h"
#include "gcp/storage.h"

namespace kinetic {

// Where the local backend keeps the context archive SHA256 under STATE_DIR.
fs::path local_context_path(const fs::path& state_dir, const std::string& sha256,
                            Compression compression);

// What a local run would do (backend.h): the host's own tools, no API objects.
std::unique_ptr<SubmissionPreview> make_local_submission_preview(fs::path state_dir);

class LocalBackend : public Backend {
 public:
  BackendCapabilities capabilities() const override { return {.runs_servers = true}; }
  // BASE_ENV is what every job starts from (see local_job_base_env).
  LocalBackend(fs::path state_dir, std::vector<std::pair<std::string, std::string>> base_env,
               int kill_grace_seconds = 10);

  // What `--data gs://` downloads with: a storage client with your credentials, built on first
  // use (a run without gs:// data never loads the HTTP stack). Unset: gs:// data is refused.
  // NOTES, when set, gets one line before a download (what, how much, where).
  void use_storage(std::function<gcp::StorageClient&()> storage,
                   std::function<void(const std::string&)> notes = nullptr) {
    storage_ = std::move(storage);
    notes_ = std::move(notes);
  }

  std::string name() const override { return "local"; }
  // A local directory is used as it is; gs:// is downloaded once into STATE/cache/data/
  // (backend/local/gcs_cache.h). The runner links DST to either.
  DataMount stage_data(const DataMount& mount, bool grant) override;
  std::string stage_context(const fs::path& archive, const std::string& sha256,
                            Compression compression, bool* uploaded) override;
  std::optional<std::string> staged_context(const std::string& sha256,
                                            Compression compression) override;
  void submit(const JobSpec& spec, const std::map<std::string, std::string>& secrets) override;
  void stream_logs(const std::string& id, const LogRequest& request, LogSink& sink,
                   const Interrupt* interrupt) override;
  JobStatus collect(const JobSpec& spec) override;
  void clean(const JobSpec& spec) override;
  JobStatus cancel(const std::string& id) override;
  void request_cancel(const std::string& id) override;
  std::optional<JobStatus> get(const std::string& id) override;
  std::optional<JobSpec> get_spec(const std::string& id) override;
  std::vector<JobStatus> list() override;
  std::map<std::string, uint64_t> record_bytes() override;
  std::vector<CleanupItem> cleanup(const CleanupPolicy& policy, bool dry_run) override;
  std::vector<CleanupItem> remove_job(const std::string& id, bool dry_run) override;
  int exec(const ExecRequest& request) override;
  // TCP connections to 127.0.0.1 (backend/local/local_port.h).
  std::unique_ptr<PortDialer> port_dialer(const std::string& job, int host) override;
  // STATE/pipelines/ and the steps' output folders (local_pipeline_store.h).
  PipelineStore* pipeline_store() override { return &pipeline_store_; }
  // STATE/pipelines/runs/ (local_pipeline_records.h).
  std::unique_ptr<PipelineRecords> pipeline_records() override;

  // Checked: an id never walks out of jobs/ ("../x").
  fs::path job_dir(const std::string& id) const {
    require_job_id(id);
    return state_dir_ / "jobs" / id;
  }
  fs::path tmp_dir() const { return state_dir_ / "tmp"; }

 private:
  // Waits until the job's status is final (or its runner is gone), streaming its log to SINK
  // when given.
  // FROM says where the log starts: its last TAIL lines so far, or from SINCE.
  JobStatus follow(const std::string& id, LogSink* sink, const Interrupt* interrupt,
                   const LogRequest& from = {});
  // Reaps RUNNER, a runner this process started, once it is done; a held job's is left running.
  static void reap_runner(pid_t runner, const JobStatus& st);
  // The job's status, marking it lost when its runner died without a final word.
  JobStatus read_status(const std::string& id);

  fs::path state_dir_;
  LocalPipelineStore pipeline_store_{state_dir_};
  std::function<gcp::StorageClient&()> storage_;
  std::function<void(const std::string&)> notes_;
  std::vector<std::pair<std::string, std::string>> base_env_;
  int kill_grace_seconds_;
  // A runner this process started, reaped once it is done.
  struct Child {
    pid_t pid = 0;
    int notify_read = -1;  // read end of its notify pipe, or -1
  };
  // Follows a job this process started, woken by the runner's notify pipe.
  JobStatus follow_child(const std::string& id, Child child, LogSink& sink,
                         const Interrupt* interrupt);
  // The runner of job ID this process started, handed to one follower (the first to ask).
  std::optional<Child> take_child(const std::string& id);

  // By job id: one process may follow several jobs at once, each from a thread of its own
  // (`kinetic pipeline run`), so the table is guarded.
  std::mutex children_mu_;
  std::map<std::string, Child> children_;
};

// The part of the caller's environment a local job starts from: PATH, HOME, USER, LOGNAME,
// SHELL, LANG, LC_*, TZ, TMPDIR, TERM. Nothing else leaks in — just as in a pod — so a job that
// needs a variable says so with --env, and the local run catches it before a paid one does.
std::vector<std::pair<std::string, std::string>> local_job_base_env(
    const std::vector<std::pair<std::string, std::string>>& caller_env);

}  // namespace kinetic
