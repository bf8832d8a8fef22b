// The gke backend's logs (docs/run-record.md): a running job's followed from its pods, attempt
// after attempt (a slice's other hosts beside host 0 with --all-hosts), a finished one's read
// from its record in the bucket.
#include <algorithm>
#include <atomic>
#include <thread>

#include "backend/gke/cluster_access.h"
#include "backend/gke/follower_heartbeat.h"
#include "backend/gke/gke_backend.h"
#include "backend/gke/job_state.h"
#include "backend/gke/job_watch.h"
#include "backend/gke/kueue.h"
#include "backend/gke/names.h"
#include "backend/gke/slice_host.h"
#include "backend/prefixed_log_sink.h"
#include "backend/tail_sink.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "gcp/storage.h"
#include "job/catalog.h"
#include "k8s/timestamp.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

// Notes when the first byte of the job's own output arrives (a cold start's last step).
class FirstLineClock : public LogSink {
 public:
  explicit FirstLineClock(LogSink& inner) : inner_(inner) {}
  void write(LogStream stream, std::string_view data) override {
    if (stream != LogStream::system && !at_) at_ = now_unix();
    inner_.write(stream, data);
  }
  std::optional<double> at() const { return at_; }

 private:
  LogSink& inner_;
  std::optional<double> at_;
};

// "node after 41s, image after 1m02s, first log line after 1m05s": a cold start's steps from
// the submit, read from the pod (PodScheduled, the container's start) and the first output.
std::string cold_start_line(const json& pod, double submitted, std::optional<double> first_line) {
  auto since = [&](double t) { return format_duration(std::max(0.0, t - submitted)); };
  std::string node, image;
  for (const auto& c : pod["status"].value("conditions", json::array()))
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "True")
      node = since(parse_rfc3339(c.value("lastTransitionTime", "")));
  for (const auto& cs : pod["status"].value("containerStatuses", json::array())) {
    const json state = cs.value("state", json::object());
    for (const char* s : {"running", "terminated"})
      if (state.contains(s) && state[s].contains("startedAt"))
        image = since(parse_rfc3339(state[s].value("startedAt", "")));
  }
  return "cold start: node after " + (node.empty() ? "?" : node) +
         ", image pulled and started after " + (image.empty() ? "?" : image) +
         ", first log line after " + (first_line ? since(*first_line) : "? (no output)") +
         " (from the submit)";
}

// While host 0's log streams (run --all-hosts, logs -f --all-hosts), the slice's other hosts of
// the same attempt (the pods of the same child Job; a multislice run's, of every slice's child
// Job of the same JobSet restart) are followed, each from a thread of its own with its own
// connection, into its own prefixed sink. The destructor waits for them: their pods end with
// the slice.
class SliceFollowers {
 public:
  SliceFollowers(const Session& session, const WatchOptions& lead, k8s::Client& lead_client,
                 const std::string& lead_pod, int hosts, PrefixedLogSink* sinks, int per_slice,
                 int slices)
      : session_(session),
        ns_(lead.ns),
        spec_sha256_(lead.spec_sha256),
        since_(lead.since),
        sinks_(sinks),
        per_slice_(per_slice),
        slices_(slices) {
    if (sinks == nullptr || hosts < 2) return;
    auto pod = lead_client.get(k8s::pod_path(ns_, lead_pod));
    if (!pod) return;
    const json labels = (*pod)["metadata"].value("labels", json::object());
    job_uid_ = labels.value("batch.kubernetes.io/controller-uid", "");
    job_name_ = labels.value("batch.kubernetes.io/job-name", labels.value("job-name", ""));
    jobset_ = labels.value("jobset.sigs.k8s.io/jobset-name", "");
    replicated_job_ = labels.value("jobset.sigs.k8s.io/replicatedjob-name", "");
    restart_ = labels.value("jobset.sigs.k8s.io/restart-attempt", "0");
    if (job_uid_.empty() || job_name_.empty()) return;
    if (slices > 1 && jobset_.empty()) return;
    for (int host = 1; host < hosts; ++host) threads_.emplace_back([this, host] { follow(host); });
  }
  ~SliceFollowers() {
    lead_done_ = true;
    for (auto& t : threads_) t.join();
  }
  SliceFollowers(const SliceFollowers&) = delete;
  SliceFollowers& operator=(const SliceFollowers&) = delete;

