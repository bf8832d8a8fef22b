// A faithful fake of the Kubernetes API server (see docs/gcp-api.md §7) served
// over TLS on 127.0.0.1 with a self-signed CA generated at start-up. It runs a tiny control plane:
// a scheduler that places pods on the nodes of its node pools by node selector, taints and
// extended resources (scaling a pool up from 0 like the cluster autoscaler, with its events), a
// Job controller (and a JobSet controller) and a kubelet that runs each pod's container command as
// a local process, so a job really runs: its logs stream, and its exit code comes back. A CronJob
// controller fires on demand (trigger_cronjob), never on the clock. Pods get service-account
// tokens, and requests carrying one are authorized by RBAC (Roles, RoleBindings, ClusterRoles,
// ClusterRoleBindings); the test user's token may do anything.
// kubectl is the reference client (tests/kubectl/): discovery, OpenAPI, create/get/logs/delete,
// protobuf bodies of its typed commands (create serviceaccount/role/rolebinding/job/token).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinetic::fakes {

struct FakeTaint {
  std::string key;
  std::string value;
  std::string effect = "NoSchedule";  // as Kubernetes spells it
};

// A node pool as the cluster autoscaler sees it. Nodes are named
// gke-CLUSTER-POOL-xxxxxxxx-yyyy and carry LABELS plus cloud.google.com/gke-nodepool=NAME.
struct FakeNodePool {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<FakeTaint> taints;
  // Extended resources per node, e.g. {"google.com/tpu","4"} or {"nvidia.com/gpu","1"};
  // cpu/memory are treated as unlimited.
  std::map<std::string, std::string> allocatable;
  int min_nodes = 0;
  int max_nodes = 1;
  int nodes = 0;  // nodes that exist now (min_nodes are created at once)
  std::string zone = "us-central1-a";
  bool flex_start = false;  // GKE's flex-start pool (config.flexStart)
  // Why no node of this pool can ever be created (a machine type Compute Engine does not sell on
  // demand, in a pool neither Spot nor consuming a reservation): every scale-up fails with it.
  // Empty when nodes can come.
  std::string unobtainable;
};

struct FakeKubeOptions {
  std::string cluster = "kinetic";
  // Bearer token of the test user, who may do anything; empty accepts any non-empty token (401
  // Status otherwise, as a real API server answers an anonymous caller with no RBAC). A
  // service-account token the fake minted (a pod's, or from `kubectl create token`) is accepted
  // too, as its ServiceAccount, and authorized by RBAC; once its pod or its ServiceAccount is
  // deleted it is refused (401) whatever this says.
  std::string expected_token;
  // Extra environment given to every pod process (e.g. STORAGE_EMULATOR_HOST, GCE_METADATA_HOST),
  // as a test cluster's nodes would provide.
  std::map<std::string, std::string> pod_env;
  // Extra environment for the pods of one ServiceAccount, from their namespace and
  // spec.serviceAccountName (e.g. a Workload Identity metadata server for one KSA), applied after
  // pod_env and before the container's own env. Null: none.
  std::function<std::map<std::string, std::string>(const std::string& ns,
                                                   const std::string& service_account)>
      pod_identity_env;
  // Whether the node can pull IMAGE; false makes the container wait in ErrImagePull, then
  // ImagePullBackOff, with a "Failed" event quoting WHY. Null: every image pulls.
  std::function<bool(const std::string& image, std::string* why)> image_pullable;
  // The environment a container of IMAGE starts with: the image's ENV, and a PATH naming only
  // the programs the image holds, as a real container sees its image's filesystem. Null: this
  // machine's PATH (a cluster with no image store: kubectl's fidelity test, the fake's own).
  std::function<std::vector<std::pair<std::string, std::string>>(const std::string& image)>
      image_env;
  // GKE's Cloud Storage FUSE CSI driver (the add-on): sets up a pod's volume of driver
  // gcsfuse.csi.storage.gke.io in DIR as the pod's NS/KSA would see it (the bucket's objects
  // under the only-dir prefix as files; READ_ONLY: no write permission bits). Returns "" or
  // the reason the mount failed, which the kubelet reports in a FailedMount event (the pod
  // waits in ContainerCreating). Null: the driver is not installed.
  std::function<std::string(const std::string& ns, const std::string& service_account,
                            const nlohmann::json& volume_attributes, const std::string& dir,
                            bool read_only)>
      gcs_fuse_mount;
  // Where pod working directories go (each pod gets its own, also its HOME and TMPDIR);
  // empty: a temporary directory removed at destruction.
  std::string work_root;
  // terminationGracePeriodSeconds used when a pod spec has none (the real default is 30);
  // SIGTERM, then SIGKILL after the grace.
  int default_grace_seconds = 30;
  // The project named in the cluster autoscaler's instance-group URLs (TriggeredScaleUp events).
  std::string project = "test-project";
  // Whether JobSet comes with the cluster (its CRD present, its controller running). False, as
  // on a fresh GKE cluster: the jobset.x-k8s.io group answers 404 until a JobSet release is
  // applied (its CustomResourceDefinition, then its controller Deployment becoming available).
  bool jobset_installed = true;
};

