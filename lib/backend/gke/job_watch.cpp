#include "backend/gke/job_watch.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "backend/gke/job_state.h"
#include "backend/gke/kueue.h"
#include "backend/gke/log_end.h"
#include "backend/gke/names.h"
#include "backend/gke/pending_reason.h"
#include "core/backoff.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/spec.h"
#include "k8s/log_follower.h"
#include "k8s/timestamp.h"
#include "render/status_line.h"

namespace kinetic::gke {

using json = nlohmann::json;

namespace {

// The pod whose log is the job's: completion index 0 of the newest attempt not yet followed.
std::optional<json> lead_pod(const std::vector<json>& pods, const std::set<std::string>& skip) {
  std::optional<json> best;
  for (const auto& p : pods) {
    const json meta = p.value("metadata", json::object());
    if (skip.count(meta.value("name", ""))) continue;
    const json labels = meta.value("labels", json::object());
    std::string index = labels.value("batch.kubernetes.io/job-completion-index", "0");
    // A multislice run's lead is host 0 of slice 0 (every slice has a host 0).
    if (index != "0" || labels.value("jobset.sigs.k8s.io/job-index", "0") != "0") continue;
    if (!best ||
        meta.value("creationTimestamp", "") >= (*best)["metadata"].value("creationTimestamp", ""))
      best = p;
  }
  return best;
}

// Whether Ctrl-C (or SIGTERM) arrived; drains the signal pipe so it reports each press once.
// How long a pod may stay unschedulable without any word from the cluster autoscaler.
constexpr double kAutoscalerSilenceSeconds = 120;

bool take_interrupt(const Interrupt* interrupt, int timeout_ms = 0) {
  if (interrupt == nullptr || interrupt->fd < 0) return false;
  pollfd p{interrupt->fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;
  char drain[64];
  while (::read(interrupt->fd, drain, sizeof drain) > 0) {
  }
  return true;
}

// The Job controller's FailedCreate warnings on JOB (a ResourceQuota or an admission webhook
// refused its pods): how many times it failed, and the latest message without "Error creating: ".
struct FailedCreates {
  long count = 0;
  std::string message;
};

FailedCreates failed_creates(k8s::Client& client, const std::string& ns, const json& job) {
  FailedCreates out;
  const std::string name = job["metadata"].value("name", "");
  std::string latest;
  for (const auto& e :
       client.list(k8s::events_path(ns), {}, "involvedObject.kind=Job,involvedObject.name=" + name)
           .items) {
    if (e.value("reason", "") != "FailedCreate" || e.value("type", "") != "Warning") continue;
    out.count += std::max<long>(1, e.value("count", 1L));
    const std::string at = e.value("lastTimestamp", "");
    if (out.message.empty() || at >= latest) {
      latest = at;
      out.message = e.value("message", "");
    }
  }
  const std::string prefix = "Error creating: ";
  if (out.message.rfind(prefix, 0) == 0) out.message.erase(0, prefix.size());
  std::replace(out.message.begin(), out.message.end(), '\n', ' ');
  return out;
}

}  // namespace

void write_log_line(LogSink& sink, std::string_view line) {
  constexpr std::string_view kOwn = "kinetic: ";
  if (line.substr(0, kOwn.size()) == kOwn) {
    sink.write(LogStream::system, line.substr(kOwn.size()));
  } else {
    sink.write(LogStream::out, line);
  }
}

std::vector<json> list_or_empty(k8s::Client& client, const std::string& collection,
                                const std::string& selector) {
  try {
    return client.list(collection, selector).items;
  } catch (const k8s::ApiError& e) {
    if (e.code() == 404) return {};
    throw;
  }
}

namespace {

// One wait for a job's lead pod to leave Pending: the status line it keeps, and since when each
// kind of trouble has lasted (a trouble is fatal only once it outlasts its grace).
class LeadPodWait {
 public:
  LeadPodWait(k8s::Client& client, const WatchOptions& o)
      : client_(client),
        o_(o),
        line_(*o.io),
        selector_(job_selector(o.job_id)),
        start_(now_unix()) {}

