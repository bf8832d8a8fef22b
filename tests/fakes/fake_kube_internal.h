// Internals of the fake Kubernetes API server (fake_kube.h): the object store with its watch
// history, and the control plane (scheduler, cluster autoscaler, Job/JobSet controllers, kubelet).
// fake_kube.cpp serves the API; fake_kube_control.cpp runs the controllers and the pod processes.
#pragma once

#include <httplib.h>
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/fake_kube.h"
#include "fakes/fake_quota.h"
#include "fakes/fake_tls_front.h"

namespace kinetic::fakes::kube {

using json = nlohmann::json;
using SysClock = std::chrono::system_clock;
using Steady = std::chrono::steady_clock;

struct ResourceType {
  std::string group;  // "" for the core group
  std::string version;
  std::string plural;
  std::string singular;
  std::string kind;
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::string group_version() const { return group.empty() ? version : group + "/" + version; }
  // "jobs.batch", "pods": how error messages name the resource.
  std::string qualified() const { return group.empty() ? plural : plural + "." + group; }
  // "Job.batch", "Pod": how Invalid messages name the kind.
  std::string qualified_kind() const { return group.empty() ? kind : kind + "." + group; }
  std::string prefix() const {
    return group.empty() ? "/api/v1" : "/apis/" + group + "/" + version;
  }
};

const std::vector<ResourceType>& resource_types();
const ResourceType* find_type(const std::string& group, const std::string& version,
                              const std::string& plural);
const ResourceType* type_of_kind(const std::string& kind);

// A Kubernetes Status answer (docs/gcp-api.md §0.3).
struct ApiError {
  int code = 500;
  std::string reason;
  std::string message;
  json details = nullptr;
  std::map<std::string, std::string> headers = {};
};

// The API server's 405 for a verb a resource does not serve.
inline ApiError method_not_allowed() {
  return ApiError{405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource"};
}
json status_json(const ApiError& e);
ApiError not_found(const ResourceType& rt, const std::string& name);
ApiError bad_request(const std::string& message);
ApiError invalid(const ResourceType& rt, const std::string& name,
                 const std::vector<std::pair<std::string, std::string>>& causes);  // field, message

// ---- time and ids ----------------------------------------------------------------------------
std::string rfc3339(SysClock::time_point t);       // seconds: 2025-01-01T00:00:00Z
std::string rfc3339_nano(SysClock::time_point t);  // kubelet log stamps: 9 fraction digits
std::optional<SysClock::time_point> parse_rfc3339(const std::string& s);
std::string new_uid();
std::string random_suffix(int n);  // Kubernetes' generateName alphabet

// ---- selectors -------------------------------------------------------------------------------
struct Requirement {
  std::string key;
  std::string op;  // = != in notin exists !exists
  std::vector<std::string> values;
};
// Throws ApiError (400) on a malformed selector.
std::vector<Requirement> parse_label_selector(const std::string& s);
bool labels_match(const std::vector<Requirement>& sel, const json& labels);
std::vector<Requirement> parse_field_selector(const std::string& s);
bool fields_match(const std::vector<Requirement>& sel, const json& obj);

// Server-side defaults of a PodSpec (restartPolicy, dnsPolicy, imagePullPolicy...).
void default_pod_spec(json& spec);

// ---- /dev/shm (fake_kube_shm.cpp) ---------------------------------------------------------------
// The size in bytes of the /dev/shm CONTAINER of POD_SPEC would see, for the kubelet's
// KINETIC_FAKE_DEV_SHM_BYTES: the container runtime's 64 MiB, unless an emptyDir is mounted there
// (then its sizeLimit, else this machine's memory, standing for the node's).
std::string dev_shm_bytes(const json& pod_spec, const json& container);

// ---- protobuf bodies (fake_kube_proto.cpp) ----------------------------------------------------
// The JSON object of a Kubernetes protobuf request body ("k8s\0" + runtime.Unknown), as kubectl's
// typed commands send them. Throws ApiError: 415 for a kind or a field the fake cannot read (it
// never skips one), 400 for malformed bytes.
json decode_protobuf(const std::string& body);

// ---- CronJob schedules (fake_kube_cron.cpp) -----------------------------------------------------
// Why SCHEDULE is not a standard cron schedule (5 fields or a descriptor such as @hourly), in the
// words of robfig/cron's ParseStandard, which the API server validates with; "" when it is one.
std::string cron_schedule_error(const std::string& schedule);

// ---- authentication and RBAC (fake_kube_auth.cpp) -----------------------------------------------
// Who a request comes from.
struct Identity {
  std::string user;  // "system:serviceaccount:NS:NAME" for a token the fake minted
  std::vector<std::string> groups;
  bool rbac = false;  // authorized by RBAC; false: the test user's token, which may do anything
};

// A service-account token the fake minted: for a pod's container (the kubelet's), or by the
// TokenRequest API (`kubectl create token`). It authenticates while its ServiceAccount (the same
// uid) exists, while the pod it is bound to exists, and until it expires.
struct MintedToken {
  std::string ns, service_account, sa_uid;
  std::string pod, pod_uid;  // empty: not bound to a pod
  std::optional<SysClock::time_point> expires;
};

// What RBAC is asked: the request attributes as the API server's RequestInfoFactory reads them.
struct RequestAttributes {
  bool resource_request = false;
  std::string verb;  // get list watch create update patch delete deletecollection
  std::string group, version, resource, subresource, ns, name;
  std::string path;  // non-resource requests
};
// SEG: the path's decoded segments; WATCH and FIELD_SELECTOR: those query parameters.
RequestAttributes request_attributes(const std::string& method, const std::vector<std::string>& seg,
                                     const std::string& path, const std::string& watch,
                                     const std::string& field_selector);
// Whether one RBAC PolicyRule allows A (verbs, apiGroups, resources with "res/sub" and "*/sub",
// resourceNames, nonResourceURLs with a trailing "*").
bool rule_allows(const json& rule, const RequestAttributes& a);

// ---- runtime state ---------------------------------------------------------------------------
struct LogLine {
  SysClock::time_point time;
  std::string text;  // with its trailing newline (added when the process ended without one)
};

// The container of one pod (only the first container runs).
struct PodRuntime {
  std::string ns, name, uid;
  std::vector<LogLine> log;
  std::string partial;    // bytes after the last newline
  bool started = false;   // the process ran (logs exist)
  bool running = false;   // the process has not exited yet
  bool log_done = false;  // exited and the output pipe drained
  bool exited = false;
  int exit_code = 0;
  int signal = 0;
  pid_t pid = -1;
  int out_fd = -1;
  int pidfd = -1;
  std::thread reaper;
  SysClock::time_point started_at, finished_at;
  bool term_sent = false;
  std::optional<Steady::time_point> kill_at;
  // kubelet progress before the start
  int pull_stage = 0;  // 0 nothing yet, 1 ErrImagePull shown, 2 ImagePullBackOff shown
  bool pulled = false;
  std::string config_error;  // last CreateContainerConfigError message
  // scheduler / autoscaler progress
  std::string unschedulable_message;
  std::string not_trigger_message;
  bool scale_up_triggered = false;
  bool counted = false;          // terminal result already counted by its Job
  bool disrupted = false;        // its node is shutting down (preempt_node_of)
  std::string dir;               // working directory
  std::vector<std::string> env;  // the container's environment ("K=V"), as exec gets it too
  std::set<pid_t> exec_pids;     // `kubectl exec` processes: they die with the container
};

struct PoolState {
  FakeNodePool pool;
  int pending = 0;  // nodes requested by a scale-up, created on the next controller step
  std::vector<std::string> pending_pods;  // pod keys waiting on this scale-up
  std::optional<std::string> fail_next;   // fail_scale_up message
  // hold_capacity: scale-ups wait (their pods stay pending, TriggeredScaleUp said once) until
  // release_capacity, as a flex-start request waits for GKE to find the capacity.
  bool capacity_held = false;
  bool backoff = false;
  std::string hash;                                        // 8 hex digits in node and MIG names
  std::vector<std::map<std::string, long>> virtual_nodes;  // room left on pending nodes
};

struct JobTracking {
  std::set<std::string> succeeded, failed;  // pod uids counted
  std::set<std::string> ignored;            // failed pods a podFailurePolicy Ignore rule matched
  std::optional<std::string> fail_job;      // a FailJob rule matched: the condition's message
  std::set<int> succeeded_indexes;
  std::set<int> failed_indexes;
  std::optional<SysClock::time_point> start;  // exact startTime (the field has seconds only)
  int failed_creates = 0;                     // consecutive refused pod creations
  std::optional<Steady::time_point> create_retry_at;
};

struct WatchEvent {
  std::int64_t rv = 0;
  std::string type;
  const ResourceType* rt = nullptr;
  json object;
};

// Marks between claim_exec and serve_exec, on the server's own Response (never sent).
inline constexpr const char* kExecUpgrade = "X-Fake-Exec-Upgrade";
inline constexpr const char* kExecPodUid = "X-Fake-Exec-Pod-Uid";
inline constexpr const char* kExecProtocol = "X-Fake-Exec-Protocol";
inline constexpr const char* kExecContainer = "X-Fake-Exec-Container";
inline constexpr const char* kExecFailure = "X-Fake-Exec-Failure";
// The fake kubelet's side of a forwarded port (fake_kube_port_forward.cpp; it connects with
// core/socket.h's connect_loopback): the runtime's message when a connection to PORT of POD
// failed with ERROR.
std::string forward_failure(int port, const std::string& pod, const std::string& uid, int error);
// kubectl's SPDY session of a pod's port-forward (fake_kube_port_forward_spdy.cpp), after the
// 101; EXTRA: bytes already read.
void serve_spdy_port_forward(TlsConnection& conn, const std::string& extra, const std::string& pod,
                             const std::string& uid);
inline constexpr const char* kSpdyForwardProtocol = "portforward.k8s.io";

// Marks between claim_port_forward and serve_port_forward.
inline constexpr const char* kForwardUpgrade = "X-Fake-Forward-Upgrade";
inline constexpr const char* kForwardPorts = "X-Fake-Forward-Ports";

// What the WebSocket routes (fake_kube_exec.cpp, fake_kube_port_forward.cpp) share: the
// front hands them the first request's head, which httplib never saw.
std::string lower(std::string s);
std::string trim_exec(const std::string& s);
// The request as httplib would have parsed it, every query pair kept in order; false when HEAD
// is not an HTTP request.
bool parse_head(const std::string& head, httplib::Request& req);
// The client's protocols, in its order of preference (one header or several, comma-separated).
std::vector<std::string> offered_protocols(const httplib::Request& req);
std::string reason_phrase(int status);
std::string http_response(int status, const std::string& reason,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          const std::string& body);
// An upgrade refused (RES not 101) answered on CONN as httplib would have, X-Fake-* marks
// dropped; nothing at all for a response lose_next_response drops.
void write_refusal(const httplib::Response& res, TlsConnection& conn);

struct FailRule {
  int remaining = 0;
  int status = 500;
  std::string prefix;
};

}  // namespace kinetic::fakes::kube

namespace kinetic::fakes {

struct FakeKube::Impl {
  using json = nlohmann::json;
  using ResourceType = kube::ResourceType;
  using Steady = kube::Steady;
  using SysClock = kube::SysClock;

