// The gke backend's journey steps (staging, submit, a pipeline's runner), its job queries
// (get, list, cleanup) and control (cancel, exec); its logs are in gke_logs.cpp and its collect in
// gke_collect.cpp.
#include "backend/gke/gke_backend.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <future>
#include <set>

#include "backend/gke/cluster_access.h"
#include "backend/gke/create_or_adopt.h"
#include "backend/gke/exec_pod.h"
#include "backend/gke/follower_heartbeat.h"
#include "backend/gke/gke_pipeline_records.h"
#include "backend/gke/gke_pipeline_store.h"
#include "backend/gke/image_builder.h"
#include "backend/gke/job_identity.h"
#include "backend/gke/job_manifest.h"
#include "backend/gke/job_state.h"
#include "backend/gke/job_watch.h"
#include "backend/gke/jobset_release.h"
#include "backend/gke/kueue.h"
#include "backend/gke/names.h"
#include "backend/gke/pipeline_runner_job.h"
#include "backend/gke/pod_port_dialer.h"
#include "backend/gke/server_state.h"
#include "backend/gke/slice_host.h"
#include "backend/notify.h"
#include "backend/prefixed_log_sink.h"
#include "backend/stopped_verdict.h"
#include "core/checksum.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/terminal.h"
#include "gcp/composite_upload.h"
#include "gcp/parallel_transfer.h"
#include "gcp/storage.h"
#include "job/budget.h"
#include "job/function_call.h"
#include "job/manifest.h"
#include "job/spec.h"
#include "k8s/exec.h"
#include "k8s/timestamp.h"
#include "pack/archive.h"
#include "pack/sha256.h"
#include "render/status_line.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

// How long a record with neither a workload nor a verdict counts as a submission in flight
// (spec staged, workload being created: seconds) rather than a job that is over.
constexpr double kSubmittingSeconds = 600;

// What a workload still needs from the bucket, found anywhere in it (a Job's template, a
// JobSet's jobs): the contexts its containers are given (KINETIC_CONTEXT_URI values,
// "gs://BUCKET/contexts/SHA.tar.gz") into CONTEXTS, and the tags of their images (whose build
// sources are builds/TAG.tar.gz) into TAGS.
void staging_refs(const json& node, std::set<std::string>& contexts, std::set<std::string>& tags) {
  if (node.is_object()) {
    if (node.contains("name") && node["name"] == "KINETIC_CONTEXT_URI" && node.contains("value") &&
        node["value"].is_string())
      contexts.insert(node["value"].get<std::string>());
    if (node.contains("image") && node["image"].is_string()) {
      const std::string image = node["image"].get<std::string>();
      const size_t colon = image.rfind(':');
      if (colon != std::string::npos && image.find('/', colon) == std::string::npos)
        tags.insert(image.substr(colon + 1));
    }
    for (const auto& [key, value] : node.items()) staging_refs(value, contexts, tags);
  } else if (node.is_array()) {
    for (const auto& value : node) staging_refs(value, contexts, tags);
  }
}

// A context's customTime is its last use, which the bucket's lifecycle rule counts from: a run
// that reuses it moves it to now, at most once a day (one request, only when it is due).
void refresh_last_use(gcp::StorageClient& storage, const gcp::ObjectInfo& context) {
  if (!context.custom_time.empty() && now_unix() - parse_rfc3339(context.custom_time) < 24 * 3600)
    return;
  try {
    storage.touch(context.bucket, context.name);
  } catch (const Error&) {
    // The run goes on: the pod's bootstrap touches it again when it starts.
  }
}

// Deletes NAMES from BUCKET, many at once: a `cleanup` of a thousand finished records is
// thousands of deletes, each a round trip, so they go on kParallelDeletes connections of their
// own (one already gone counts as done; the first other failure is thrown once all stop).
constexpr int kParallelDeletes = 32;
void remove_objects(const Session& session, const std::string& bucket,
                    const std::vector<std::string>& names) {
  if (names.empty()) return;
  if (!session.new_cloud) {
    for (const auto& name : names) session.storage().delete_object(bucket, name);
    return;
  }
  std::vector<gcp::TransferTask> tasks;
  for (const auto& name : names)
    tasks.push_back({gcp::TransferTask::Kind::remove, bucket, name, {}, {}});
  gcp::transfer_all(tasks, session.endpoint("storage"), session.new_cloud, kParallelDeletes);
}

}  // namespace

GkeBackend::GkeBackend(Session session) : session_(std::move(session)) {}
GkeBackend::~GkeBackend() = default;

k8s::Client& GkeBackend::kube() {
  if (!kube_) kube_ = connect_kube(session_, cluster_access(session_));
  return *kube_->client;
}

PipelineStore* GkeBackend::pipeline_store() {
  if (!pipeline_store_) pipeline_store_ = std::make_unique<GkePipelineStore>(session_);
  return pipeline_store_.get();
}