  std::optional<std::string> run() {
    for (;;) {
      if (take_interrupt(o_.interrupt)) {
        o_.interrupt->on_interrupt();
        interrupted_ = true;
      }
      k8s::ObjectList pods = client_.list(k8s::pods_path(o_.ns), selector_);
      std::optional<json> pod = lead_pod(pods.items, o_.skip_pods);
      // A pending pod being deleted (the Job failed, say past its deadline) will never run.
      if (pod && (*pod)["metadata"].contains("deletionTimestamp") &&
          (*pod)["status"].value("phase", "Pending") == "Pending")
        pod.reset();
      if (!pod) {
        if (!a_pod_may_come()) return std::nullopt;
      } else {
        const std::string name = (*pod)["metadata"].value("name", "");
        if (o_.on_new_pod && announced_.insert(name).second) {
          line_.clear();
          o_.on_new_pod(name);
        }
        if ((*pod)["status"].value("phase", "Pending") != "Pending") return name;
        if (interrupted_) return std::nullopt;
        show_why_pending(*pod, name);
      }
      block_until_a_pod_changes(pods.resource_version);
    }
  }

 private:
  // Since when a trouble has lasted: set when first seen, cleared when it goes. Returns how long.
  static double lasted(double& since, bool seen) {
    if (!seen) since = -1;
    if (seen && since < 0) since = now_unix();
    return seen ? now_unix() - since : 0;
  }

  // No pod to follow: the Job controller has not made one, the job finished without another
  // attempt, or the job is gone. False when no pod will come.
  bool a_pod_may_come() {
    bool exists = false;
    std::optional<json> job;
    for (const auto& w : client_.list(k8s::jobs_path(o_.ns), selector_).items) {
      if (w["metadata"].contains("deletionTimestamp")) continue;
      exists = true;
      if (!job) job = w;
    }
    if (!exists && list_or_empty(client_, k8s::jobsets_path(o_.ns), selector_).empty())
      return false;
    if (interrupted_) return false;
    // The workload ended with no pod to follow (DeadlineExceeded while pending): its verdict is
    // the caller's to read. A JobSet's child Job may end and be replaced by a restart: the
    // JobSet speaks for it.
    if (!job || workload_finished(*job)) {
      if (job && !(*job)["metadata"].contains("ownerReferences")) return false;
      for (const auto& js : list_or_empty(client_, k8s::jobsets_path(o_.ns), selector_))
        if (workload_finished(js)) return false;
    }
    if (show_queued(job)) return true;
    if (job) {
      show_refused_creates(*job);
    } else {
      line_.update("waiting for the job's pod to be created");
    }
    return true;
  }

  // Kueue holds the job, suspended, until its queue has room for all of it (kueue.h): says where
  // it stands in line. False when it is not waiting in a queue.
  bool show_queued(const std::optional<json>& job) {
    std::optional<json> top;
    if (job && !(*job)["metadata"].contains("ownerReferences")) top = job;
    if (!top)  // a slice: its JobSet is what Kueue holds
      for (const auto& js : list_or_empty(client_, k8s::jobsets_path(o_.ns), selector_)) top = js;
    const std::string queue = top ? waiting_queue(*top) : "";
    if (queue.empty()) return false;
    const std::string name = (*top)["metadata"].value("name", "");
    line_.update(queued_text(queue, queue_positions(client_, o_.ns, queue)[name],
                             requeued_after_preemption(client_, o_.ns, *top)));
    return true;
  }

  // Pods refused at creation (quota, admission webhook): fatal once the controller's retry
  // failed too and the refusal has lasted the grace.
  void show_refused_creates(const json& job) {
    FailedCreates refused = failed_creates(client_, o_.ns, job);
    const double refused_for = lasted(failed_create_since_, refused.count > 0);
    if (refused.count >= 2 && refused_for >= o_.failed_create_grace_seconds)
      throw Error(Errc::job_start,
                  "the cluster refused to create the job's pod: " + refused.message +
                      "; raise the quota or fix the admission policy, "
                      "then run again");
    if (refused.count > 0) {
      line_.update("the cluster refuses to create the job's pod, retrying: " + refused.message);
    } else {
      line_.update("waiting for the job's pod to be created");
    }
  }