  FakeKubeOptions options;
  int port = 0;
  std::string ca_pem;
  std::string work_root;
  bool own_work_root = false;
  // httplib serves plain HTTP on an internal port; the TLS front on the public one hands it every
  // connection but a pods/exec WebSocket (fake_tls_front.h).
  std::unique_ptr<httplib::Server> server;
  std::unique_ptr<TlsFront> front;
  std::thread server_thread;
  std::thread controller_thread;

  mutable std::mutex mu;
  mutable std::condition_variable changed;  // any state change (watchers, log followers, waits)
  std::condition_variable controller_cv;
  bool dirty = true;
  bool stopping = false;

  // store: qualified resource -> "ns/name" -> object
  std::map<std::string, std::map<std::string, json>> store;
  std::int64_t rv = 1000;
  std::deque<kube::WatchEvent> history;
  std::int64_t history_floor = 1000;  // events after this rv are retained
  std::uint64_t expire_generation = 0;

  std::map<std::string, std::unique_ptr<kube::PodRuntime>> pods;  // by pod uid
  std::map<std::string, kube::PoolState> pools;
  std::map<std::string, kube::JobTracking> jobs;                 // by job uid
  std::map<std::string, std::set<std::string>> jobset_children;  // jobset uid -> created names
  std::set<std::string> unexpected_jobs;            // job uids a CronJob reported as UnexpectedJob
  std::map<std::string, kube::MintedToken> tokens;  // service-account tokens by value

