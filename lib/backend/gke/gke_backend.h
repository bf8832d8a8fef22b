// The gke backend (docs/architecture.md): contexts and results in the jobs bucket, images from
// Artifact Registry built by Cloud Build, jobs as Kubernetes Jobs (JobSets for multi-host TPU
// slices) on the cluster, reached at its endpoint with its CA pinned.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "backend/backend.h"
#include "backend/gke/cluster_access.h"
#include "backend/gke/job_watch.h"
#include "backend/gke/recorded_log.h"
#include "backend/gke/session.h"
#include "backend/prefixed_log_sink.h"

namespace kinetic::gke {

class GkeBackend : public Backend {
 public:
  explicit GkeBackend(Session session);
  ~GkeBackend() override;

  std::string name() const override { return "gke"; }
  BackendCapabilities capabilities() const override {
    return {.gzip_for_prebuilt_images = true,
            .copies_data_dirs = true,
            .runs_pipelines_itself = true,
            .runs_servers = true};
  }
  void check_server(const ServeSpec& serve) override;
  std::string prepare_image(const ImageRecipe& recipe) override;
  std::string stage_context(const fs::path& archive, const std::string& sha256,
                            Compression compression, bool* uploaded) override;
  std::optional<std::string> staged_context(const std::string& sha256,
                                            Compression compression) override;
  // --data: a local directory is packed and staged like a context, and unpacked at DST by the
  // bootstrap; gs:// is mounted by GKE's Cloud Storage FUSE CSI driver (gke_data.cpp).
  DataMount stage_data(const DataMount& mount, bool grant) override;
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
  // The running pod of host HOST of JOB, for exec and port-forward (PURPOSE words the refusal
  // of an ended job: "nothing to PURPOSE"); Error naming what to do when there is none.
  std::string running_pod(const std::string& job, int host, const std::string& purpose);
  // pods/portforward WebSockets to the job's pod of HOST (pod_port_dialer.h).
  std::unique_ptr<PortDialer> port_dialer(const std::string& job, int host) override;
  // The bucket's pipelines/ and the jobs' outputs objects (gke_pipeline_store.h).
  PipelineStore* pipeline_store() override;
  // A GkeBackend on its own transport (Session::for_another_thread): this one's maps and
  // clients are not shared between threads.
  std::unique_ptr<Backend> for_another_thread() override;
  // The bucket's pipelines/ID/ (gke_pipeline_records.h).
  std::unique_ptr<PipelineRecords> pipeline_records() override;
  // A detached pipeline's steps run by a Job in the cluster (pipeline_runner_job.h).
  nlohmann::ordered_json stage_step(const JobSpec& spec,
                                    const std::map<std::string, std::string>& secrets) override;
  nlohmann::ordered_json start_pipeline_runner(const std::string& id,
                                               const nlohmann::ordered_json& plan) override;

