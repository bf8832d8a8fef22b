#include "backend/gke/follower_heartbeat.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "backend/gke/names.h"
#include "core/error.h"
#include "gcp/storage.h"
#include "job/spec.h"

namespace kinetic::gke {

double heartbeat_interval(double timeout_seconds) {
  return std::clamp(timeout_seconds / 3, 0.2, 60.0);
}

FollowerHeartbeat::FollowerHeartbeat(const Session& session, const std::string& job_id,
                                     double interval_seconds)
    : session_(session), job_id_(job_id) {
  if (!session_.new_cloud) return;
  transport_ = session_.new_cloud();
  const auto interval = std::chrono::duration<double>(interval_seconds);
  // The first beat too goes from the thread: the follower need not wait for it (issue #14).
  thread_ = std::thread([this, interval] {
    beat();
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, interval, [this] { return stop_; })) {
      lock.unlock();
      beat();
      lock.lock();
    }
  });
}

FollowerHeartbeat::~FollowerHeartbeat() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FollowerHeartbeat::beat() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const nlohmann::json who = {{"pid", static_cast<long>(::getpid())},
                              {"host", std::string(host)},
                              {"time", rfc3339(now_unix())}};
  try {
    gcp::StorageClient storage(*transport_, session_.endpoint("storage"));
    storage.upload_string(session_.bucket(), follower_object(job_id_), who.dump(),
                          {.content_type = "application/json"});
  } catch (const Error&) {
    // The next beat tries again.
  }
}

}  // namespace kinetic::gke