  std::deque<kube::FailRule> failures;
  WriteQuota write_quota;          // set_write_quota: API Priority and Fairness, as a write rate
  WriteGathering write_gathering;  // gather_next_writes (waited on without mu)
  std::optional<std::size_t> cut_log_after;
  std::optional<std::size_t> end_log_after_exit;
  bool hold_log_after_exit = false;        // hold_next_log_stream_open
  int held_log_streams_ended = 0;          // held ones that reached their 60 s end
  bool hold_exit_reports = false;          // hold_exit_reports
  std::vector<std::string> held_exits;     // pod uids whose exit is not reported yet
  std::deque<std::string> lost_responses;  // lose_next_response route prefixes
  std::string pod_create_failure;          // fail_pod_creates message
  int expire_next_watches = 0;             // expire_next_watch: 410s still to serve
  std::map<std::string, int> counters;
  int total = 0;
  int node_serial = 0;

  // Whether the API serves RT: a custom resource only once its CustomResourceDefinition exists
  // (takes mu).
  bool served(const ResourceType& rt) const;
  // Whether the JobSet controller runs: its CRD exists and its Deployment is available, or it
  // came with the cluster (options.jobset_installed). Caller holds mu.
  bool jobset_controller_running();

  // ---- store (caller holds mu) ----
  static std::string key(const std::string& ns, const std::string& name) { return ns + "/" + name; }
  json* find(const ResourceType& rt, const std::string& ns, const std::string& name);
  std::vector<json*> list(const ResourceType& rt, const std::string& ns);  // ns "" = all
  json& insert(const ResourceType& rt, json obj);                          // sets rv, ADDED
  void update(const ResourceType& rt, json& obj);                          // bumps rv, MODIFIED
  void erase(const ResourceType& rt, const std::string& ns, const std::string& name);  // DELETED
  void record(const std::string& type, const ResourceType& rt, const json& obj);
  void kick();  // wake the controllers