// Whether POD's first container is Ready (status.containerStatuses[0].ready), for tests waiting on
// a pod: false while the kubelet has not reported the container yet.
inline bool pod_ready(const nlohmann::json& pod) {
  const auto status = pod.value("status", nlohmann::json::object());
  const auto containers = status.value("containerStatuses", nlohmann::json::array());
  return containers.is_array() && !containers.empty() && containers[0].is_object() &&
         containers[0].value("ready", false);
}

class FakeKube {
 public:
  explicit FakeKube(FakeKubeOptions options = {});
  ~FakeKube();  // kills every pod process, stops the server
  FakeKube(const FakeKube&) = delete;
  FakeKube& operator=(const FakeKube&) = delete;

  int port() const;
  std::string endpoint() const;  // "127.0.0.1:PORT" (GKE's Cluster.endpoint carries no scheme)
  std::string url() const;       // "https://127.0.0.1:PORT"
  std::string ca_pem() const;    // the CA that signed the serving certificate (pin it)

  // ---- node pools (driven by the fake GKE when pools are created and deleted) ----------------
  void set_node_pool(const FakeNodePool& pool);    // adds or replaces (keeps existing nodes)
  void remove_node_pool(const std::string& name);  // deletes its nodes; their pods fail
  std::vector<FakeNodePool> node_pools() const;

  // ---- deterministic fault injection --------------------------------------------------------
  // The next scale-up of POOL fails: a FailedScaleUp event with MESSAGE (e.g. "GCE quota
  // exceeded") and no node.
  void fail_scale_up(const std::string& pool, const std::string& message);
  // POOL (which exists) has no capacity for now: its scale-ups are triggered (TriggeredScaleUp)
  // but no node comes, and the pods wait pending, until release_capacity(POOL) lets the waiting
  // scale-ups finish. A flex-start pool whose capacity comes late, or (never released) not at
  // all (docs/fakes.md).
  void hold_capacity(const std::string& pool);
  void release_capacity(const std::string& pool);
  // The next follow=true log stream is cut (connection closed) after BYTES bytes of body.
  void cut_next_log_stream_after(std::size_t bytes);
  // The next follow=true log stream ends cleanly (a proper end of the chunked body, as a proxy,
  // an API server restart or log rotation ends it) after BYTES bytes of body, but only once the
  // container has exited: the race "the container ends before the stream is cut", ordered.
  void end_next_log_stream_after_exit(std::size_t bytes);
  // The next follow=true log stream stays open once the container has exited and its log is
  // drained (a kubelet slow to notice the exit), sending nothing, for 60 s; it then ends
  // cleanly and counts in held_log_streams_ended (a client that waited for the end).
  void hold_next_log_stream_open();
  int held_log_streams_ended() const;
  // From now on the kubelet reports no container's exit (its pod stays Running, so its Job stays
  // active) until release_exit_reports(); the process ends and its log ends as usual. Orders the
  // race "the log has ended, the Job has not" (a kubelet or Job controller a beat behind).
  void hold_exit_reports();
  void release_exit_reports();
  // The node running pod NS/NAME is reclaimed (a Spot preemption, as GKE's graceful node
  // shutdown does it): every pod on it gets the DisruptionTarget condition (TerminationByKubelet),
  // SIGTERM and its termination grace, then ends Failed with reason Terminated whatever its exit
  // code; the node is deleted once its pods have ended, so the replacement pod needs a scale-up.
  // False when the pod does not exist or is not on a node.
  bool preempt_node_of(const std::string& ns, const std::string& pod_name);
  // Every open watch gets an in-stream ERROR 410 Expired and the event history is dropped, so a
  // watch from an old resourceVersion gets 410 at connect.
  void expire_watches();
  // The next N requests whose "METHOD /path" starts with ROUTE_PREFIX answer STATUS with a
  // Kubernetes Status body (e.g. 429 with Retry-After, 500, 503).
  void fail_next(int n, int status, const std::string& route_prefix = {});
  // From now on the API server takes at most WRITES_PER_SECOND writes (POST, PUT, PATCH,
  // DELETE) a second, from any client (a token bucket holding one second's worth; 0 = no quota).
  // A write past it is answered as API Priority and Fairness rejects a request: 429, Retry-After
  // (whole seconds until a token is back; the real server always says 1) and the plain-text
  // "Too many requests, please try again later." Refusals count as "rate_limited".
  void set_write_quota(double writes_per_second);
  // The next N writes wait for one another and then go on together: a burst of N clients'
  // writes, ordered (fake_quota.h WriteGathering).
  void gather_next_writes(int n);
  // The next request whose "METHOD /path" starts with ROUTE_PREFIX is fully processed (a POST
  // creates its object), then its connection is dropped before the response body: the client
  // sees a broken transfer and never learns the outcome.
  void lose_next_response(const std::string& route_prefix);
  // The next watch that resumes from a resourceVersion answers 410 Expired ("too old resource
  // version", as after an API server restart compacts its history). Until it has, the scheduler
  // places no new pod, so a client waiting for its pod is sure to be watching when it comes: the
  // order "the watch expires while the pod is pending", made certain.
  void expire_next_watch();
  // While MESSAGE is non-empty, the Job controller cannot create pods, as when a ResourceQuota or
  // an admission webhook refuses them: each try records a Warning FailedCreate event on the Job
  // ("Error creating: pods \"NAME-xxxxx\" is forbidden: MESSAGE") and is retried with a backoff
  // (0.1 s doubling to 1 s; the real controller starts at 10 s). Empty: pods are created again.
  // A pod whose spec.serviceAccountName does not exist is refused the same way, always (the
  // ServiceAccount admission plugin's 403), until the account is created.
  void fail_pod_creates(const std::string& message);