  // Says why the pending pod NAME waits; throws once that cannot end well.
  void show_why_pending(const json& pod, const std::string& name) {
    auto events = client_
                      .list(k8s::events_path(o_.ns), {},
                            "involvedObject.kind=Pod,involvedObject.name=" + name)
                      .items;
    PendingReason why = pending_reason(pod, events);
    if (why.fatal) throw Error(Errc::job_start, why.message);
    // Only the autoscaler's own verdict (NotTriggerScaleUp) says no pool can ever fit; a pod the
    // scheduler just turned down may still get a scale-up a moment later.
    bool confirmed = false;
    for (const auto& e : events)
      confirmed = confirmed || e.value("reason", "") == "NotTriggerScaleUp";
    const bool no_pool = why.kind == PendingKind::no_pool;
    const double limit = confirmed
                             ? o_.scheduling_grace_seconds
                             : std::max(o_.scheduling_grace_seconds, kAutoscalerSilenceSeconds);
    if (lasted(unschedulable_since_, no_pool) >= limit && no_pool)
      throw Error(Errc::job_start, why.message);
    if (no_pool && !confirmed)
      why.message = "waiting for the cluster autoscaler to find a node pool";
    // A mount that fails may work a moment later (a bucket grant takes a while to reach Cloud
    // Storage): as long as the scheduling grace, then the job cannot start.
    const bool mount_failed = why.kind == PendingKind::mount_failed;
    if (lasted(mount_failing_since_, mount_failed) >= o_.scheduling_grace_seconds && mount_failed)
      throw Error(Errc::job_start, why.message);
    if (why.kind == PendingKind::queued) {
      line_.update(why.message + ": queued " + queued_for(pod), false);
    } else if (!why.message.empty()) {
      const long waited = static_cast<long>(now_unix() - start_);
      line_.update_ticking(why.message, " (" + std::to_string(waited) + "s)");
    }
  }

  // How long the pod has waited for capacity, from its creation (this process may have started
  // following it later), in whole minutes ("<1m", then "4m"): a wait of hours changes the line,
  // which a log without a terminal keeps, once a minute.
  std::string queued_for(const json& pod) const {
    double since = start_;
    if (auto created =
            k8s::parse_timestamp(pod["metadata"].value("creationTimestamp", std::string())))
      since = std::min(since, static_cast<double>(created->seconds));
    const long waited = std::max(0L, static_cast<long>(now_unix() - since));
    return waited < 60 ? std::string("<1m") : std::to_string(waited / 60) + "m";
  }

  // Blocks until a pod of the job changes, or a few seconds pass (events do not touch pods).
  void block_until_a_pod_changes(const std::string& resource_version) {
    try {
      client_.watch(k8s::pods_path(o_.ns), selector_, resource_version, 2,
                    [](const k8s::WatchEvent& e) { return e.type == "BOOKMARK"; });
    } catch (const k8s::ApiError& e) {
      if (e.code() != 410) throw;  // expired: the next list starts afresh
    }
  }