  // Prepares a new object for storage: uid, creationTimestamp, generateName.
  void stamp_new(json& obj);
  json new_event(const json& involved, const std::string& type, const std::string& reason,
                 const std::string& message, const std::string& component,
                 const std::string& host = {});

  // ---- API side (fake_kube.cpp) ----
  void handle(const httplib::Request& req, httplib::Response& res, const std::string& body);
  void serve(const httplib::Request& req, httplib::Response& res, const std::string& body);
  // set_write_quota: answers a write past the rate as API Priority and Fairness rejects a
  // request, and returns true.
  bool throttled(const httplib::Request& req, httplib::Response& res);
  void serve_watch(const httplib::Request& req, httplib::Response& res, const ResourceType& rt,
                   const std::string& ns);
  void serve_log(const httplib::Request& req, httplib::Response& res, const std::string& ns,
                 const std::string& name);
  // ---- pods/exec (fake_kube_exec.cpp) ----
  // The API server's checks of an exec request (the pod, its container, a node, the stream
  // protocol): an upgrade the front claimed gets status 101 and what the session needs in
  // kExec* headers; anything else the Status or text a real server answers.
  void serve_exec(const httplib::Request& req, httplib::Response& res, const std::string& ns,
                  const std::string& name);
  // The front's claim: a pods/exec WebSocket upgrade is served here, the rest goes to httplib.
  bool claim_exec(const std::string& head, std::string& extra, TlsConnection& conn);
  // ---- pods/portforward (fake_kube_port_forward.cpp) ----
  // The API server's and the kubelet's checks of a port-forward request (the pod, a node, its
  // ports, the protocol, a running pod): a claimed upgrade gets 101 and kForwardPorts.
  void serve_port_forward(const httplib::Request& req, httplib::Response& res,
                          const std::string& ns, const std::string& name);
  // The front's claim of a pods/portforward WebSocket upgrade: the kubelet's session, each port
  // a TCP connection to 127.0.0.1:PORT (the pod's processes share this machine's network).
  bool claim_port_forward(const std::string& head, std::string& extra, TlsConnection& conn);
  json create(const ResourceType& rt, const std::string& ns, json obj, bool dry_run);
  // A PUT or PATCH result NEXT of the object now OLD, checked as the API server's update
  // validation does (CronJob schedules, a RoleBinding's roleRef); throws ApiError 422.
  void validate_update(const ResourceType& rt, const json& old, const json& next);
  json delete_object(const ResourceType& rt, const std::string& ns, const std::string& name,
                     const std::string& propagation, std::optional<int> grace,
                     std::map<std::string, std::string>* headers);
  // The garbage collector for the core/v1 PLURALS of NS whose ownerReferences name OWNER_UID
  // (an owner just deleted, background propagation): they are deleted.
  void delete_owned(const std::string& owner_uid, const std::string& ns,
                    const std::vector<std::string>& plurals);