std::unique_ptr<Backend> GkeBackend::for_another_thread() {
  return std::make_unique<GkeBackend>(session_.for_another_thread());
}

std::string GkeBackend::prepare_image(const ImageRecipe& recipe) {
  bool built = false;
  return ensure_image(session_, recipe, &built);
}

std::optional<std::string> GkeBackend::staged_context(const std::string& sha256,
                                                      Compression compression) {
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  auto object = storage.get_object(bucket, context_object(sha256, compression));
  if (!object) return std::nullopt;
  refresh_last_use(storage, *object);
  return "gs://" + bucket + "/" + context_object(sha256, compression);
}

namespace {

// Contexts and --data archives from KINETIC_PARALLEL_UPLOAD_THRESHOLD_MIB (150 by default,
// gcloud's threshold; 0: never) go up as parallel parts of at least a quarter of it, at most
// 32 MiB, so a threshold's worth is 4 parts and a 5 GiB archive 32.
gcp::CompositePlan parallel_upload_plan(const Env& env) {
  gcp::CompositePlan plan;
  plan.temp_prefix = kUploadsPrefix;
  uint64_t mib = 150;
  if (auto v = env.get_nonempty("KINETIC_PARALLEL_UPLOAD_THRESHOLD_MIB")) {
    const auto [end, error] = std::from_chars(v->data(), v->data() + v->size(), mib);
    if (error != std::errc() || end != v->data() + v->size() || mib > (1ull << 40))
      throw Error(Errc::usage, "KINETIC_PARALLEL_UPLOAD_THRESHOLD_MIB=" + *v +
                                   " is not a whole number of MiB; set it to e.g. 150, or 0 to "
                                   "upload every archive in one stream");
  }
  plan.threshold = mib == 0 ? UINT64_MAX : mib << 20;
  plan.min_component = std::clamp<uint64_t>((mib << 20) / 4, 256 << 10, 32ull << 20);
  return plan;
}

}  // namespace

std::string GkeBackend::stage_context(const fs::path& archive, const std::string& sha256,
                                      Compression compression, bool* uploaded) {
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  const std::string object = context_object(sha256, compression);
  const std::string uri = "gs://" + bucket + "/" + object;
  *uploaded = false;
  if (auto there = storage.get_object(bucket, object)) {  // content-addressed: already there
    refresh_last_use(storage, *there);
    return uri;
  }

  StatusLine line(*session_.io);
  gcp::UploadOptions options;
  // application/zstd: RFC 8878's media type.
  options.content_type = compression == Compression::zstd ? "application/zstd" : "application/gzip";
  options.if_generation_match = 0;
  options.custom_time = rfc3339(now_unix());  // last used: now (the bucket's lifecycle rule)
  options.progress = [&](uint64_t done, uint64_t total) {
    line.update("uploading context: " + format_bytes(done) + " of " + format_bytes(total), true);
  };
  try {
    gcp::upload_file_in_parts(storage, bucket, object, archive, options,
                              parallel_upload_plan(*session_.env), session_.endpoint("storage"),
                              session_.new_cloud);
  } catch (const Error&) {
    // Another run may have uploaded the same bytes meanwhile (the precondition failed).
    if (!storage.get_object(bucket, object)) throw;
  }
  *uploaded = true;
  return uri;
}

namespace {

// A function job's call and its runner go beside the spec; the pod checks each against the
// sha256 the spec records (whose own sha256 the Job carries).
void stage_function_call(gcp::StorageClient& storage, const std::string& bucket,
                         const JobSpec& spec) {
  const FunctionCall& call = *spec.function;
  const gcp::ObjectInfo uploaded =
      storage.upload_file(bucket, function_call_object(spec.id), call.local_path,
                          {.content_type = "application/octet-stream"});
  if (uploaded.size != static_cast<uint64_t>(call.bytes))
    throw Error(Errc::usage, "--function " + call.local_path +
                                 " changed while kinetic read it; write it once and run again");
  storage.upload_string(bucket, function_runner_object(spec.id),
                        std::string(function_runner_source()), {.content_type = "text/x-python"});
}

}  // namespace