 private:
  // The pods of HOST (numbered across slices) in this attempt, and the child Job they belong to.
  std::pair<std::string, std::string> selector_and_job(int host) const {
    if (slices_ <= 1)
      return {"batch.kubernetes.io/controller-uid=" + job_uid_ +
                  ",batch.kubernetes.io/job-completion-index=" + std::to_string(host),
              job_name_};
    const std::string slice = std::to_string(host / per_slice_);
    return {"jobset.sigs.k8s.io/jobset-name=" + jobset_ + ",jobset.sigs.k8s.io/restart-attempt=" +
                restart_ + ",jobset.sigs.k8s.io/job-index=" + slice +
                ",batch.kubernetes.io/job-completion-index=" + std::to_string(host % per_slice_),
            jobset_ + "-" + replicated_job_ + "-" + slice};
  }

  void follow(int host) {
    LogSink& sink = sinks_->host(host, per_slice_, slices_);
    try {
      KubeConnection conn = connect_kube(session_, cluster_access(session_));
      k8s::Client& client = *conn.client;
      const auto [selector, job_name] = selector_and_job(host);
      WatchOptions o;
      o.ns = ns_;
      o.spec_sha256 = spec_sha256_;
      o.since = since_;  // `logs -f --all-hosts --since`: every host from that time
      for (;;) {
        k8s::ObjectList pods = client.list(k8s::pods_path(ns_), selector);
        std::optional<json> newest;
        for (const auto& p : pods.items)
          if (!newest || p["metadata"].value("creationTimestamp", "") >=
                             (*newest)["metadata"].value("creationTimestamp", ""))
            newest = p;
        if (newest && (*newest)["status"].value("phase", "Pending") != "Pending") {
          stream_pod_log(client, o, (*newest)["metadata"].value("name", ""), sink);
          return;
        }
        // Host 0 may end first; this host's pod still runs while the slice's Job does.
        if (lead_done_) {
          auto job = client.get(k8s::job_path(ns_, job_name));
          if (!job || workload_finished(*job)) return;
        }
        // Until a pod of this host changes, or two seconds pass.
        client.watch(k8s::pods_path(ns_), selector, pods.resource_version, 2,
                     [](const k8s::WatchEvent&) { return false; });
      }
    } catch (const std::exception& e) {
      sink.write(LogStream::system,
                 std::string("cannot follow this host's log: ") + e.what() + "\n");
    }
  }

  const Session& session_;
  const std::string ns_;
  const std::string spec_sha256_;
  const std::optional<int64_t> since_;
  PrefixedLogSink* sinks_;
  const int per_slice_, slices_;
  std::string job_uid_, job_name_;  // the slice's Job of this attempt
  // A multislice run's JobSet, its replicated Job and the restart the lead pod belongs to.
  std::string jobset_, replicated_job_, restart_;
  std::atomic<bool> lead_done_{false};
  std::vector<std::thread> threads_;
};

// What one attempt came to, once its pod POD (the NUMBER-th followed) ended as ENDED said.
AttemptRecord attempt_of(k8s::Client& k, const std::string& ns, const std::string& pod, int number,
                         const PodLogEnd& ended) {
  AttemptRecord a;
  a.attempt = number;
  a.pod = pod;
  if (!ended.pod && ended.held) {
    // The run failed for good and the pod is held for `exec`: nothing follows it.
    a.state = "failed";
    a.exit_code = ended.reported_exit;
    a.error = "exited " + std::to_string(*a.exit_code);
    return a;
  }
  if (!ended.pod && ended.reported_exit == 0) {
    // The bootstrap said the job succeeded, after its uploads: the pod need not be read, and
    // collect checks status.json. (A failure is read from the pod: a preemption shows only
    // there.)
    a.state = "succeeded";
    a.exit_code = 0;
    return a;
  }
  a = observe_attempt(k, ns, pod, number, ended.pod);
  if (!a.exit_code && a.state == "failed" && ended.reported_exit) {
    a.exit_code = ended.reported_exit;  // the pod was slow to say it
    a.error = "exited " + std::to_string(*a.exit_code);
  }
  return a;
}