  // ---- authentication, RBAC, service-account tokens (fake_kube_auth.cpp; caller holds mu) ----
  // The caller of TOKEN; nullopt: 401. A minted token that no longer holds is refused even when
  // options.expected_token is empty.
  std::optional<kube::Identity> authenticate(const std::string& token);
  // Throws the API server's 403 Forbidden Status unless RBAC allows WHO the request (a caller
  // without rbac passes).
  void authorize(const kube::Identity& who, const kube::RequestAttributes& a);
  // A new token for the ServiceAccount SA (an object in the store), bound to POD when not null.
  std::string mint_token(const json& sa, const json* pod,
                         std::optional<SysClock::time_point> expires);
  // POST .../serviceaccounts/NAME/token (TokenRequest): the answer.
  json token_request(const std::string& ns, const std::string& name, json request);
  // The service-account controller: every namespace has a "default" ServiceAccount.
  void ensure_default_service_accounts();

  // ---- CronJob controller (fake_kube_cron.cpp; caller holds mu) ----
  void reconcile_cronjobs();
  // What the controller does with CJ's Jobs on every sync: finished ones leave status.active
  // (SawCompletedJob), lastSuccessfulTime, missing ones (MissingJob), history limits.
  void sync_cronjob(json& cj);
  // What it does at a scheduled time (FakeKube::trigger_cronjob).
  std::string trigger_cronjob(const std::string& ns, const std::string& name);

