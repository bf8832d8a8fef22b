// Waiting for long-running operations. Decisions:
// - The wait between polls grows from PollOptions::initial by `factor` up to `max`, and the last
//   wait is cut short so the deadline is honoured to the poll; time is the larger of the wall clock
//   and the waits asked for, so an injected sleeper makes deadlines deterministic in tests.
// - GKE's Operation has failed when it is DONE with an `error` or a non-empty `statusMessage`
//   (docs/gcp-api.md §2.3). Capacity (GCE_STOCKOUT, ZONE_RESOURCE_POOL_EXHAUSTED) and quota
//   (GCE_QUOTA_EXCEEDED, "Insufficient regional quota", "Quota 'X' exceeded") failures are
//   recognised in the message, the error details and the operation's cluster/node-pool conditions,
//   and say what to do.
// - A google.longrunning error is a google.rpc.Status with a numeric code; the codes that a user
//   acts on in a known way (permission, quota, disabled API, not found...) go through
//   google_error() with the equivalent HTTP status so they read like the synchronous errors.
#include "gcp/operations.h"

#include "core/backoff.h"

#include <algorithm>
#include <regex>
#include <thread>

#include "core/error.h"
#include "gcp/google_error.h"
#include "gcp/json_fields.h"

namespace kinetic::gcp {

using nlohmann::json;

namespace {

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '.')) s.pop_back();
  return s;
}

bool is_done(const json& op) {
  if (!op.is_object()) return false;
  auto it = op.find("done");
  return it != op.end() && it->is_boolean() && it->get<bool>();
}

bool has_error(const json& op) {
  if (!op.is_object()) return false;
  auto it = op.find("error");
  return it != op.end() && !it->is_null() && !(it->is_object() && it->empty());
}

std::string format_minutes(std::chrono::milliseconds d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s % 60 == 0 && s >= 60) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

// The HTTP status a google.rpc.Code travels with (google/rpc/code.proto).
int http_status_for(int code) {
  switch (code) {
    case 1:
      return 499;
    case 3:
      return 400;
    case 4:
      return 504;
    case 5:
      return 404;
    case 6:
      return 409;
    case 7:
      return 403;
    case 8:
      return 429;
    case 9:
      return 400;
    case 10:
      return 409;
    case 11:
      return 400;
    case 12:
      return 501;
    case 14:
      return 503;
    case 16:
      return 401;
    default:
      return 500;
  }
}

// All the text and codes a failed GKE operation carries, to look for known failures in.
std::string gke_failure_text(const json& op) {
  std::string text = str(op, "statusMessage") + " " + str(op, "detail");
  if (has_error(op) && op["error"].is_object()) {
    const json& e = op["error"];
    text += " " + str(e, "message");
    if (auto d = e.find("details"); d != e.end() && d->is_array()) {
      for (const auto& detail : *d) text += " " + str(detail, "reason") + " " + detail.dump();
    }
  }
  for (const char* key : {"clusterConditions", "nodepoolConditions"}) {
    if (auto c = op.find(key); c != op.end() && c->is_array()) {
      for (const auto& cond : *c)
        text +=
            " " + str(cond, "code") + " " + str(cond, "canonicalCode") + " " + str(cond, "message");
    }
  }
  return text;
}

std::string gke_failure_message(const json& op) {
  std::string message;
  if (has_error(op) && op["error"].is_object()) message = str(op["error"], "message");
  std::string status_message = str(op, "statusMessage");
  if (message.empty()) {
    message = status_message;
  } else if (!status_message.empty() && message.find(status_message) == std::string::npos &&
             status_message.find(message) == std::string::npos) {
    message += "; " + status_message;
  } else if (status_message.size() > message.size()) {
    message = status_message;
  }
  if (message.empty()) {
    for (const char* key : {"nodepoolConditions", "clusterConditions"}) {
      if (auto c = op.find(key); c != op.end() && c->is_array() && !c->empty())
        message = str((*c)[0], "message");
      if (!message.empty()) break;
    }
  }
  if (message.empty() && has_error(op) && op["error"].is_object())
    message = rpc_code_name(as_int(op["error"].value("code", json(0))));
  if (message.empty()) message = "the operation failed without a message";
  return one_line(message);
}