  k8s::Client& client_;
  const WatchOptions& o_;
  StatusLine line_;
  const std::string selector_;
  const double start_;
  double unschedulable_since_ = -1;  // when the pod was first seen with no pool
  double failed_create_since_ = -1;  // when pod creation was first seen refused
  double mount_failing_since_ = -1;  // when a volume was first seen failing to mount
  bool interrupted_ = false;
  std::set<std::string> announced_;
};

}  // namespace

std::optional<std::string> wait_for_lead_pod(k8s::Client& client, const WatchOptions& o) {
  return LeadPodWait(client, o).run();
}

void print_pod_log(k8s::Client& client, const std::string& ns, const std::string& pod,
                   LogSink& sink, const std::string& spec_sha256, std::optional<long> tail_lines,
                   std::optional<int64_t> since) {
  k8s::LogOptions lo;
  lo.container = "main";
  lo.tail_lines = tail_lines;
  if (since) lo.since_time = rfc3339(static_cast<double>(*since));
  LogEnd end(spec_sha256);
  auto write = [&](std::string_view line) {
    if (!end.take(line)) write_log_line(sink, line);
  };
  std::string partial;
  try {
    client.logs(ns, pod, lo, [&](std::string_view chunk) {
      partial.append(chunk);
      size_t start = 0;
      for (size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1)
        write(std::string_view(partial).substr(start, nl - start + 1));
      partial.erase(0, start);
      return true;
    });
  } catch (const k8s::ApiError& e) {
    if (e.code() != 400) throw;  // a container that has not started has no log yet
  }
  if (!partial.empty()) write(partial + "\n");
}

PodLogEnd stream_pod_log(k8s::Client& client, const WatchOptions& o, const std::string& pod,
                         LogSink& sink) {
  std::optional<json> last;
  LogEnd end(o.spec_sha256);
  constexpr BackoffCurve kReopen{std::chrono::milliseconds(200), std::chrono::milliseconds(1600),
                                 2.0};
  k8s::FollowOptions follow;
  follow.container = "main";
  if (o.since) follow.since_time = rfc3339(static_cast<double>(*o.since));
  follow.wait = [&](int attempt) {
    std::this_thread::sleep_for(kReopen.delay(attempt));
    return client.get(k8s::pod_path(o.ns, pod)).has_value();
  };
  auto ended = [](const std::optional<json>& p) {
    const std::string phase = p ? (*p)["status"].value("phase", "") : "";
    return phase == "Succeeded" || phase == "Failed";
  };
  follow.finished = [&] {
    last = client.get(k8s::pod_path(o.ns, pod));
    return !last || ended(last);
  };
  follow.complete = [&] { return end.complete(); };
  k8s::follow_pod_log(client, o.ns, pod, follow, [&](std::string_view text) {
    if (!end.take(text)) write_log_line(sink, text);
  });
  PodLogEnd out;
  out.reported_exit = end.exit_code();
  out.held = end.held();
  // A failure is read from the pod once it has ended (its container exits right after the end
  // lines): a preemption shows only there. Success needs no more than the bootstrap's word.
  constexpr int kEndReads = 20;  // about 30 s
  // A held pod runs on (--hold-on-failure): its failure is final, and no preemption can follow.
  for (int read = 1;
       out.reported_exit.value_or(0) != 0 && !out.held && !ended(last) && read <= kEndReads;
       ++read) {
    if (read > 1) std::this_thread::sleep_for(kReopen.delay(read - 1));
    last = client.get(k8s::pod_path(o.ns, pod));
    if (!last) break;
  }
  // Only an ended pod says how the attempt ended; anything else is read again by the caller.
  if (ended(last)) out.pod = last;
  return out;
}

AttemptRecord observe_attempt(k8s::Client& client, const std::string& ns, const std::string& pod,
                              int attempt, const std::optional<json>& ended) {
  AttemptRecord a;
  a.attempt = attempt;
  a.pod = pod;
  std::optional<json> p = ended ? ended : client.get(k8s::pod_path(ns, pod));
  if (!p) {
    // Pods of a live Job are removed only with their node (pod garbage collection).
    a.state = "preempted";
    a.preempted = true;
    a.error = "its node went away";
    return a;
  }
  const json status = p->value("status", json::object());
  for (const auto& c : status.value("conditions", json::array()))
    if (c.value("type", "") == "DisruptionTarget" && c.value("status", "") == "True")
      a.preempted = true;
  for (const auto& cs : status.value("containerStatuses", json::array())) {
    if (cs.value("name", "") != "main") continue;
    const json term = cs.value("state", json::object()).value("terminated", json::object());
    if (term.contains("exitCode")) a.exit_code = term["exitCode"].get<int>();
    a.started = term.value("startedAt", "");
    a.finished = term.value("finishedAt", "");
  }
  const std::string phase = status.value("phase", "");
  a.state = a.preempted ? "preempted" : phase == "Succeeded" ? "succeeded" : "failed";
  if (a.preempted)
    a.error = status.value("message", "node reclaimed");
  else if (a.exit_code && *a.exit_code != 0)
    a.error = "exited " + std::to_string(*a.exit_code);
  return a;
}

std::optional<json> wait_for_workload(k8s::Client& client, const std::string& ns,
                                      const std::string& job_id, bool jobset,
                                      double timeout_seconds) {
  const std::string collection = jobset ? k8s::jobsets_path(ns) : k8s::jobs_path(ns);
  const std::string selector = job_selector(job_id);
  const double start = now_unix();
  for (;;) {
    k8s::ObjectList list = client.list(collection, selector);
    if (list.items.empty()) return std::nullopt;
    if (workload_finished(list.items.front()) || now_unix() - start > timeout_seconds)
      return list.items.front();
    std::optional<json> finished;
    try {
      client.watch(collection, selector, list.resource_version, 5, [&](const k8s::WatchEvent& e) {
        if (e.type == "DELETED") return false;
        if (e.type != "BOOKMARK" && workload_finished(e.object)) {
          finished = e.object;
          return false;
        }
        return true;
      });
    } catch (const k8s::ApiError& e) {
      if (e.code() != 410) throw;
    }
    if (finished) return finished;
  }
}

struct InterruptWatcher::State {
  int stop[2] = {-1, -1};
  std::thread thread;
};

InterruptWatcher::InterruptWatcher(const Interrupt* interrupt) : state_(std::make_unique<State>()) {
  if (interrupt == nullptr || interrupt->fd < 0 || ::pipe(state_->stop) != 0) return;
  state_->thread = std::thread([interrupt, stop = state_->stop[0]] {
    for (;;) {
      pollfd fds[2] = {{interrupt->fd, POLLIN, 0}, {stop, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents != 0) return;
      if (fds[0].revents != 0 && take_interrupt(interrupt)) interrupt->on_interrupt();
    }
  });
}

InterruptWatcher::~InterruptWatcher() {
  if (state_->thread.joinable()) {
    (void)!::write(state_->stop[1], "x", 1);
    state_->thread.join();
  }
  for (int fd : state_->stop) {
    if (fd >= 0) ::close(fd);
  }
}

}  // namespace kinetic::gke
