#include "backend/notify.h"

#include <cmath>
#include <thread>

#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "gcp/endpoints.h"
#include "http/retry.h"
#include "job/pricing.h"

namespace kinetic {

namespace {

// The verb a line says a state with: "failed", "timed out", "was cancelled".
std::string ended(const std::string& state) {
  if (state == kTimedOut) return "timed out";
  if (state == kCancelled || state == kLost) return "was " + state;
  return state;
}

std::string notify_text(const NotifyFacts& f) {
  const bool succeeded = f.state == kSucceeded;
  std::string text = "kinetic: " + f.job + " " + ended(f.state);
  if (f.state == kFailed && f.exit_code) text += " (exit " + std::to_string(*f.exit_code) + ")";
  text += (succeeded ? " in " : " after ") + format_duration(f.duration_seconds);
  if (f.attempts > 1) text += " and " + std::to_string(f.attempts) + " attempts";
  if (!f.accelerator.empty()) text += " on " + f.accelerator;
  if (f.cost_usd) text += " (" + format_usd(*f.cost_usd) + ")";
  // "job exited with code N" says no more than "(exit N)".
  const bool bare =
      f.exit_code && f.error == "job exited with code " + std::to_string(*f.exit_code);
  if (!succeeded && !f.error.empty() && !bare) text += ": " + f.error;
  if (!f.outputs.empty()) text += "; outputs in " + f.outputs;
  return text;
}

}  // namespace

std::string redact_url(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return "…";
  const auto path = url.find_first_of("/?#", scheme + 3);
  std::string authority =
      url.substr(scheme + 3, path == std::string::npos ? path : path - scheme - 3);
  if (const auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  return url.substr(0, scheme + 3) + authority + (path == std::string::npos ? "" : "/…");
}

void require_notify_url(const std::string& url, const std::string& what) {
  const std::string lower = to_lower(url.substr(0, 8));
  const bool https = lower.rfind("https://", 0) == 0;
  const bool http = lower.rfind("http://", 0) == 0;
  const auto host_start = url.find("://");
  const bool has_host = host_start != std::string::npos && host_start + 3 < url.size() &&
                        url.find_first_of("/?#", host_start + 3) != host_start + 3;
  if ((!https && !http) || !has_host)
    throw Error(Errc::usage, what + " takes an https:// URL (a webhook), e.g. " + what +
                                 " https://hooks.slack.com/services/...; got " + redact_url(url));
  if (http && !gcp::is_loopback_url(url))
    throw Error(Errc::usage, what + " " + redact_url(url) +
                                 " is plain http: use https (a webhook's token must not cross the "
                                 "network in clear; http is allowed to this machine only)");
}

std::vector<std::string> split_notify_urls(const std::string& value) {
  std::vector<std::string> urls;
  for (auto& line : split(value, '\n'))
    if (!line.empty()) urls.push_back(line);
  return urls;
}

NotifyFacts notify_facts(const JobStatus& st, double price_per_hour, const std::string& outputs) {
  NotifyFacts f;
  f.job = st.id;
  f.state = st.state;
  f.exit_code = st.exit_code;
  f.error = st.error;
  f.attempts = std::max(1, st.attempts);
  f.duration_seconds = st.duration_seconds;
  f.accelerator = st.accelerator;
  f.backend = st.backend;
  if (price_per_hour > 0) f.cost_usd = price_per_hour * st.duration_seconds / 3600.0;
  f.outputs = outputs;
  return f;
}

nlohmann::ordered_json notify_payload(const NotifyFacts& f) {
  nlohmann::ordered_json j;
  j["text"] = notify_text(f);
  j["job"] = f.job;
  j["state"] = f.state;
  j["exit_code"] = f.exit_code ? nlohmann::ordered_json(*f.exit_code) : nullptr;
  j["error"] = f.error;
  j["attempts"] = f.attempts;
  j["duration_seconds"] = std::round(f.duration_seconds * 1000) / 1000;
  j["accelerator"] = f.accelerator;
  j["backend"] = f.backend;
  j["cost_usd"] =
      f.cost_usd ? nlohmann::ordered_json(std::round(*f.cost_usd * 1e6) / 1e6) : nullptr;
  j["outputs"] = f.outputs;
  return j;
}

std::vector<std::string> post_notifications(const std::vector<std::string>& urls,
                                            const nlohmann::ordered_json& payload,
                                            const NotifyPoster& poster) {
  std::vector<std::string> warnings;
  if (urls.empty()) return warnings;
  http::RetryPolicy policy;
  policy.max_attempts = poster.max_attempts;
  policy.initial_backoff = std::chrono::seconds(1);
  policy.max_backoff = std::chrono::seconds(8);
  policy.deadline = std::chrono::seconds(30);
  http::RetryEnv renv;
  if (poster.sleep) renv.sleep = poster.sleep;
  http::CurlOptions curl;
  curl.connect_timeout = std::chrono::seconds(10);
  auto transport = http::retried(
      poster.transport ? poster.transport() : http::make_curl_transport(curl), policy, renv);
  const std::string body = payload.dump();
  for (const auto& url : urls) {
    http::Request req;
    req.method = "POST";
    req.url = url;
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = body;
    req.timeout = std::chrono::seconds(20);
    // At least once: a webhook that got the summary twice is better than one that never did.
    req.idempotent = true;
    try {
      const http::Response res = transport->send(req);
      if (res.status / 100 != 2)
        warnings.push_back("could not notify " + redact_url(url) + ": HTTP " +
                           std::to_string(res.status));
    } catch (const std::exception& e) {
      // The transport's message may hold the URL: only its host is shown.
      warnings.push_back("could not notify " + redact_url(url) + ": the request failed");
    }
  }
  return warnings;
}

}  // namespace kinetic