  // ---- Kueue (fake_kube_kueue.cpp; caller holds mu unless said) ----
  // Its CRDs exist and its controller's Deployment is available.
  bool kueue_running();
  // The webhook: a Job or JobSet created with the queue label is suspended.
  void kueue_default_suspend(const ResourceType& rt, json& obj);
  std::vector<json*> kueue_owners();
  void kueue_sync_workloads();
  void kueue_admit();
  void kueue_reserve(json& wl, const std::string& cq_name, const std::string& flavor_name);
  void kueue_publish_counts(std::map<std::string, std::map<std::string, int>>& counts);
  void kueue_start_owner(const json& wl, const json& flavor, const std::string& cluster_queue);
  int kueue_preempt(const json& preemptor, const json& cq, const std::vector<json*>& admitted,
                    const std::map<std::string, long>& used);
  void kueue_evict(json& wl, const json& preemptor, const json& cq);
  void kueue_requeue_evicted();
  const ResourceType* kueue_owner_type(const json& wl);
  json* kueue_owner_of(const json& wl);
  bool kueue_owner_active(const json& wl);
  void reconcile_kueue();
  // Admission fair sharing: whether the controller, as it last (re)started, read a configuration
  // with admissionFairSharing (the pod template it saw then, dumped, tells a restart).
  bool kueue_config_fair_sharing();
  std::string kueue_started_template;
  bool kueue_started_fair = false;
  // A ClusterQueue's pending Workloads in the order it admits them: in
  // UsageBasedAdmissionFairSharing mode (and the configuration on), by their LocalQueue's usage
  // first; then priority, then age.
  std::vector<json*> kueue_ordered(std::vector<json*> queue, const json* cq);
  // "ns/lq" -> what its Workloads were admitted with, summed over every admission (no decay).
  std::map<std::string, long> kueue_local_queue_usage;
  // The visibility API's PendingWorkloadsSummary of LOCAL_QUEUE in NS, or of CLUSTER_QUEUE when
  // LOCAL_QUEUE is empty (takes mu).
  json kueue_pending_workloads(const std::string& ns, const std::string& local_queue,
                               const std::string& cluster_queue);

  // ---- control plane (fake_kube_control.cpp) ----
  void controller_loop();
  // One pass over everything; returns when the next timed action is due (or nullopt).
  std::optional<Steady::time_point> reconcile();
  void apply_job_defaults(json& job);
  void reconcile_jobs(Steady::time_point now, std::optional<Steady::time_point>& next);
  bool job_suspension(json& job, json& status, bool suspended, SysClock::time_point now);
  void reconcile_jobsets();
  // ---- Deployments and readiness probes (fake_kube_deployments.cpp) ----
  // A pod from each Deployment's template until it has spec.replicas live ones (its
  // ReplicaSet's work), and status.replicas/readyReplicas/conditions.
  void reconcile_deployments();
  // A system controller's Deployment (JobSet's): available at once, with no pod.
  void mark_deployment_available(json& d);
  void set_deployment_status(json& d, const std::string& replica_set, int replicas, int ready);
  // The kubelet's prober: a running pod with a tcpSocket readinessProbe is Ready once its port
  // accepts a connection (tried again every 50 ms until then; NEXT says when).
  void probe_readiness(std::optional<Steady::time_point>& next);
  static bool has_readiness_probe(const json& pod);
  // The pod's Ready and ContainersReady conditions and its containers' ready (caller holds mu).
  void set_pod_ready(json& pod, bool ready);
  // Each Deployment's ReplicaSet uid (no ReplicaSet object is stored): its pods' owner.
  std::map<std::string, std::string> deployment_replica_sets;
  void schedule_pods();
  void run_kubelet(std::optional<Steady::time_point>& next);
  void process_pools();
  void create_node(kube::PoolState& ps);
  void node_lost(json& pod);  // its node is gone: the pod fails and is garbage-collected
  void set_pool(const FakeNodePool& pool);
  void drop_pool(const std::string& name);
  kube::PodRuntime& runtime(const json& pod);
  void start_container(json& pod, kube::PodRuntime& rt);
  void reap(kube::PodRuntime* rt);  // reaper thread body
  void on_exit(kube::PodRuntime& rt);
  void terminate_pod(json& pod, int grace_seconds, bool record_event);
  void pod_terminal(const json& pod);  // counts the result for the owning Job
  void kill_all();
  bool preempt_node_of(const std::string& ns, const std::string& pod_name);
  // The node goes once no pod on it is left running (after a preemption).
  void retire_node_if_idle(const std::string& node);
  std::set<std::string> retiring_nodes;
};

}  // namespace kinetic::fakes
