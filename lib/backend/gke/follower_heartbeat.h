// While a kinetic process follows a foreground run, it refreshes the job's follower object in
// the bucket; the pod's bootstrap stops a run whose follower object has gone stale (the CLI was
// killed, the laptop lost its network), so nothing runs and bills for a job nobody follows
// (issue #8 item 6, docs/run-record.md). Detached runs have no follower and run on their own.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backend/gke/session.h"

namespace kinetic::gke {

class FollowerHeartbeat {
 public:
  // Writes gs://BUCKET/jobs/ID/follower at once, then every INTERVAL_SECONDS, from a thread of
  // its own (with its own transport) until destroyed; the constructor does not wait for it.
  // Failures are retried on the next beat: one missed beat is far from the pod's timeout.
  FollowerHeartbeat(const Session& session, const std::string& job_id, double interval_seconds);
  ~FollowerHeartbeat();
  FollowerHeartbeat(const FollowerHeartbeat&) = delete;
  FollowerHeartbeat& operator=(const FollowerHeartbeat&) = delete;

 private:
  void beat();

  const Session& session_;
  std::string job_id_;
  std::shared_ptr<http::Transport> transport_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// How often to beat for a pod that gives up after TIMEOUT_SECONDS of silence: a third of it,
// between 0.2 s and 60 s.
double heartbeat_interval(double timeout_seconds);

}  // namespace kinetic::gke
