#include "gcp/google_error.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/strings.h"
#include "http/retry.h"

namespace kinetic::gcp {
namespace {

// Longest API message quoted in an error line.
constexpr size_t kMessageLimit = 300;

using nlohmann::json;

// The field KEY as text: a string, or an integer written out (a code may come as either).
std::string text_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return {};
}

// The longest retry delay taken from a body; a longer one is this (a retry loop gives up on
// either), and no delay from the wire can overflow a clock.
constexpr double kMaxRetryDelaySeconds = 86400;

// SECONDS as a retry delay; nullopt when it is negative or not a number.
std::optional<std::chrono::milliseconds> retry_delay(double seconds) {
  if (!(seconds >= 0)) return std::nullopt;
  seconds = std::min(seconds, kMaxRetryDelaySeconds);
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000 + 0.5));
}

// "4s", "1.500s", {"seconds": "4", "nanos": 0} -> milliseconds.
std::optional<std::chrono::milliseconds> parse_duration(const json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s.empty() || s.back() != 's') return std::nullopt;
    try {
      return retry_delay(std::stod(s.substr(0, s.size() - 1)));
    } catch (...) {
      return std::nullopt;
    }
  }
  if (j.is_object()) {
    double seconds = 0;
    try {
      if (auto it = j.find("seconds"); it != j.end()) {
        if (it->is_string())
          seconds = std::stod(it->get<std::string>());
        else if (it->is_number())
          seconds = it->get<double>();
        else
          return std::nullopt;
      }
    } catch (...) {
      return std::nullopt;
    }
    if (auto it = j.find("nanos"); it != j.end() && it->is_number())
      seconds += it->get<double>() / 1e9;
    return retry_delay(seconds);
  }
  return std::nullopt;
}

void parse_details(const json& details, GoogleErrorBody& out) {
  if (!details.is_array()) return;
  for (const auto& d : details) {
    if (!d.is_object()) continue;
    std::string type = text_of(d, "@type");
    auto ends = [&type](std::string_view suffix) {
      return type.size() >= suffix.size() &&
             type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends("google.rpc.ErrorInfo")) {
      if (out.reason.empty()) out.reason = text_of(d, "reason");
      if (out.domain.empty()) out.domain = text_of(d, "domain");
      if (auto m = d.find("metadata"); m != d.end() && m->is_object()) {
        for (const auto& [k, v] : m->items()) {
          if (v.is_string()) out.metadata.emplace(k, v.get<std::string>());
        }
      }
    } else if (ends("google.rpc.RetryInfo")) {
      if (auto it = d.find("retryDelay"); it != d.end()) out.retry_delay = parse_duration(*it);
    } else if (ends("google.rpc.QuotaFailure")) {
      if (auto v = d.find("violations"); v != d.end() && v->is_array()) {
        for (const auto& violation : *v) {
          if (violation.is_object()) {
            out.quota_violations.push_back(
                {text_of(violation, "subject"), text_of(violation, "description")});
          }
        }
      }
    } else if (ends("google.rpc.Help")) {
      if (auto links = d.find("links"); links != d.end() && links->is_array()) {
        for (const auto& link : *links) {
          if (link.is_object() && !text_of(link, "url").empty())
            out.help_urls.push_back(text_of(link, "url"));
        }
      }
    }
  }
}

// A short text from a non-JSON body: an HTML <title>, else the first non-blank line.
std::string text_excerpt(std::string_view body) {
  static const std::regex title("<title>([^<]*)</title>", std::regex::icase);
  std::string head(body.substr(0, 8192));
  std::smatch m;
  if (std::regex_search(head, m, title)) return one_line(m[1].str(), 200);
  size_t pos = 0;
  while (pos < head.size()) {
    size_t end = head.find('\n', pos);
    if (end == std::string::npos) end = head.size();
    std::string line = one_line(std::string_view(head).substr(pos, end - pos), 200);
    if (!line.empty() && line[0] != '<') return line;
    pos = end + 1;
  }
  return {};
}