json GkeBackend::stage(const JobSpec& spec, const std::map<std::string, std::string>& secrets,
                       std::vector<std::string>& posted) {
  specs_[spec.id] = spec;
  submitted_at_[spec.id] = now_unix();
  if (auto it = secrets.find(kNotifyVariable); it != secrets.end()) notify_[spec.id] = it->second;
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  const std::string document = spec_document(spec);
  spec_sha256_[spec.id] = sha256_hex(document);
  storage.upload_string(bucket, spec_object(spec.id), document,
                        {.content_type = "application/json"});
  if (spec.function) stage_function_call(storage, bucket, spec);
  // The pod checks it against spec.debug's sha256, as it checks the function runner.
  if (spec.debug)
    storage.upload_string(bucket, debug_launcher_object(spec.id),
                          std::string(debug_launcher_source()), {.content_type = "text/x-python"});

  ManifestInput in = manifest_input(spec, bucket, session_.target.ns);
  const std::string ns = session_.target.ns;
  // The pods run as kinetic-job: the ServiceAccount admission plugin refuses a pod naming an
  // account that does not exist, so the Job would never start one.
  if (!job_account_ready_) {
    ensure_job_service_account(kube(), ns);
    job_account_ready_ = true;
  }
  if (auto secret = build_secret(in, secrets)) {
    posted.push_back(k8s::secret_path(ns, k8s_object_name(spec.id)));
    create_or_adopt(kube(), k8s::secrets_path(ns), json::parse(secret->dump()));
  }
  json workload = json::parse(build_workload(in).dump());
  // On a shared cluster (`up --queue on`) the job waits its turn in its accelerator's queue.
  const Accelerator accel = resolve_accelerator(spec.accelerator);
  if (!accel.resource_name.empty()) {
    auto queue = queues_.find(accel.name);
    if (queue == queues_.end())
      queue = queues_.emplace(accel.name, local_queue_for(kube(), ns, accel.name)).first;
    if (!queue->second.empty()) enqueue(workload, queue->second, spec.priority);
  }
  return workload;
}

// A multislice run on fewer pools than slices would hold the pools it got while the rest of its
// slices wait forever: refused before anything is created. Without the right to list node
// pools (a user who holds only the namespace) the run goes ahead, and its pods say why they wait.
void GkeBackend::require_slice_pools(const JobSpec& spec) {
  if (spec.slices <= 1) return;
  Accelerator accel = resolve_accelerator(spec.accelerator);
  accel.slices = spec.slices;
  std::vector<gcp::NodePoolInfo> pools;
  try {
    const Target& t = session_.target;
    gcp::GkeClient gke(*session_.cloud, session_.endpoint("container"), session_.poll);
    pools = gke.list_node_pools(t.project, t.location, t.cluster);
  } catch (const Error&) {
    return;
  }
  if (const std::string why = missing_slice_pools(accel, pools); !why.empty())
    throw Error(Errc::job_start, why);
}

void GkeBackend::submit(const JobSpec& spec, const std::map<std::string, std::string>& secrets) {
  if (spec.serve) return submit_server(spec, secrets);
  require_slice_pools(spec);
  k8s::Client& k = kube();
  const std::string ns = session_.target.ns;
  const std::string name = k8s_object_name(spec.id);
  std::vector<std::string> posted;  // objects asked for, created or not (the answer may be lost)
  try {
    json workload = stage(spec, secrets, posted);
    const bool jobset = workload.value("kind", "") == "JobSet";
    try {
      // A lost answer is no failure and leaves no orphan: the Job is looked up by name.
      posted.push_back(jobset ? k8s::jobset_path(ns, name) : k8s::job_path(ns, name));
      create_or_adopt(k, jobset ? k8s::jobsets_path(ns) : k8s::jobs_path(ns), workload);
    } catch (const k8s::ApiError& e) {
      if (!jobset || e.code() != 404) throw;
      throw Error(Errc::job_start,
                  spec.accelerator +
                      " spans several hosts and runs as a JobSet, but this cluster has no JobSet "
                      "API; run `kinetic up --accelerator " +
                      spec.accelerator + "` (it installs JobSet " + kJobSetVersion +
                      ") and run again");
    }
  } catch (...) {
    // Nothing half-submitted stays behind: what exists of ours goes, the Job first.
    for (auto it = posted.rbegin(); it != posted.rend(); ++it) remove_if_ours(k, *it, spec.id);
    throw;
  }
}

nlohmann::ordered_json GkeBackend::stage_step(const JobSpec& spec,
                                              const std::map<std::string, std::string>& secrets) {
  const std::string ns = session_.target.ns;
  const std::string name = k8s_object_name(spec.id);
  std::vector<std::string> posted;
  json workload;
  try {
    workload = stage(spec, secrets, posted);
  } catch (...) {
    for (auto it = posted.rbegin(); it != posted.rend(); ++it) remove_if_ours(kube(), *it, spec.id);
    throw;
  }
  const bool jobset = workload.value("kind", "") == "JobSet";
  return {{"job", spec.id},
          {"manifest", workload},
          {"create", jobset ? k8s::jobsets_path(ns) : k8s::jobs_path(ns)},
          {"object", jobset ? k8s::jobset_path(ns, name) : k8s::job_path(ns, name)},
          {"secret", posted.empty() ? std::string() : posted.front()},
          {"status", "gs://" + session_.bucket() + "/" + results_prefix(spec.id) + "status.json"}};
}

nlohmann::ordered_json GkeBackend::start_pipeline_runner(const std::string& id,
                                                         const nlohmann::ordered_json& plan) {
  return gke::start_pipeline_runner(session_, kube(), id, plan);
}