// The last of SEEN, when it did not succeed and Kueue evicted its Job or JobSet once more than
// the attempts before it tell (kueue.h: an eviction for a higher-priority job): its pod was
// stopped, not failed, and the job waits in its queue to be admitted again. Counted from the
// evictions, not from the job's state now: it may be admitted again before this is asked.
void note_eviction(k8s::Client& k, const std::string& ns, const std::string& id,
                   std::vector<AttemptRecord>& seen) {
  AttemptRecord& attempt = seen.back();
  if (attempt.state == "succeeded") return;
  int noted = 0;
  for (const auto& a : seen) noted += a.error == kEvictedError ? 1 : 0;
  for (const auto& collection : {k8s::jobs_path(ns), k8s::jobsets_path(ns)})
    for (const auto& w : list_or_empty(k, collection, job_selector(id))) {
      if (w["metadata"].contains("ownerReferences")) continue;
      // Only a queued job can be evicted: any other costs no request more.
      if (!w["metadata"].value("labels", json::object()).contains(kQueueNameLabel)) return;
      if (preemption_evictions(k, ns, w) <= noted) return;
      attempt.preempted = true;
      attempt.state = "preempted";
      attempt.error = std::string(kEvictedError);
      return;
    }
}

}  // namespace

LogSink& GkeBackend::HostSinks::host(int h) const {
  return by_host ? by_host->host(h, per_slice, slices) : all;
}

WatchOptions GkeBackend::watch_options(const std::string& id, const Interrupt* interrupt) {
  WatchOptions o;
  o.ns = session_.target.ns;
  o.job_id = id;
  o.io = session_.io;
  o.interrupt = interrupt;
  o.scheduling_grace_seconds =
      seconds_from_env(*session_.env, "KINETIC_SCHEDULING_GRACE_SECONDS", 90);
  o.failed_create_grace_seconds =
      seconds_from_env(*session_.env, "KINETIC_FAILED_CREATE_GRACE_SECONDS", 30);
  if (auto sha = spec_sha256_.find(id); sha != spec_sha256_.end()) o.spec_sha256 = sha->second;
  return o;
}

void GkeBackend::stream_logs(const std::string& id, const LogRequest& request, LogSink& sink,
                             const Interrupt* interrupt) {
  // The spec says how many hosts there are and what following needs: `logs JOB` of one host
  // does without it (a round trip less before the first line).
  const std::optional<JobSpec> spec =
      request.all_hosts || request.follow ? spec_for(id) : std::nullopt;
  // A multislice run's hosts are numbered across its slices (slice_host.h).
  const int per_slice = spec ? resolve_accelerator(spec->accelerator).hosts : 1;
  const int slices = spec ? spec->slices : 1;
  const int hosts = request.all_hosts && spec ? per_slice * slices : 1;
  // With --all-hosts every line carries its host, host 0's included; the last lines are those
  // of all the hosts' output as printed.
  if (hosts > 1 && request.tail >= 0) {
    LogRequest whole = request;
    whole.tail = -1;
    tail_then_follow(static_cast<size_t>(request.tail), sink, [&](LogSink& so_far) {
      whole.follow = false;
      stream_logs(id, whole, so_far, interrupt);
    }, request.follow ? [&](LogSink& after) {
      whole.follow = true;
      stream_logs(id, whole, after, interrupt);
    } : std::function<void(LogSink&)>());
    return;
  }
  std::optional<PrefixedLogSink> by_host;
  if (hosts > 1) by_host.emplace(sink);
  const HostSinks sinks{sink, by_host ? &*by_host : nullptr, per_slice, slices};
  WatchOptions o = watch_options(id, interrupt);
  o.since = request.since;
  if (!request.follow) {
    print_log(id, hosts, sinks, o, request.tail);
    return;
  }
  // Following a job that already finished and was cleaned up: its record is all there is. (One
  // this process just submitted is there.)
  k8s::Client& k = kube();
  if (!submitted_at_.count(id) &&
      list_or_empty(k, k8s::jobs_path(o.ns), job_selector(id)).empty() &&
      list_or_empty(k, k8s::jobsets_path(o.ns), job_selector(id)).empty()) {
    print_recorded_hosts(id, hosts, sinks, request.tail, request.since);
    return;
  }
  if (request.tail < 0) {
    follow_attempts(id, spec, hosts, sinks, o);
    return;
  }
  // A live job: the last lines of its log so far (its pods', or its record once it reported),
  // then its pods' logs after them.
  tail_then_follow(
      static_cast<size_t>(request.tail), sink,
      [&](LogSink& so_far) {
        print_log(id, hosts, {so_far, nullptr, per_slice, slices}, o);
      },
      [&](LogSink& after) {
        follow_attempts(id, spec, hosts, {after, nullptr, per_slice, slices}, o);
      });
}

