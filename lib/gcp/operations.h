// Waiting for long-running operations: GKE's own Operation type (status PENDING/RUNNING/DONE,
// error or statusMessage on failure) and google.longrunning.Operation (done, error | response)
// used by Service Usage, Cloud Build and Artifact Registry (docs/gcp-api.md §2.3, §4, §6).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace kinetic::gcp {

struct PollOptions {
  std::chrono::milliseconds initial{1000};
  std::chrono::milliseconds max{10000};
  double factor = 1.5;
  std::chrono::seconds deadline{3600};
  // Injected so tests never sleep; the CLI sleeps for real.
  std::function<void(std::chrono::milliseconds)> sleep;
  // Called after each poll with the latest operation (progress display).
  std::function<void(const nlohmann::json& operation)> on_poll;
};

// The backoff and deadline of one wait: the polling loops below and the clients' own retry
// loops (GKE's "incompatible operation") share it. Elapsed time is the larger of the wall clock
// and the sum of the waits asked for, so an injected sleeper drives the deadline in tests.
class Backoff {
 public:
  explicit Backoff(const PollOptions& options);
  // Waits the next delay of the back-off curve (core/backoff.h: initial, then times factor,
  // capped at max), never past the deadline.
  // False, without waiting, when the deadline has passed.
  bool wait();
  bool expired() const;
  std::chrono::milliseconds elapsed() const;
  const PollOptions& options() const { return options_; }

 private:
  PollOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds slept_{0};
  int attempt_ = 0;  // waits so far
};

// The google.rpc.Code name of CODE ("RESOURCE_EXHAUSTED" for 8); "" when unknown.
std::string rpc_code_name(int code);

// Polls GET until the operation is finished; returns the finished operation. Throws Error
// (Errc::api) with the operation's error message, prefixed by WHAT, when it failed, and when the
// deadline passes.
nlohmann::json wait_gke_operation(const std::function<nlohmann::json()>& get,
                                  nlohmann::json operation, const PollOptions& options,
                                  const std::string& what);
nlohmann::json wait_long_running(const std::function<nlohmann::json()>& get,
                                 nlohmann::json operation, const PollOptions& options,
                                 const std::string& what);

}  // namespace kinetic::gcp