std::unique_ptr<PipelineRecords> GkeBackend::pipeline_records() {
  return std::make_unique<GkePipelineRecords>(session_,
                                              [this]() -> k8s::Client& { return kube(); });
}

std::optional<JobSpec> GkeBackend::spec_for(const std::string& id) {
  auto it = specs_.find(id);
  if (it != specs_.end()) return it->second;
  if (auto spec = get_spec(id)) return specs_[id] = *spec;
  return std::nullopt;
}

bool GkeBackend::has_checkpoint(const std::string& id) {
  gcp::StorageClient& storage = session_.storage();
  try {
    return !storage.list(session_.bucket(), results_prefix(id) + "checkpoints/").objects.empty();
  } catch (const Error&) {
    return false;  // only the wording of one line depends on it
  }
}

void GkeBackend::delete_runtime_objects(const std::string& id, std::optional<bool> jobset,
                                        bool secret) {
  k8s::Client& k = kube();
  const std::string ns = session_.target.ns;
  const std::string name = k8s_object_name(id);
  if (jobset != true) k.remove(k8s::job_path(ns, name));
  if (jobset != false) k.remove(k8s::jobset_path(ns, name));  // false without the CRD, too
  if (secret) k.remove(k8s::secret_path(ns, name));
}

void GkeBackend::clean(const JobSpec& spec) {
  if (spec.keep) return;
  const bool held = held_.contains(spec.id);
  // The record (spec, status, attempts and their logs, outputs) stays for `logs` and `status`
  // until `cleanup` or the bucket's lifecycle rule removes it; checkpoints are the bulk and
  // serve only a run that is over. They go while the cluster's objects are deleted (one round
  // trip for the common run, which saved none; issue #14).
  const std::string bucket = session_.bucket();
  const std::string checkpoints = results_prefix(spec.id) + "checkpoints/";
  auto delete_checkpoints = [&](gcp::StorageClient& storage) {
    for (const auto& o : storage.list(bucket, checkpoints).objects)
      storage.delete_object(bucket, o.name);
  };
  std::future<void> bucket_side;
  if (session_.new_cloud)
    bucket_side = std::async(std::launch::async, [&] {
      const std::shared_ptr<http::Transport> own = session_.new_cloud();
      gcp::StorageClient storage(*own, session_.endpoint("storage"));
      delete_checkpoints(storage);
    });
  if (held) {
    // The pod stays for `exec` (its container has its environment already): only the Secret
    // goes now; the Job, once the hold ends, goes after its ttlSecondsAfterFinished.
    // (The pod's log said so, with how to exec in and how to end it.)
    if (!spec.secret_env.empty())
      kube().remove(k8s::secret_path(session_.target.ns, k8s_object_name(spec.id)));
  } else {
    // A job without --env values has no Secret (manifest.h build_secret): nothing to delete.
    delete_runtime_objects(spec.id, resolve_accelerator(spec.accelerator).hosts > 1,
                           !spec.secret_env.empty());
  }
  if (bucket_side.valid())
    bucket_side.get();
  else
    delete_checkpoints(session_.storage());
}

std::string GkeBackend::notify_urls_of(const std::string& id) {
  if (auto it = notify_.find(id); it != notify_.end()) return it->second;
  auto secret = kube().get(k8s::secret_path(session_.target.ns, k8s_object_name(id)));
  if (!secret || !(*secret).contains("data")) return "";
  const json& data = (*secret)["data"];
  if (!data.contains(kNotifyVariable) || !data[kNotifyVariable].is_string()) return "";
  return base64_decode(data[kNotifyVariable].get<std::string>()).value_or("");
}

void GkeBackend::notify_cancelled(const std::string& urls, JobStatus st, const JobSpec* spec) {
  if (urls.empty()) return;
  st.state = std::string(kCancelled);
  if (st.error.empty()) st.error = "cancelled";
  if (st.duration_seconds <= 0 && !st.started.empty())
    if (auto started = k8s::parse_timestamp(st.started))
      st.duration_seconds =
          std::max(0.0, now_unix() - static_cast<double>(started->seconds) - started->nanos * 1e-9);
  const std::string outputs = "gs://" + session_.bucket() + "/" + results_prefix(st.id);
  const auto payload = notify_payload(notify_facts(st, spec ? spec->price_per_hour : 0.0, outputs));
  for (const auto& w : post_notifications(split_notify_urls(urls), payload))
    session_.io->warn("kinetic: " + w);
}

// A job cancelled before its bootstrap wrote a verdict (pending: no pod ever ran) keeps a record
// that says so, else it would vanish from `status` while its record stays. Written only if
// absent: a bootstrap that did run writes its own verdict over it (the pod's is the record).
void GkeBackend::record_cancel(JobStatus st) {
  const StoppedVerdict verdict = cancelled_verdict();
  st.state = verdict.state;
  st.exit_code = verdict.exit_code;
  st.error = verdict.error;
  st.final = true;
  gcp::StorageClient& storage = session_.storage();
  const std::string object = results_prefix(st.id) + "status.json";
  try {
    storage.upload_string(session_.bucket(), object, to_json(st).dump(),
                          {.content_type = "application/json", .if_generation_match = 0});
  } catch (const Error& e) {
    if (!storage.get_object(session_.bucket(), object))
      session_.io->warn("kinetic: could not record the cancel of " + st.id + ": " + e.what());
  }
}