 private:
  // cleanup's parts (gke_backend.cpp).
  bool add_live_launches(std::set<std::string>& live, std::set<std::string>& in_use,
                         std::set<std::string>& tags);
  void remove_unused_staging(double cutoff, const std::set<std::string>& live,
                             std::set<std::string>& in_use, const std::set<std::string>& tags,
                             std::vector<CleanupItem>& items, std::vector<std::string>& doomed);
  // What submit and stage_step share: the spec uploaded, the Secret created (POSTED names it
  // then); returns the workload's manifest.
  nlohmann::json stage(const JobSpec& spec, const std::map<std::string, std::string>& secrets,
                       std::vector<std::string>& posted);
  k8s::Client& kube();
  // A server's parts (gke_serve.cpp): its Secret, Service and Deployment; its Deployment read
  // back (nullopt: none); its Deployment and Service deleted (or, DRY_RUN, found), their paths
  // returned; a dialer to its Ready pod, chosen again for each connection.
  void submit_server(const JobSpec& spec, const std::map<std::string, std::string>& secrets);
  std::optional<JobStatus> server_status(const std::string& id);
  std::vector<std::string> delete_server_objects(const std::string& id, bool dry_run);
  std::unique_ptr<PortDialer> server_port_dialer(const std::string& job);
  // A stopped server's pods run the bootstrap, which writes the job's record as SIGTERM ends
  // it: its record is removed once they are gone (at most their grace period), or it returns.
  void wait_for_server_pods_gone(const std::string& id);
  // status.json of host HOST (0: the run's own, results/; K > 0: results/workers/K/).
  std::optional<JobStatus> results_status(const std::string& id, int host = 0);
  // A failed slice's verdict (docs/multihost.md): the host that failed first, not one stopped
  // because of it, gives ST its exit code and error, named, and its last lines are shown.
  void blame_failing_host(const JobSpec& spec, int hosts, bool host0_reported, JobStatus& st);
  // Whether the finished Job or JobSet failed by a deadline (a JobSet: its child's).
  bool ended_by_deadline(const nlohmann::json& workload);
  // The job's final status from host 0's record (REPORTED) and its finished WORKLOAD
  // (gke_collect.cpp).
  JobStatus verdict_of(const JobSpec& spec, const std::optional<JobStatus>& reported,
                       const std::optional<nlohmann::json>& workload);
  // Where a job's log goes: one sink, or with --all-hosts each host's prefixed sink.
  // A multislice run needs a node pool a slice (gke_backend.cpp).
  void require_slice_pools(const JobSpec& spec);
  struct HostSinks {
    LogSink& all;
    PrefixedLogSink* by_host = nullptr;
    int per_slice = 1;  // hosts of one slice; a run's hosts are numbered across its slices
    int slices = 1;
    LogSink& host(int h) const;
  };
  // What following job ID's pods needs (gke_logs.cpp).
  WatchOptions watch_options(const std::string& id, const Interrupt* interrupt);
  // `logs` without -f: the record of a finished job, else its pods' logs.
  // TAIL >= 0: only its last TAIL lines.
  void print_log(const std::string& id, int hosts, const HostSinks& sinks, const WatchOptions& o,
                 long tail = -1);
  // Its pods' logs, oldest attempt first (with TAIL_LINES, each pod's last lines only).
  void print_pods_log(const std::string& id, int hosts, const HostSinks& sinks,
                      const WatchOptions& o, std::optional<long> tail_lines = std::nullopt);
  // The recorded log of each of HOSTS hosts (TAIL and SINCE as print_recorded_log).
  void print_recorded_hosts(const std::string& id, int hosts, const HostSinks& sinks,
                            long tail = -1, std::optional<int64_t> since = std::nullopt);
  // `logs -f` and a foreground run: every attempt's lead pod in turn, until the job ends.
  void follow_attempts(const std::string& id, const std::optional<JobSpec>& spec, int hosts,
                       const HostSinks& sinks, WatchOptions& o);
  // The last LINES lines of host HOST's latest recorded attempt.
  std::string host_log_tail(const std::string& id, int host, int lines);
  // The job's Job or JobSet (both when JOBSET is unknown) and, with SECRET, its Secret.
  void delete_runtime_objects(const std::string& id, std::optional<bool> jobset = std::nullopt,
                              bool secret = true);

  Session session_;
  std::unique_ptr<PipelineStore> pipeline_store_;
  std::optional<KubeConnection> kube_;
  bool gcs_fuse_checked_ = false;   // the cluster has the CSI driver (checked once)
  std::string pods_member_;         // the job pods' principal, once read
  bool job_account_ready_ = false;  // kinetic-job exists in the namespace (checked once)
  // The Kueue LocalQueue of each accelerator ("" none: kueue.h local_queue_for), asked once.
  std::map<std::string, std::string> queues_;
  // The job's spec: as submitted by this process, else from the bucket.
  std::optional<JobSpec> spec_for(const std::string& id);
  // Writes the job's recorded log (every attempt's, recorded_log.h) to SINK, only its last TAIL
  // lines when TAIL >= 0, only from about SINCE when set; false when the bucket holds none.
  bool print_recorded_log(const std::string& id, LogSink& sink, int host = 0, long tail = -1,
                          std::optional<int64_t> since = std::nullopt);
  // Host HOST's recorded log, read several pieces at once.
  RecordedLog recorded_log(const std::string& id, int host);
  bool has_checkpoint(const std::string& id);
  // What this process saw of each job's attempts while following it (stream_logs), for collect.
  std::map<std::string, std::vector<AttemptRecord>> attempts_;
  std::map<std::string, JobSpec> specs_;  // jobs submitted by this process
  // The sha256 of each known job's spec.json, which ends its pods' logs (log_end.h).
  std::map<std::string, std::string> spec_sha256_;
  std::map<std::string, double> submitted_at_;  // when (unix seconds), for the cold-start line
  // --notify URLs of the jobs this process submitted, and those whose cancel it asked for: a
  // pod cannot tell a cancel from a preemption, so kinetic tells the hooks itself.
  std::map<std::string, std::string> notify_;
  std::set<std::string> cancel_requested_;  // written by the interrupt thread
  std::set<std::string> held_;              // failed for good and held (--hold-on-failure)
  std::set<std::string> servers_;           // servers this process started (under cancel_mu_)
  std::mutex cancel_mu_;
  // The job's notify URLs: this process's, else its Secret's (before the Secret goes).
  std::string notify_urls_of(const std::string& id);
  // Tells the hooks that ST (a cancelled job) ended; warnings go to the user.
  // Records a cancel of job ST.id as its verdict when no bootstrap wrote one.
  void record_cancel(JobStatus st);
  void notify_cancelled(const std::string& urls, JobStatus st, const JobSpec* spec);
};

}  // namespace kinetic::gke