// The IAM permission named in a message: "Permission 'container.clusters.create' denied ...",
// "x does not have storage.objects.create access to ...", "Permission denied:
// iam.serviceAccounts.actAs".
std::string permission_in(const std::string& message) {
  static const std::regex perm(
      R"((?:^|[\s'"`(:])([a-z][a-zA-Z0-9]*\.[a-z][a-zA-Z0-9]*\.[a-z][a-zA-Z0-9]*)(?=$|[\s'"`),.;]))");
  auto begin = std::sregex_iterator(message.begin(), message.end(), perm);
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    std::string candidate = (*it)[1].str();
    if (candidate.find("googleapis") != std::string::npos ||
        candidate.find(".com") != std::string::npos ||
        candidate.find("gserviceaccount") != std::string::npos) {
      continue;
    }
    // A domain-like word at the end of a sentence ("foo.example.com.") was excluded above.
    return candidate;
  }
  return {};
}

std::string role_for(const std::string& permission) {
  std::string service = permission.substr(0, permission.find('.'));
  if (service == "container") return "roles/container.admin";
  if (service == "cloudbuild") return "roles/cloudbuild.builds.editor";
  if (service == "artifactregistry") return "roles/artifactregistry.writer";
  if (service == "storage") return "roles/storage.admin";
  if (service == "serviceusage") return "roles/serviceusage.serviceUsageAdmin";
  if (service == "iam") return "roles/iam.serviceAccountUser";
  return {};
}

std::string project_of(const GoogleErrorBody& e) {
  auto consumer = e.metadata.find("consumer");
  if (consumer != e.metadata.end()) {
    const std::string& c = consumer->second;
    return c.rfind("projects/", 0) == 0 ? c.substr(9) : c;
  }
  auto info = e.metadata.find("containerInfo");
  return info == e.metadata.end() ? std::string() : info->second;
}

}  // namespace

GoogleErrorBody parse_google_error(int http_status, std::string_view body) {
  GoogleErrorBody out;
  out.http_status = http_status;
  json j = json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    out.json = true;
    out.status = text_of(e, "status");
    out.message = one_line(text_of(e, "message"), kMessageLimit);
    if (auto d = e.find("details"); d != e.end()) parse_details(*d, out);
    if (auto errors = e.find("errors");
        errors != e.end() && errors->is_array() && !errors->empty() && (*errors)[0].is_object()) {
      const json& first = (*errors)[0];
      if (out.reason.empty()) out.reason = text_of(first, "reason");
      if (out.domain.empty()) out.domain = text_of(first, "domain");
      if (out.message.empty()) out.message = one_line(text_of(first, "message"), kMessageLimit);
    }
  } else if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    // OAuth token endpoint: {"error": "invalid_grant", "error_description": "..."}.
    out.json = true;
    out.reason = j["error"].get<std::string>();
    out.message = one_line(text_of(j, "error_description"), kMessageLimit);
    if (out.message.empty()) out.message = out.reason;
  } else if (j.is_object() && text_of(j, "kind") == "Status") {
    out.json = true;
    out.status = text_of(j, "reason");
    out.message = one_line(text_of(j, "message"), kMessageLimit);
  } else {
    out.message = text_excerpt(body);
  }
  return out;
}