JobStatus GkeBackend::cancel(const std::string& id) {
  std::optional<JobStatus> before = get(id);
  if (!before) throw Error(Errc::not_found, "no job '" + id + "' in the gke backend");
  // The Secret goes with the Job: its notify URLs are read first.
  const std::string urls = before->terminal() ? "" : notify_urls_of(id);
  if (is_server_status(*before)) delete_server_objects(id, /*dry_run=*/false);
  delete_runtime_objects(id);
  JobStatus st = *before;
  if (!st.terminal()) {
    st.state = std::string(kCancelled);
    st.finished = rfc3339(now_unix());
    st.id = id;
    record_cancel(st);
    const std::optional<JobSpec> spec = urls.empty() ? std::nullopt : spec_for(id);
    notify_cancelled(urls, st, spec ? &*spec : nullptr);
  }
  return st;
}

std::string GkeBackend::running_pod(const std::string& job, int host, const std::string& purpose) {
  const std::optional<JobSpec> spec = spec_for(job);
  // A multislice run's hosts are numbered across its slices (slice S's host H is S * HOSTS + H).
  const int per_slice = spec ? resolve_accelerator(spec->accelerator).hosts : 1;
  const int hosts = per_slice * (spec ? spec->slices : 1);
  if (host < 0 || host >= hosts) choose_exec_pod({}, job, host, hosts, per_slice, purpose);
  const std::optional<JobStatus> st = get(job);
  if (!st) throw Error(Errc::not_found, "no job '" + job + "' in the gke backend");
  // A failed job held for exec (--hold-on-failure) has its pod up: exec is what it is held for.
  if (st->terminal() && !is_held(*st, rfc3339(now_unix())))
    throw Error(Errc::not_found, job + " has ended (" + st->state + "): there is nothing to " +
                                     purpose + "; see `kinetic logs " + job + "`");
  return choose_exec_pod(kube().list(k8s::pods_path(session_.target.ns), job_selector(job)).items,
                         job, host, hosts, per_slice, purpose);
}

int GkeBackend::exec(const ExecRequest& request) {
  k8s::ExecParams params;
  params.ns = session_.target.ns;
  params.pod = running_pod(request.job, request.host, "exec into");
  params.container = kJobContainer;
  params.command = in_job_context(request.command);
  params.stdin_open = request.stdin_open;
  // As kubectl: a terminal needs -i, and kinetic's stdin to be one.
  params.tty = request.tty && request.stdin_open && ::isatty(0);
  if (request.tty && !request.stdin_open)
    session_.io->warn(
        "-t without -i: no terminal for the command (as kubectl exec); add -i for an "
        "interactive one");
  else if (request.tty && !params.tty)
    session_.io->warn("Unable to use a TTY - input is not a terminal or the right kind of file");

  k8s::ExecIo io;
  io.in = params.stdin_open ? 0 : -1;
  std::optional<RawTerminal> raw;
  std::optional<ResizeSignal> resized;
  if (params.tty) {
    resized.emplace();
    io.resize = resized->fd();
    io.size = [] { return terminal_size(0); };
    raw.emplace(0);
  }
  const ClusterAccess access = cluster_access(session_);
  return k8s::exec_in_pod(access.server, access.ca_pem, *session_.credentials, params, io,
                          session_.verbosity);
}

std::unique_ptr<PortDialer> GkeBackend::port_dialer(const std::string& job, int host) {
  if (const std::optional<JobSpec> spec = spec_for(job); spec && spec->serve && host == 0)
    return server_port_dialer(job);
  PodTarget target;
  target.ns = session_.target.ns;
  target.job = job;
  target.pod = running_pod(job, host, "forward ports to");
  const ClusterAccess access = cluster_access(session_);
  target.server = access.server;
  target.ca_pem = access.ca_pem;
  const std::string path = k8s::pod_path(target.ns, target.pod);
  return pod_port_dialer(std::move(target), session_.credentials, session_.verbosity,
                         [this, path] { return kube().get(path); });
}

void GkeBackend::request_cancel(const std::string& id) {
  {
    std::lock_guard lock(cancel_mu_);
    cancel_requested_.insert(id);
  }
  // Runs on the interrupt thread while the log stream holds kube()'s connection: a transport is
  // not shared between threads, so this takes a connection of its own.
  KubeConnection own = connect_kube(session_, cluster_access(session_));
  const std::string ns = session_.target.ns;
  const std::string name = k8s_object_name(id);
  // Background propagation: the pods go too, and each gets SIGTERM, which the bootstrap passes on.
  own.client->remove(k8s::job_path(ns, name));
  own.client->remove(k8s::jobset_path(ns, name));
  bool server = false;
  {
    std::lock_guard lock(cancel_mu_);
    server = servers_.contains(id);
  }
  if (server) own.client->remove(k8s::deployment_path(ns, name));  // its pods go with it
}