// The quota a quota error names, if it names one.
std::string quota_name(const std::string& text) {
  static const std::regex patterns[] = {
      std::regex(R"(Quota '([A-Za-z0-9_]+)' exceeded)"),
      std::regex(R"(resource \\?"([A-Za-z0-9_]+)\\?")"),
      std::regex(R"(quota_?(?:metric|limit)\W+([A-Za-z0-9_./-]+))", std::regex::icase),
  };
  std::smatch m;
  for (const auto& re : patterns) {
    if (std::regex_search(text, m, re)) return m[1].str();
  }
  // A bare quota metric such as TPU_V5_LITEPOD_CORES, not one of the error codes.
  static const std::regex metric(R"(\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b)");
  static const char* codes[] = {"GCE_QUOTA_EXCEEDED",
                                "QUOTA_EXCEEDED",
                                "RESOURCE_EXHAUSTED",
                                "GCE_STOCKOUT",
                                "ZONE_RESOURCE_POOL_EXHAUSTED",
                                "FAILED_PRECONDITION",
                                "INVALID_ARGUMENT",
                                "PERMISSION_DENIED",
                                "RATE_LIMIT_EXCEEDED",
                                "STATUS_UNSPECIFIED"};
  for (auto it = std::sregex_iterator(text.begin(), text.end(), metric);
       it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1].str();
    if (std::find(std::begin(codes), std::end(codes), name) == std::end(codes)) return name;
  }
  return "";
}

// "projects/X/..." in the operation's links, for a console URL.
std::string project_in(const json& op) {
  static const std::regex re(R"(/projects/([^/]+)/)");
  for (const char* key : {"targetLink", "selfLink"}) {
    std::string link = str(op, key);
    std::smatch m;
    if (std::regex_search(link, m, re)) return m[1].str();
  }
  return "";
}

Error gke_operation_error(const json& op, const std::string& what) {
  std::string prefix = what.empty() ? std::string() : what + ": ";
  std::string message = gke_failure_message(op);
  std::string text = gke_failure_text(op);
  std::string where = str(op, "location").empty() ? str(op, "zone") : str(op, "location");

  bool stockout = text.find("GCE_STOCKOUT") != std::string::npos ||
                  text.find("ZONE_RESOURCE_POOL_EXHAUSTED") != std::string::npos ||
                  text.find("does not have enough resources") != std::string::npos ||
                  text.find("Not enough resources available") != std::string::npos;
  if (stockout) {
    return Error(Errc::api, prefix + "GKE: no capacity for this machine type" +
                                (where.empty() ? "" : " in " + where) + " right now (" + message +
                                "); try another zone with --zone, a spot pool with --spot or a "
                                "reservation, or retry later");
  }
  bool quota =
      text.find("GCE_QUOTA_EXCEEDED") != std::string::npos ||
      text.find("QUOTA_EXCEEDED") != std::string::npos ||
      text.find("Insufficient regional quota") != std::string::npos ||
      text.find("Insufficient quota") != std::string::npos ||
      std::regex_search(text, std::regex(R"(Quota '[^']+' exceeded)")) ||
      (has_error(op) && op["error"].is_object() && as_int(op["error"].value("code", json(0))) == 8);
  if (quota) {
    std::string name = quota_name(text);
    std::string project = project_in(op);
    std::string url = "https://console.cloud.google.com/iam-admin/quotas" +
                      (project.empty() ? std::string() : "?project=" + project);
    std::string head = name.empty() ? "quota exceeded" : "quota " + name + " exceeded";
    return Error(Errc::api, prefix + "GKE: " + head + " (" + message + "); request more" +
                                (name.empty() ? "" : " " + name) + " quota at " + url +
                                (where.empty() ? "" : " for " + where) + ", or use another region");
  }
  return Error(Errc::api, prefix + "GKE: " + message);
}