namespace {

// The error for an exhausted quota or a rate limit, or nothing when E is neither.
std::optional<Error> quota_error(int http_status, const GoogleErrorBody& e,
                                 const std::string& prefix, const std::string& said) {
  // A rate limit with no named quota (GCS's rateLimitExceeded): there is no quota to raise, only
  // a pace to keep, and the retry layer has already waited its turn up to its deadline.
  if (http_status == 429 && e.quota_violations.empty() && e.metadata.empty() &&
      e.reason == "rateLimitExceeded") {
    std::string head = "rate limit exceeded: 429 Too Many Requests";
    if (!said.empty()) head += " (" + said + ")";
    return Error(Errc::api, prefix + head + http::throttled_advice());
  }
  bool quota = e.status == "RESOURCE_EXHAUSTED" || http_status == 429 ||
               !e.quota_violations.empty() || e.reason == "RATE_LIMIT_EXCEEDED" ||
               e.reason == "rateLimitExceeded" || e.reason == "quotaExceeded" ||
               e.message.find("Insufficient regional quota") != std::string::npos;
  if (!quota) return std::nullopt;
  std::string which;
  if (!e.quota_violations.empty()) {
    const auto& v = e.quota_violations.front();
    which = v.description.empty()
                ? v.subject
                : (v.subject.empty() ? v.description : v.subject + ": " + v.description);
    which = trim_period(one_line(which, kMessageLimit));
  } else if (e.metadata.count("quota_limit") || e.metadata.count("quota_metric")) {
    auto get = [&e](const char* k) {
      auto it = e.metadata.find(k);
      return it == e.metadata.end() ? std::string() : it->second;
    };
    which = get("quota_limit");
    if (!get("quota_metric").empty()) which += (which.empty() ? "" : " of ") + get("quota_metric");
  }
  std::string head = which.empty() ? "quota exceeded" : "quota exceeded: " + which;
  if (!which.empty() && !said.empty() && said.find(which) == std::string::npos)
    head += " (" + said + ")";
  if (which.empty() && !said.empty()) head += " (" + said + ")";
  return Error(Errc::api, prefix + head +
                              "; retry later or ask for more quota at "
                              "https://console.cloud.google.com/iam-admin/quotas");
}

Error error_for(int http_status, std::string_view body, std::string_view what) {
  GoogleErrorBody e = parse_google_error(http_status, body);
  std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
  std::string said = trim_period(e.message);
  auto with_said = [&said](std::string head) {
    return said.empty() ? head : head + " (" + said + ")";
  };

  // The API is disabled: ErrorInfo first, then gcloud's message regex.
  std::string disabled_service, project;
  if (e.reason == "SERVICE_DISABLED") {
    auto it = e.metadata.find("service");
    if (it != e.metadata.end()) disabled_service = it->second;
    project = project_of(e);
  }
  if (disabled_service.empty()) {
    static const std::regex enable(
        R"(Enable it by visiting https://console\.(?:cloud|developers)\.google\.com/apis/api/([^/]+)/overview\?project=(\S+) then retry)");
    std::smatch m;
    if (std::regex_search(e.message, m, enable)) {
      disabled_service = m[1].str();
      project = m[2].str();
    }
  }
  if (!disabled_service.empty()) {
    std::string project_flag = project.empty() ? "" : " --project " + project;
    return Error(Errc::api, prefix + "the " + disabled_service + " API is not enabled in project " +
                                (project.empty() ? "(unknown)" : project) +
                                "; enable it with `gcloud services enable " + disabled_service +
                                project_flag + "` (or run `kinetic up`)");
  }

  if (auto quota = quota_error(http_status, e, prefix, said)) return *quota;

  if (http_status == 401 || e.status == "UNAUTHENTICATED") {
    return Error(Errc::auth, prefix + with_said("credentials were rejected") +
                                 "; run `gcloud auth application-default login` or set "
                                 "GOOGLE_APPLICATION_CREDENTIALS");
  }
  if (http_status == 403 || e.status == "PERMISSION_DENIED") {
    if (e.reason == "ACCESS_TOKEN_SCOPE_INSUFFICIENT") {
      return Error(Errc::auth, prefix + with_said("the access token lacks the needed OAuth scope") +
                                   "; run `gcloud auth application-default login` again");
    }
    std::string permission = permission_in(e.message);
    std::string head = permission.empty() ? with_said("permission denied")
                                          : "permission " + permission + " denied" +
                                                (said.empty() ? "" : " (" + said + ")");
    std::string role = permission.empty() ? std::string() : role_for(permission);
    std::string ask = role.empty() ? "ask for a role that grants it" : "ask for role " + role;
    return Error(Errc::auth, prefix + head + "; " + ask +
                                 " or run `gcloud auth application-default login` with an account "
                                 "that has it");
  }
  if (http_status == 404 || e.status == "NOT_FOUND") {
    return Error(Errc::not_found, prefix + with_said("not found"));
  }
  if (http_status == 409) {
    bool exists = e.status == "ALREADY_EXISTS" || e.status == "AlreadyExists";
    return Error(Errc::api, prefix + with_said(exists ? "already exists" : "conflict"));
  }
  if (http_status == 412) {
    return Error(Errc::api, prefix + with_said("precondition failed"));
  }
  std::string head = "HTTP " + std::to_string(http_status);
  if (!e.status.empty()) head += " " + e.status;
  std::string message = with_said(head);
  if (!e.help_urls.empty()) message += "; see " + e.help_urls.front();
  return Error(Errc::api, prefix + message);
}

}  // namespace

Error google_error(int http_status, std::string_view body, std::string_view what) {
  // The status, ErrorInfo metadata and help links are quoted as the body spells them.
  Error e = error_for(http_status, body, what);
  return Error(e.code(), one_line(e.what()));
}

std::optional<std::chrono::milliseconds> retry_info_delay(std::string_view body) {
  return parse_google_error(0, body).retry_delay;
}

}  // namespace kinetic::gcp