std::optional<JobStatus> GkeBackend::get(const std::string& id) {
  k8s::Client& k = kube();
  const std::string ns = session_.target.ns;
  for (const auto& collection : {k8s::jobs_path(ns), k8s::jobsets_path(ns)}) {
    auto items = list_or_empty(k, collection, job_selector(id));
    if (items.empty()) continue;
    JobStatus st = status_from_workload(items.front());
    if (const std::string queue = waiting_queue(items.front()); !queue.empty())
      st.queued = queued_text(queue, queue_positions(k, ns, queue)[k8s_object_name(id)],
                              requeued_after_preemption(k, ns, items.front()));
    // An active workload whose record has the run's verdict already (the bootstrap wrote it, then
    // the log's last lines; the pod's exit and the Job's condition come a beat later): the record
    // wins, so whatever saw the job end (`logs -f`, `run`, `wait`) is what `status` says next. A
    // held run (--hold-on-failure) is such a record too, its Job active while the pod is held.
    if (!st.terminal())
      if (auto reported = results_status(id);
          reported && reported->terminal() &&
          (reported->final || is_held(*reported, rfc3339(now_unix()))))
        return reported;
    if (st.terminal() && st.state != kSucceeded) {
      if (auto reported = results_status(id)) {
        st.exit_code = reported->exit_code;
        if (!reported->error.empty() && st.state != kTimedOut) st.error = reported->error;
        // A slice its bootstrap stopped at the run's deadline failed as a run that is over.
        if (reported->state == kTimedOut) st.state = std::string(kTimedOut);
      }
    }
    return st;
  }
  // A server's status is its Deployment's: the records of its pods' runs are not its verdict.
  if (auto server = server_status(id)) return server;
  return results_status(id);
}

std::optional<JobSpec> GkeBackend::get_spec(const std::string& id) {
  gcp::StorageClient& storage = session_.storage();
  try {
    const std::string document = storage.download_string(session_.bucket(), spec_object(id));
    JobSpec spec = job_spec_from_json(json::parse(document));
    spec_sha256_[id] = sha256_hex(document);  // what the pod's bootstrap was given
    return spec;
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return std::nullopt;
    throw;
  }
}

std::vector<JobStatus> GkeBackend::list() {
  k8s::Client& k = kube();
  const std::string ns = session_.target.ns;
  std::vector<JobStatus> out;
  // Each queue's line, asked once (kueue.h): where its waiting jobs stand.
  std::map<std::string, std::map<std::string, int>> lines;
  for (const auto& collection : {k8s::jobs_path(ns), k8s::jobsets_path(ns)}) {
    for (const auto& w : list_or_empty(k, collection, managed_selector())) {
      // A JobSet's child Jobs carry the job label too; the JobSet speaks for them.
      if (w["metadata"].contains("ownerReferences")) continue;
      JobStatus st = status_from_workload(w);
      if (const std::string queue = waiting_queue(w); !queue.empty()) {
        auto line = lines.find(queue);
        if (line == lines.end()) line = lines.emplace(queue, queue_positions(k, ns, queue)).first;
        st.queued = queued_text(queue, line->second[w["metadata"].value("name", "")],
                                requeued_after_preemption(k, ns, w));
      }
      // Active with a hold (--hold-on-failure): its record says whether it failed and is held.
      if (!st.terminal() &&
          w["metadata"].value("annotations", json::object()).contains(kHoldAnnotation))
        if (auto reported = results_status(st.id);
            reported && is_held(*reported, rfc3339(now_unix())))
          st = *reported;
      out.push_back(std::move(st));
    }
  }
  for (const auto& d : list_or_empty(k, k8s::deployments_path(ns), managed_selector())) {
    JobStatus st = status_from_deployment(d);
    // A server not answering may have been stopped for --idle-stop: its record says so.
    if (st.state != kRunning)
      if (auto reported = results_status(st.id);
          reported && reported->final && reported->terminal())
        st = *reported;
    out.push_back(std::move(st));
  }
  // Finished jobs whose Job is gone live on in the bucket: the newest kRecordedJobsListed.
  std::set<std::string> known;
  for (const auto& st : out) known.insert(st.id);
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  std::vector<std::pair<std::string, std::string>> recorded;  // updated, object
  // Only the jobs' status objects: a long job leaves thousands of log parts under jobs/.
  for (const auto& o :
       storage.list(bucket, kJobsPrefix, "", std::string(kJobsPrefix) + "*/results/status.json")
           .objects) {
    std::string_view rest = std::string_view(o.name).substr(std::string_view(kJobsPrefix).size());
    if (known.count(std::string(rest.substr(0, rest.find('/'))))) continue;
    recorded.emplace_back(o.updated, o.name);
  }
  std::sort(recorded.rbegin(), recorded.rend());
  constexpr size_t kRecordedJobsListed = 100;
  if (recorded.size() > kRecordedJobsListed) recorded.resize(kRecordedJobsListed);
  for (const auto& [updated, object] : recorded) {
    try {
      out.push_back(job_status_from_json(json::parse(storage.download_string(bucket, object))));
    } catch (const json::exception&) {
      // a damaged record is left out of the listing
    } catch (const Error& e) {
      if (e.code() != Errc::not_found) throw;  // removed meanwhile
    }
  }
  std::sort(out.begin(), out.end(),
            [](const JobStatus& a, const JobStatus& b) { return a.created > b.created; });
  return out;
}