Error long_running_error(const json& op, const std::string& what) {
  const json& e = op["error"];
  int code = e.is_object() ? as_int(e.value("code", json(0))) : 0;
  std::string message = e.is_object() ? one_line(str(e, "message")) : std::string();
  switch (code) {
    case 5:
    case 7:
    case 8:
    case 16: {
      json body = {{"error", {{"code", http_status_for(code)}, {"message", message}}}};
      body["error"]["status"] = rpc_code_name(code);
      if (e.is_object() && e.contains("details")) body["error"]["details"] = e["details"];
      return google_error(http_status_for(code), body.dump(), what);
    }
    default:
      break;
  }
  std::string prefix = what.empty() ? std::string() : what + ": ";
  // A disabled API inside an operation's error (ErrorInfo SERVICE_DISABLED) reads as it does
  // synchronously.
  if (e.is_object() && e.contains("details") &&
      e["details"].dump().find("SERVICE_DISABLED") != std::string::npos) {
    json body = {{"error", {{"code", 403}, {"message", message}, {"details", e["details"]}}}};
    return google_error(403, body.dump(), what);
  }
  std::string name = rpc_code_name(code);
  if (message.empty())
    message = name.empty() ? "the operation failed without a message" : name;
  else if (!name.empty() && code != 2 && code != 13)
    message += " (" + name + ")";
  return Error(Errc::api, prefix + message);
}

Error deadline_error(const json& op, const PollOptions& options, const std::string& what,
                     const std::string& kind) {
  std::string prefix = what.empty() ? std::string() : what + ": ";
  std::string name = str(op, "name");
  return Error(Errc::api, prefix + kind + (name.empty() ? "" : " " + name) +
                              " did not finish within " + format_minutes(options.deadline) +
                              "; it may still complete in the background: check again later "
                              "(or run the command again, which picks it up)");
}

}  // namespace

std::string rpc_code_name(int code) {
  static const char* names[] = {"OK",
                                "CANCELLED",
                                "UNKNOWN",
                                "INVALID_ARGUMENT",
                                "DEADLINE_EXCEEDED",
                                "NOT_FOUND",
                                "ALREADY_EXISTS",
                                "PERMISSION_DENIED",
                                "RESOURCE_EXHAUSTED",
                                "FAILED_PRECONDITION",
                                "ABORTED",
                                "OUT_OF_RANGE",
                                "UNIMPLEMENTED",
                                "INTERNAL",
                                "UNAVAILABLE",
                                "DATA_LOSS",
                                "UNAUTHENTICATED"};
  if (code < 0 || code > 16) return "";
  return names[code];
}

Backoff::Backoff(const PollOptions& options)
    : options_(options), start_(std::chrono::steady_clock::now()) {}

std::chrono::milliseconds Backoff::elapsed() const {
  auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start_);
  return std::max(wall, slept_);
}

bool Backoff::expired() const {
  return elapsed() >= options_.deadline;
}

bool Backoff::wait() {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(options_.deadline) - elapsed();
  if (left <= std::chrono::milliseconds(0)) return false;
  const BackoffCurve curve{options_.initial, options_.max, options_.factor};
  auto delay = std::min(curve.delay(++attempt_), left);
  if (options_.sleep) {
    options_.sleep(delay);
  } else {
    std::this_thread::sleep_for(delay);
  }
  slept_ += delay;
  return true;
}

json wait_gke_operation(const std::function<json()>& get, json operation,
                        const PollOptions& options, const std::string& what) {
  Backoff backoff(options);
  while (str(operation, "status") != "DONE") {
    if (!backoff.wait()) throw deadline_error(operation, options, what, "GKE operation");
    operation = get();
    if (options.on_poll) options.on_poll(operation);
  }
  if (has_error(operation) || !str(operation, "statusMessage").empty())
    throw gke_operation_error(operation, what);
  return operation;
}

json wait_long_running(const std::function<json()>& get, json operation, const PollOptions& options,
                       const std::string& what) {
  Backoff backoff(options);
  while (!is_done(operation)) {
    if (!backoff.wait()) throw deadline_error(operation, options, what, "operation");
    operation = get();
    if (options.on_poll) options.on_poll(operation);
  }
  if (has_error(operation)) throw long_running_error(operation, what);
  return operation;
}

}  // namespace kinetic::gcp
