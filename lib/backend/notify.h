// --notify URL (issue #13): one JSON summary POSTed when a job ends. The runner that sees the
// verdict posts it: the local runner (backend/local/supervisor.h) always; on GKE the in-pod
// bootstrap (job/bootstrap.py, the same payload: tests/golden/notify_payloads.json holds the
// vectors both must produce) for the verdicts it can tell are final, and kinetic itself for a
// cancel, which the pod cannot tell from a preemption. The URLs are secrets (a webhook's token is
// in its path): they travel in the job's Secret as KINETIC_NOTIFY, never in the spec, and are
// shown as scheme://host/… only.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "http/transport.h"

namespace kinetic {

// The secret variable that carries the URLs (newline-separated) to the runner.
inline constexpr const char* kNotifyVariable = "KINETIC_NOTIFY";

// Checks a --notify URL: https://, or http:// to this machine only (a webhook's token must not
// cross the network in clear). Error(Errc::usage) naming it (redacted) otherwise.
void require_notify_url(const std::string& url, const std::string& what = "--notify");
// "https://hooks.slack.com/…": what may be shown of a URL.
std::string redact_url(const std::string& url);
// The URLs of KINETIC_NOTIFY's value.
std::vector<std::string> split_notify_urls(const std::string& value);

// What a notification says: the job, its state and exit code, attempts, duration, cost (when
// priced), where its outputs are, the cause of a failure, and `text`, one line that chat
// webhooks show as is. Never an environment value.
struct NotifyFacts {
  std::string job;
  std::string state;
  std::optional<int> exit_code;
  std::string error;
  int attempts = 1;
  double duration_seconds = 0;
  std::string accelerator;
  std::string backend;
  std::optional<double> cost_usd;
  std::string outputs;  // gs://BUCKET/jobs/ID/results/ or the local directory
};
NotifyFacts notify_facts(const JobStatus& st, double price_per_hour, const std::string& outputs);
nlohmann::ordered_json notify_payload(const NotifyFacts& facts);

// POSTs BODY to each URL, retrying 408/429/5xx and dropped connections with back-off; a URL
// that still fails is a warning line (returned), never the job's failure.
struct NotifyPoster {
  std::function<std::unique_ptr<http::Transport>()> transport;  // default: curl
  std::function<void(std::chrono::milliseconds)> sleep;         // default: sleep_for
  int max_attempts = 4;
};
std::vector<std::string> post_notifications(const std::vector<std::string>& urls,
                                            const nlohmann::ordered_json& payload,
                                            const NotifyPoster& poster = {});

}  // namespace kinetic