// One listing of jobs/ for all records (paged by 1,000): a record's object count stays bounded
// whatever its job's length (its log is composed as it runs).
std::map<std::string, uint64_t> GkeBackend::record_bytes() {
  std::map<std::string, uint64_t> sizes;
  for (const auto& o : session_.storage().list(session_.bucket(), kJobsPrefix).objects)
    sizes[job_id_of_record(o.name)] += o.size;
  return sizes;
}

std::vector<CleanupItem> GkeBackend::cleanup(const CleanupPolicy& policy, bool dry_run) {
  k8s::Client& k = kube();
  const std::string ns = session_.target.ns;
  const double now = now_unix();
  const double cutoff = now - static_cast<double>(policy.older_than_seconds);
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  std::vector<CleanupItem> items;
  std::set<std::string> live;    // job ids with a workload that stays
  std::set<std::string> in_use;  // context URIs those workloads still need
  std::set<std::string> tags;    // and the tags of their images

  // Every finished job, by its workload's end or its record's last write: the policy decides
  // which go (backend/cleanup_policy.h), the same rule for both.
  std::map<std::string, double> finished;  // job id -> when it finished
  struct FinishedWorkload {
    std::string collection;
    json workload;
    JobStatus status;
  };
  std::vector<FinishedWorkload> finished_workloads;
  for (const auto& collection : {k8s::jobs_path(ns), k8s::jobsets_path(ns)}) {
    for (auto& w : list_or_empty(k, collection, managed_selector())) {
      if (w["metadata"].contains("ownerReferences")) continue;
      JobStatus st = status_from_workload(w);
      const double at = parse_rfc3339(st.finished);
      if (st.terminal() && at > 0) {
        finished[st.id] = std::max(finished[st.id], at);
        finished_workloads.push_back({collection, std::move(w), std::move(st)});
      } else {
        live.insert(st.id);
        staging_refs(w, in_use, tags);
      }
    }
  }
  const std::vector<gcp::ObjectInfo> records = storage.list(bucket, kJobsPrefix).objects;
  std::map<std::string, double> last_write;
  std::set<std::string> with_verdict;
  for (const auto& o : records) {
    const std::string id = job_id_of_record(o.name);
    last_write[id] = std::max(last_write[id], parse_rfc3339(o.updated));
    if (o.name == results_prefix(id) + "status.json") with_verdict.insert(id);
  }
  for (const auto& [id, at] : last_write) {
    if (live.count(id)) continue;
    // Neither a workload nor a verdict, and written just now: another kinetic is submitting it
    // (its spec is up, its Job not yet). It and what its spec names stay.
    if (!with_verdict.count(id) && at > now - kSubmittingSeconds)
      live.insert(id);
    else
      finished[id] = std::max(finished[id], at);
  }
  std::vector<FinishedRecord> candidates;
  for (const auto& [id, at] : finished) candidates.push_back({id, at});
  const std::set<std::string> gone = records_to_remove(candidates, policy, now);

  for (const auto& [collection, w, st] : finished_workloads) {
    if (gone.count(st.id)) {
      items.push_back({"job", st.id, 0, st.state});
      if (!dry_run) k.remove(collection + "/" + w["metadata"].value("name", ""));
    } else {
      live.insert(st.id);
      staging_refs(w, in_use, tags);
    }
  }
  const bool pipelines_known = add_live_launches(live, in_use, tags);
  for (const auto& s : k.list(k8s::secrets_path(ns), managed_selector()).items) {
    const std::string id = s["metadata"].value("labels", json::object()).value(kJobLabel, "");
    if (live.count(id) || !pipelines_known) continue;
    items.push_back({"secret", s["metadata"].value("name", ""), 0, "its job is gone"});
    if (!dry_run) k.remove(k8s::secret_path(ns, s["metadata"].value("name", "")));
  }

  std::vector<std::string> doomed;  // deleted once all are known, many at once
  if (pipelines_known) {
    for (const auto& o : records) {
      const std::string id = job_id_of_record(o.name);
      if (!gone.count(id) || live.count(id)) continue;
      items.push_back({"staging", "gs://" + bucket + "/" + o.name, o.size, ""});
      doomed.push_back(o.name);
    }
    remove_unused_staging(cutoff, live, in_use, tags, items, doomed);
  }
  if (!dry_run) remove_objects(session_, bucket, doomed);
  return items;
}