// A finished job's log is its record in the bucket (every attempt, whether or not its pods
// still exist); a running one's, its pods' (oldest attempt first).
void GkeBackend::print_log(const std::string& id, int hosts, const HostSinks& sinks,
                           const WatchOptions& o, long tail) {
  if (results_status(id) && print_recorded_log(id, sinks.host(0), 0, tail, o.since)) {
    for (int host = 1; host < hosts; ++host)
      print_recorded_log(id, sinks.host(host), host, tail, o.since);
    return;
  }
  if (tail >= 0) {
    // The pods' logs (as long as the kubelet keeps them), their last lines shown. (One host:
    // stream_logs tails --all-hosts itself.)
    // Each pod's last lines come from the kubelet (kubectl's --tail): two more for the
    // bootstrap's end-of-log lines, which are not shown.
    TailSink last(static_cast<size_t>(tail));
    print_pods_log(id, hosts, {last, nullptr, sinks.per_slice, sinks.slices}, o, tail + 2);
    last.replay(sinks.all);
    return;
  }
  print_pods_log(id, hosts, sinks, o);
}

void GkeBackend::print_pods_log(const std::string& id, int hosts, const HostSinks& sinks,
                                const WatchOptions& o, std::optional<long> tail_lines) {
  k8s::Client& k = kube();
  auto pods = k.list(k8s::pods_path(o.ns), job_selector(id)).items;
  std::sort(pods.begin(), pods.end(), [](const json& a, const json& b) {
    return a["metadata"].value("creationTimestamp", "") <
           b["metadata"].value("creationTimestamp", "");
  });
  if (pods.empty()) {
    print_recorded_hosts(id, hosts, sinks, tail_lines.value_or(-1), o.since);
    return;
  }
  int attempt = 0;
  for (const auto& pod : pods) {
    const int host = pod_host(pod, sinks.per_slice);
    if (host >= hosts) continue;  // another host's: only with --all-hosts
    if (host == 0 && pods.size() > 1)
      sinks.all.write(LogStream::system, "attempt " + std::to_string(++attempt) + "\n");
    print_pod_log(k, o.ns, pod["metadata"].value("name", ""), sinks.host(host), o.spec_sha256,
                  tail_lines, o.since);
  }
}

void GkeBackend::print_recorded_hosts(const std::string& id, int hosts, const HostSinks& sinks,
                                      long tail, std::optional<int64_t> since) {
  print_recorded_log(id, sinks.host(0), 0, tail, since);
  for (int host = 1; host < hosts; ++host)
    print_recorded_log(id, sinks.host(host), host, tail, since);
}

