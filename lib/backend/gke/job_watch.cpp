#include "backend/gke/job_watch.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "backend/gke/job_state.h"
#include "backend/gke/log_end.h"
#include "backend/gke/names.h"
#include "backend/gke/pending_reason.h"
#include "core/backoff.h"
#include "core/error.h"
#include "job/spec.h"
#include "k8s/log_follower.h"
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
    if (index != "0") continue;
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

std::optional<std::string> wait_for_lead_pod(k8s::Client& client, const WatchOptions& o) {
  StatusLine line(*o.io);
  const std::string selector = job_selector(o.job_id);
  const double start = now_unix();
  double unschedulable_since = -1;  // when the pod was first seen with no pool; -1: not
  double failed_create_since = -1;  // when pod creation was first seen refused; -1: not
  double mount_failing_since = -1;  // when a volume was first seen failing to mount; -1: not
  bool interrupted = false;
  std::set<std::string> announced;
  for (;;) {
    if (take_interrupt(o.interrupt)) {
      o.interrupt->on_interrupt();
      interrupted = true;
    }
    k8s::ObjectList pods = client.list(k8s::pods_path(o.ns), selector);
    std::optional<json> pod = lead_pod(pods.items, o.skip_pods);
    // A pending pod being deleted (the Job failed, say past its deadline) will never run.
    if (pod && (*pod)["metadata"].contains("deletionTimestamp") &&
        (*pod)["status"].value("phase", "Pending") == "Pending")
      pod.reset();
    if (!pod) {
      // No pod yet: the Job controller has not made one, the job finished without another
      // attempt, or the job is gone.
      bool exists = false;
      std::optional<json> job;
      for (const auto& w : client.list(k8s::jobs_path(o.ns), selector).items) {
        if (w["metadata"].contains("deletionTimestamp")) continue;
        exists = true;
        if (!job) job = w;
      }
      if (!exists && list_or_empty(client, k8s::jobsets_path(o.ns), selector).empty())
        return std::nullopt;
      if (interrupted) return std::nullopt;
      // The workload ended with no pod to follow (DeadlineExceeded while pending): its verdict
      // is the caller's to read. A JobSet's child Job may end and be replaced by a restart: the
      // JobSet speaks for it.
      if (!job || workload_finished(*job)) {
        if (job && !(*job)["metadata"].contains("ownerReferences")) return std::nullopt;
        for (const auto& js : list_or_empty(client, k8s::jobsets_path(o.ns), selector))
          if (workload_finished(js)) return std::nullopt;
      }
      if (job) {
        // Pods refused at creation (quota, admission webhook): fatal once the controller's
        // retry failed too and the refusal has lasted the grace.
        FailedCreates refused = failed_creates(client, o.ns, *job);
        if (refused.count > 0 && failed_create_since < 0) failed_create_since = now_unix();
        if (refused.count == 0) failed_create_since = -1;
        if (refused.count >= 2 && now_unix() - failed_create_since >= o.failed_create_grace_seconds)
          throw Error(Errc::job_start,
                      "the cluster refused to create the job's pod: " + refused.message +
                          "; raise the quota or fix the admission policy, "
                          "then run again");
        if (refused.count > 0) {
          line.update("the cluster refuses to create the job's pod, retrying: " + refused.message);
        } else {
          line.update("waiting for the job's pod to be created");
        }
      } else {
        line.update("waiting for the job's pod to be created");
      }
    } else {
      const std::string name = (*pod)["metadata"].value("name", "");
      if (o.on_new_pod && announced.insert(name).second) {
        line.clear();
        o.on_new_pod(name);
      }
      const std::string phase = (*pod)["status"].value("phase", "Pending");
      if (phase != "Pending") return name;
      if (interrupted) return std::nullopt;
      auto events = client
                        .list(k8s::events_path(o.ns), {},
                              "involvedObject.kind=Pod,involvedObject.name=" + name)
                        .items;
      PendingReason why = pending_reason(*pod, events);
      if (why.fatal) throw Error(Errc::job_start, why.message);
      if (why.kind == PendingKind::no_pool) {
        // Only the autoscaler's own verdict (NotTriggerScaleUp) says no pool can ever fit; a
        // pod the scheduler just turned down may still get a scale-up a moment later.
        bool confirmed = false;
        for (const auto& e : events)
          confirmed = confirmed || e.value("reason", "") == "NotTriggerScaleUp";
        if (unschedulable_since < 0) unschedulable_since = now_unix();
        const double limit = confirmed
                                 ? o.scheduling_grace_seconds
                                 : std::max(o.scheduling_grace_seconds, kAutoscalerSilenceSeconds);
        if (now_unix() - unschedulable_since >= limit) throw Error(Errc::job_start, why.message);
        if (!confirmed) why.message = "waiting for the cluster autoscaler to find a node pool";
      } else {
        unschedulable_since = -1;
      }
      // A mount that fails may work a moment later (a bucket grant takes a while to reach
      // Cloud Storage): as long as the scheduling grace, then the job cannot start.
      if (why.kind == PendingKind::mount_failed) {
        if (mount_failing_since < 0) mount_failing_since = now_unix();
        if (now_unix() - mount_failing_since >= o.scheduling_grace_seconds)
          throw Error(Errc::job_start, why.message);
      } else {
        mount_failing_since = -1;
      }
      if (!why.message.empty()) {
        long waited = static_cast<long>(now_unix() - start);
        line.update(why.message + " (" + std::to_string(waited) + "s)", false);
      }
    }
    // Block until a pod of the job changes, or a few seconds pass (events do not touch pods).
    try {
      client.watch(k8s::pods_path(o.ns), selector, pods.resource_version, 2,
                   [](const k8s::WatchEvent& e) { return e.type == "BOOKMARK"; });
    } catch (const k8s::ApiError& e) {
      if (e.code() != 410) throw;  // expired: the next list starts afresh
    }
  }
}

void print_pod_log(k8s::Client& client, const std::string& ns, const std::string& pod,
                   LogSink& sink, const std::string& spec_sha256) {
  k8s::LogOptions lo;
  lo.container = "main";
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