// The steps of a detached pipeline still running are live before their workloads exist: the
// runner has yet to create them from their staged Secrets and specs. False when a running
// pipeline's plan cannot be read: then what its steps need is unknown, and every Secret and
// staging object stays.
bool GkeBackend::add_live_launches(std::set<std::string>& live, std::set<std::string>& in_use,
                                   std::set<std::string>& tags) {
  try {
    for (const auto& launch : GkePipelineRecords(session_, [this]() -> k8s::Client& {
                                return kube();
                              }).live_launches()) {
      live.insert(launch["job"].get<std::string>());
      staging_refs(json::parse(launch.value("manifest", nlohmann::ordered_json::object()).dump()),
                   in_use, tags);
    }
  } catch (const Error& e) {
    if (e.code() != Errc::api) throw;
    return false;
  }
  return true;
}

// Contexts (and --data archives) and image build sources unused since CUTOFF that no live job
// needs, into ITEMS and DOOMED.
void GkeBackend::remove_unused_staging(double cutoff, const std::set<std::string>& live,
                                       std::set<std::string>& in_use,
                                       const std::set<std::string>& tags,
                                       std::vector<CleanupItem>& items,
                                       std::vector<std::string>& doomed) {
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  // Their --data archives are staged under contexts/ too, named in their specs, not their
  // workloads: a retry or a preemption unpacks them again. So is the context of a job being
  // submitted, which has no workload yet. A spec that cannot be read leaves contexts/ alone.
  bool contexts_known = true;
  for (const auto& id : live) {
    try {
      if (auto spec = spec_for(id)) {
        if (!spec->context_uri.empty()) in_use.insert(spec->context_uri);
        for (const auto& m : spec->data)
          if (!m.staged_uri.empty()) in_use.insert(m.staged_uri);
      } else {
        contexts_known = false;
      }
    } catch (const Error&) {
      contexts_known = false;
    }
  }
  for (const char* prefix : {kContextsPrefix, kBuildsPrefix}) {
    if (!contexts_known && std::string(prefix) == kContextsPrefix) continue;
    for (const auto& o : storage.list(bucket, prefix).objects) {
      if (parse_rfc3339(o.updated) > cutoff) continue;
      // What a pending or running job needs: its context, and its image's build source.
      if (in_use.count("gs://" + bucket + "/" + o.name)) continue;
      if (std::string(prefix) == kBuildsPrefix && o.name.size() > 7 &&
          o.name.ends_with(".tar.gz") &&
          tags.count(o.name.substr(std::string(kBuildsPrefix).size(),
                                   o.name.size() - 7 - std::string(kBuildsPrefix).size())))
        continue;
      items.push_back({"staging", "gs://" + bucket + "/" + o.name, o.size, ""});
      doomed.push_back(o.name);
    }
  }
}

std::vector<CleanupItem> GkeBackend::remove_job(const std::string& id, bool dry_run) {
  const std::optional<JobStatus> st = get(id);
  if (!st) throw Error(Errc::not_found, "no job '" + id + "' in " + session_.target.ns);
  require_ended_for_removal(*st);
  k8s::Client& k = kube();
  const std::string ns = session_.target.ns;
  const std::string name = k8s_object_name(id);
  std::vector<CleanupItem> items;
  for (const std::string& path :
       {k8s::job_path(ns, name), k8s::jobset_path(ns, name), k8s::secret_path(ns, name)}) {
    // A 404 (gone already, or no JobSet API) is nothing to remove.
    if (!(dry_run ? k.get(path).has_value() : k.remove(path))) continue;
    items.push_back(
        {path.find("/secrets/") != std::string::npos ? "secret" : "job", name, 0, st->state});
  }
  const bool server = is_server_status(*st) || [&] {
    const std::optional<JobSpec> spec = spec_for(id);
    return spec && spec->serve;
  }();
  if (server)
    for (const std::string& path : delete_server_objects(id, dry_run))
      items.push_back({path.find("/services/") != std::string::npos ? "service" : "deployment",
                       name, 0, st->state});
  if (server && !dry_run) wait_for_server_pods_gone(id);
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  std::vector<std::string> doomed;
  for (const auto& o : storage.list(bucket, job_prefix(id)).objects) {
    items.push_back({"record", "gs://" + bucket + "/" + o.name, o.size, ""});
    doomed.push_back(o.name);
  }
  if (!dry_run) remove_objects(session_, bucket, doomed);
  return items;
}

}  // namespace kinetic::gke