  // ---- CronJob controller, on demand ----------------------------------------------------------
  // Does what the CronJob controller does when the schedule of CronJob NS/NAME comes due (the
  // fake never fires on the clock: a test cannot wait for "*/5 * * * *"): nothing ("") when the
  // CronJob is missing or suspended, or when its concurrencyPolicy is Forbid and a Job it owns is
  // still active (a JobAlreadyActive event, as the controller records); with Replace, the active
  // Jobs are deleted first. Otherwise creates the Job NAME-<scheduled time in Unix minutes> from
  // spec.jobTemplate (its labels and annotations, the batch.kubernetes.io/cronjob-scheduled-
  // timestamp annotation, a controller ownerReference), records SuccessfulCreate on the CronJob,
  // adds the Job to status.active and sets status.lastScheduleTime, and returns the Job's name.
  // The scheduled time is the current minute, or the minute after the last scheduled time when
  // that is not earlier (two triggers in one minute make two Jobs). As the Jobs finish, the
  // controller takes them out of status.active (SawCompletedJob), sets lastSuccessfulTime, and
  // deletes the oldest finished Jobs (and their pods) beyond successfulJobsHistoryLimit and
  // failedJobsHistoryLimit.
  std::string trigger_cronjob(const std::string& ns, const std::string& name);
  // Blocks until Job NS/JOB (which exists when called) has finished (Complete or Failed) and its
  // CronJob no longer lists it in status.active, or it was deleted (a history limit); false after
  // TIMEOUT_MS, or at once when the Job does not exist.
  bool wait_for_cronjob_job_done(const std::string& ns, const std::string& job,
                                 int timeout_ms) const;

  // Faults set up but not yet triggered (fail_next, cut and clean stream ends, lost responses),
  // so a test can check its fault really hit; clear_faults drops them.
  int pending_faults() const;
  void clear_faults();

  // ---- counters and state (assertions) ------------------------------------------------------
  // "METHOD /canonical/path" with names replaced by {name}, e.g. "POST /apis/batch/v1/namespaces/
  // {ns}/jobs", "GET /api/v1/namespaces/{ns}/pods/{name}/log"; also served at GET /_fake/counters.
  std::map<std::string, int> request_counts() const;
  int total_requests() const;
  void reset_counters();
  // Names of the pods in NS whose labels match SELECTOR (a label selector), oldest first.
  std::vector<std::string> pod_names(const std::string& ns, const std::string& selector) const;
  // The object at an API path ("/apis/batch/v1/namespaces/default/jobs/x"), if it exists.
  std::optional<nlohmann::json> object(const std::string& path) const;
  // The cluster was deleted (GKE's DELETE_CLUSTER finished): every object in it goes, its pods
  // stopped at once as their VMs vanish, namespaces emptied, cluster-scoped objects (a JobSet
  // release's CRD, roles, webhooks) removed. The system namespaces and the API server stay, so a
  // cluster created again starts empty, as a new one does.
  void delete_cluster_objects();
  // Applies a JSON merge patch to the object at PATH (what another client changed); false when
  // it does not exist.
  bool merge_patch(const std::string& path, const nlohmann::json& patch);
  // Pod processes still running.
  int running_pods() const;
  // Blocks until no pod process runs (tests use it instead of sleeping); false after TIMEOUT_MS.
  bool wait_idle(int timeout_ms) const;
  // Blocks until PRED holds for the object at PATH (null when it does not exist), re-checked on
  // every state change; false after TIMEOUT_MS. PRED runs under the fake's lock: it must not call
  // back into the fake.
  bool wait_for_object(const std::string& path,
                       const std::function<bool(const nlohmann::json&)>& pred,
                       int timeout_ms) const;
  // Blocks until PRED holds for the pods of namespace NS (re-checked on every state change, under
  // the fake's lock as wait_for_object's); false after TIMEOUT_MS.
  bool wait_for_pods(const std::string& ns,
                     const std::function<bool(const std::vector<nlohmann::json>&)>& pred,
                     int timeout_ms) const;
  // Deletes the object at PATH as a DELETE with propagationPolicy=Background does (a pod after
  // its grace period); false when it does not exist.
  bool remove(const std::string& path);
  // Blocks until an event with REASON exists in namespace NS; false after TIMEOUT_MS.
  bool wait_for_event(const std::string& ns, const std::string& reason, int timeout_ms) const;
  // The events whose involvedObject is named NAME in NS, oldest first.
  std::vector<nlohmann::json> events_for(const std::string& ns, const std::string& name) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinetic::fakes