// Every attempt in turn: a retry after a failure, a restart after a preemption. Each new one is
// announced by one line before its wait for a node and its log.
void GkeBackend::follow_attempts(const std::string& id, const std::optional<JobSpec>& spec,
                                 int hosts, const HostSinks& sinks, WatchOptions& o) {
  k8s::Client& k = kube();
  std::vector<AttemptRecord>& seen = attempts_[id];
  seen.clear();
  const bool single_host = spec && resolve_accelerator(spec->accelerator).hosts == 1;
  const int retries = spec ? spec->retries : 0;
  // A foreground run is followed: the pod stops it once nobody refreshes the follower object.
  std::optional<FollowerHeartbeat> heartbeat;
  if (spec && spec->follower_timeout_seconds > 0)
    heartbeat.emplace(session_, id, heartbeat_interval(spec->follower_timeout_seconds));
  o.on_new_pod = [&](const std::string&) {
    if (seen.empty()) return;
    int preempted = 0;
    for (const auto& a : seen) preempted += a.preempted ? 1 : 0;
    const int next = static_cast<int>(seen.size()) + 1;
    sinks.all.write(
        LogStream::system,
        attempt_line(seen.back(), next, retries + 1 + preempted, has_checkpoint(id)) + "\n");
  };
  for (;;) {
    std::optional<std::string> pod;
    try {
      pod = wait_for_lead_pod(k, o);
    } catch (const Error& e) {
      if (e.code() == Errc::job_start) delete_runtime_objects(id);
      throw;
    }
    if (!pod) return;
    FirstLineClock clock(sinks.host(0));
    PodLogEnd ended;
    {
      InterruptWatcher watcher(o.interrupt);
      SliceFollowers others(session_, o, k, *pod, hosts, sinks.by_host, sinks.per_slice,
                            sinks.slices);
      // The log streams on a connection of its own: ended early (at the bootstrap's end-of-log
      // lines), it drops that connection, not the one the next requests reuse.
      KubeConnection stream = connect_kube(session_, cluster_access(session_));
      ended = stream_pod_log(*stream.client, o, *pod, clock);
    }
    // -v 2: where the first attempt's start went (docs/multihost.md, bench/cold_start.sh).
    if (seen.empty() && session_.verbosity >= 2 && submitted_at_.count(id))
      if (auto p = ended.pod ? ended.pod : k.get(k8s::pod_path(o.ns, *pod)))
        session_.io->info("kinetic: " + cold_start_line(*p, submitted_at_[id], clock.at()));
    o.skip_pods.insert(*pod);
    seen.push_back(attempt_of(k, o.ns, *pod, static_cast<int>(seen.size()) + 1, ended));
    note_eviction(k, o.ns, id, seen);
    if (!ended.pod && ended.held) return;
    // A server's pods end and are remade by its Deployment; one that ends with a verdict
    // (--idle-stop) is the last: its restarted container only waits to be deleted.
    if (spec && spec->serve)
      if (auto reported = results_status(id); reported && reported->final) return;
    // A single-host Job whose pod succeeded is complete: no other attempt can follow, so the
    // job's pods and Job need not be listed again (issue #14). A slice's other hosts decide its
    // fate too, and a failed pod may be retried: those ask the cluster.
    if (single_host && seen.back().state == "succeeded") return;
  }
}

RecordedLog GkeBackend::recorded_log(const std::string& id, int host) {
  RecordedLogOptions options;
  options.make_transport = session_.new_cloud;
  if (options.make_transport) options.endpoint = session_.endpoint("storage");
  return RecordedLog(session_.storage(), session_.bucket(),
                     host_results_prefix(id, host) + "attempts/", options);
}

bool GkeBackend::print_recorded_log(const std::string& id, LogSink& sink, int host, long tail,
                                    std::optional<int64_t> since) {
  RecordedLog log = recorded_log(id, host);
  return tail >= 0 ? log.print_tail(sink, static_cast<size_t>(tail)) : log.print(sink, since);
}

std::string GkeBackend::host_log_tail(const std::string& id, int host, int lines) {
  // The latest attempt's last lines (a few more, for trailing blank ones), read from its end.
  struct Text : LogSink {
    std::string text;
    void write(LogStream, std::string_view data) override { text.append(data); }
  } text;
  recorded_log(id, host).print_tail(text, static_cast<size_t>(lines) + 16, true);
  std::vector<std::string> all = split(text.text, '\n');
  while (!all.empty() && all.back().empty()) all.pop_back();
  std::string tail;
  for (size_t i = all.size() > static_cast<size_t>(lines) ? all.size() - lines : 0; i < all.size();
       ++i)
    tail += all[i] + "\n";
  return tail;
}

}  // namespace kinetic::gke
