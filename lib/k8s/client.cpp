// The Kubernetes API client. Decisions:
// - Every non-2xx answer becomes an ApiError from its Status body (code and reason from the body
//   when present, else the HTTP status), one line: what was being done, what the server said, and
//   for 401/403 what to do about it.
// - Callbacks given to the transport's on_body never let an exception escape into the HTTP
//   library: it is stashed, the transfer aborted, and the exception rethrown afterwards.
// - A watch whose connection drops after events arrived ends like a server-side close (the
//   caller resumes from the returned resourceVersion); one that drops before any byte is left to
//   the retry layer.
#include "k8s/client.h"

#include <cstdio>
#include <exception>

#include "auth/authed.h"
#include "core/strings.h"
#include "gcp/google_error.h"
#include "gcp/json_fields.h"
#include "http/retry.h"
#include "http/trace.h"

namespace kinetic::k8s {
namespace {

using gcp::ok;
using gcp::str;

using nlohmann::json;

// Longest API message quoted in an error line.
constexpr size_t kMessageLimit = 400;

constexpr const char* kAuthHint =
    "run `gcloud auth application-default login` or check roles/container.developer";

// Appends "?k=v" or "&k=v" to URL with V percent-encoded.
void add_query(std::string& url, std::string_view key, std::string_view value) {
  url += url.find('?') == std::string::npos ? '?' : '&';
  url += key;
  url += '=';
  url += percent_encode(value);
}

// The error for a Status (from a non-2xx body or a watch ERROR event). HTTP_STATUS is used when
// the Status carries no code.
ApiError status_error(int http_status, const json& status, std::string_view body,
                      const std::string& what) {
  int code = http_status;
  std::string reason, message;
  if (status.is_object()) {
    if (auto it = status.find("code"); it != status.end() && it->is_number_integer()) {
      int c = it->get<int>();
      if (c > 0) code = c;
    }
    reason = str(status, "reason");
    message = one_line(str(status, "message"), kMessageLimit);
  } else {
    message = gcp::parse_google_error(code, body).message;  // a proxy's HTML or text answer
  }
  message = trim_period(message);
  std::string said = message.empty() ? std::string() : " (" + message + ")";
  std::string label = std::to_string(code) + (reason.empty() ? "" : " " + reason);

  if (code == 401) {
    return ApiError(
        Errc::auth,
        what + ": the Kubernetes API rejected the credentials" + said + "; " + kAuthHint, code,
        reason.empty() ? "Unauthorized" : reason);
  }
  if (code == 403) {
    return ApiError(Errc::auth,
                    what + ": the Kubernetes API denied access" + said + "; " + kAuthHint, code,
                    reason.empty() ? "Forbidden" : reason);
  }
  if (code == 404) {
    return ApiError(Errc::not_found, what + ": not found" + said, code,
                    reason.empty() ? "NotFound" : reason);
  }
  if (code == 410) {
    return ApiError(Errc::api,
                    what + ": the resourceVersion is too old" + said + "; list again and re-watch",
                    code, reason.empty() ? "Expired" : reason);
  }
  if (code == 429) {
    // What API Priority and Fairness answers a client past its share (a plain-text body, no
    // Status); the retry layer has already waited its turn up to its deadline.
    return ApiError(Errc::api,
                    what +
                        ": the Kubernetes API server kept refusing requests with 429 Too Many "
                        "Requests (its API Priority and Fairness limits)" +
                        said + http::throttled_advice(),
                    code, reason.empty() ? "TooManyRequests" : reason);
  }
  std::string text = message.empty() ? "HTTP " + label : message + " (HTTP " + label + ")";
  return ApiError(Errc::api, what + ": " + text, code, reason);
}

[[noreturn]] void fail(const http::Response& r, const std::string& what) {
  throw api_error(r.status, r.body, what);
}

json parse_body(const http::Response& r, const std::string& what) {
  json j = json::parse(r.body, nullptr, false);
  if (j.is_discarded()) {
    throw ApiError(Errc::api,
                   what + ": the Kubernetes API answered HTTP " + std::to_string(r.status) +
                       " with a body that is not JSON",
                   r.status, "");
  }
  return j;
}

http::Request json_request(std::string method, std::string url) {
  http::Request req;
  req.method = std::move(method);
  req.url = std::move(url);
  req.headers = {{"Accept", "application/json"}};
  return req;
}

std::string resource_version_of(const json& object) {
  if (!object.is_object()) return {};
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

// Streams a GET to ON_DATA, keeping exceptions out of the transport: returns normally when the
// server ends the stream or ON_DATA returns false; rethrows what ON_DATA threw.
http::Response stream(http::Transport& transport, http::Request req,
                      const std::function<bool(std::string_view)>& on_data, bool& stopped) {
  std::exception_ptr thrown;
  stopped = false;
  req.on_body = [&](std::string_view chunk) {
    try {
      if (on_data(chunk)) return true;
      stopped = true;
    } catch (...) {
      thrown = std::current_exception();
    }
    return false;
  };
  try {
    http::Response r = transport.send(req);
    if (thrown) std::rethrow_exception(thrown);
    return r;
  } catch (const http::TransportError&) {
    if (thrown) std::rethrow_exception(thrown);
    if (stopped) {
      http::Response r;
      r.status = 200;
      return r;
    }
    throw;
  }
}

// Status details.retryAfterSeconds (429 TooManyRequests), like Retry-After.
std::optional<std::chrono::milliseconds> retry_after_seconds(const http::Response& r) {
  json j = json::parse(r.body, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto details = j.find("details");
  if (details == j.end() || !details->is_object()) return std::nullopt;
  auto s = details->find("retryAfterSeconds");
  if (s == details->end() || !s->is_number_integer() || s->get<int64_t>() <= 0) return std::nullopt;
  return std::chrono::seconds(std::min<int64_t>(s->get<int64_t>(), 300));
}

}  // namespace

ApiError api_error(int http_status, std::string_view body, const std::string& what) {
  json status = json::parse(body, nullptr, false);
  if (status.is_discarded() || !status.is_object() || str(status, "kind") != "Status")
    status = json();
  return status_error(http_status, status, body, what);
}

std::shared_ptr<http::Transport> make_kube_transport(const std::string& ca_pem,
                                                     std::shared_ptr<auth::TokenCache> credentials,
                                                     int verbosity) {
  http::CurlOptions curl;
  curl.ca_pem = ca_pem;
  // Watches and followed logs can be quiet for long; the API server ends a watch after its
  // timeoutSeconds, and a dropped log stream is resumed by follow_pod_log.
  curl.idle_timeout = std::chrono::minutes(3);
  http::RetryPolicy policy;
  policy.body_hint = retry_after_seconds;
  auto inner =
      http::retried(auth::authed(http::make_curl_transport(curl), std::move(credentials)), policy);
  return http::traced(std::move(inner), verbosity, [](std::string_view line) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  });
}

Client::Client(http::Transport& transport, std::string server)
    : transport_(transport), server_(std::move(server)) {
  while (!server_.empty() && server_.back() == '/') server_.pop_back();
}

json Client::create(const std::string& collection, const json& object) {
  std::string what = "creating " + collection;
  auto req = json_request("POST", server_ + collection);
  req.headers.emplace_back("Content-Type", "application/json");
  req.body = object.dump();
  // A replayed POST could create twice or answer 409 for our own object: not retried here.
  req.idempotent = false;
  auto r = transport_.send(req);
  if (!ok(r.status)) fail(r, what);
  return parse_body(r, what);
}

json Client::apply(const std::string& path, const json& object, const std::string& field_manager) {
  std::string url = server_ + path;
  add_query(url, "fieldManager", field_manager);
  add_query(url, "force", "true");
  // JSON is YAML: the apply patch type takes either.
  return patch(url, "application/apply-patch+yaml", object, "applying " + path);
}

json Client::merge_patch(const std::string& path, const json& patch_body) {
  return patch(server_ + path, "application/merge-patch+json", patch_body, "patching " + path);
}

json Client::patch(const std::string& url, const char* content_type, const json& body,
                   const std::string& what) {
  auto req = json_request("PATCH", url);
  req.headers.emplace_back("Content-Type", content_type);
  req.body = body.dump();
  req.idempotent = true;  // the same apply or patch twice leaves the object as once
  auto r = transport_.send(req);
  if (!ok(r.status)) fail(r, what);
  return parse_body(r, what);
}

std::optional<json> Client::get(const std::string& path) {
  std::string what = "reading " + path;
  auto r = transport_.send(json_request("GET", server_ + path));
  if (r.status == 404) return std::nullopt;
  if (!ok(r.status)) fail(r, what);
  return parse_body(r, what);
}

ObjectList Client::list(const std::string& collection, const std::string& label_selector,
                        const std::string& field_selector) {
  std::string what = "listing " + collection;
  std::string url = server_ + collection;
  if (!label_selector.empty()) add_query(url, "labelSelector", label_selector);
  if (!field_selector.empty()) add_query(url, "fieldSelector", field_selector);
  auto r = transport_.send(json_request("GET", url));
  if (!ok(r.status)) fail(r, what);
  json j = parse_body(r, what);
  ObjectList out;
  out.resource_version = resource_version_of(j);
  if (auto items = j.find("items"); items != j.end() && items->is_array()) {
    out.items.reserve(items->size());
    for (auto& item : *items) out.items.push_back(std::move(item));
  }
  return out;
}

bool Client::remove(const std::string& path) {
  std::string what = "deleting " + path;
  std::string url = server_ + path;
  add_query(url, "propagationPolicy", "Background");
  auto r = transport_.send(json_request("DELETE", url));
  if (r.status == 404) return false;
  if (!ok(r.status)) fail(r, what);
  return true;
}

std::string Client::watch(const std::string& collection, const std::string& label_selector,
                          const std::string& resource_version, long timeout_seconds,
                          const std::function<bool(const WatchEvent&)>& on_event) {
  std::string what = "watching " + collection;
  std::string url = server_ + collection;
  add_query(url, "watch", "1");
  if (!resource_version.empty()) add_query(url, "resourceVersion", resource_version);
  add_query(url, "allowWatchBookmarks", "true");
  if (timeout_seconds > 0) add_query(url, "timeoutSeconds", std::to_string(timeout_seconds));
  if (!label_selector.empty()) add_query(url, "labelSelector", label_selector);
  auto req = json_request("GET", url);
  req.timeout = std::chrono::milliseconds(0);

  std::string last_rv = resource_version;
  std::string buffer;
  bool received = false;

  // One event line; false when ON_EVENT asked to stop.
  auto handle = [&](std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) return true;
    json j = json::parse(line.begin(), line.end(), nullptr, false);
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
      throw ApiError(Errc::api, what + ": the Kubernetes API sent a malformed watch event", 0, "");
    }
    WatchEvent event;
    event.type = j["type"].get<std::string>();
    if (auto o = j.find("object"); o != j.end()) event.object = std::move(*o);
    if (event.type == "ERROR") throw status_error(500, event.object, {}, what);
    if (std::string rv = resource_version_of(event.object); !rv.empty()) last_rv = rv;
    return on_event(event);
  };

  bool stopped = false;
  http::Response r;
  try {
    r = stream(
        transport_, req,
        [&](std::string_view chunk) {
          received = true;
          buffer.append(chunk);
          size_t start = 0;
          for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
            if (!handle(std::string_view(buffer).substr(start, nl - start))) return false;
          }
          buffer.erase(0, start);
          return true;
        },
        stopped);
  } catch (const http::TransportError& e) {
    // Dropped mid-stream: the events so far were delivered; resume from LAST_RV.
    if (received && e.retryable()) return last_rv;
    throw;
  }
  if (!ok(r.status)) fail(r, what);
  if (!stopped && !buffer.empty()) handle(buffer);  // a last event without its newline
  return last_rv;
}

void Client::logs(const std::string& ns, const std::string& pod, const LogOptions& options,
                  const std::function<bool(std::string_view chunk)>& on_chunk) {
  std::string what = "reading the log of pod " + ns + "/" + pod;
  std::string url = server_ + pod_path(ns, pod) + "/log";
  if (!options.container.empty()) add_query(url, "container", options.container);
  if (options.follow) add_query(url, "follow", "true");
  if (options.timestamps) add_query(url, "timestamps", "true");
  if (!options.since_time.empty()) add_query(url, "sinceTime", options.since_time);
  if (options.tail_lines) add_query(url, "tailLines", std::to_string(*options.tail_lines));
  http::Request req;
  req.url = url;
  req.headers = {{"Accept", "*/*"}};
  req.timeout = std::chrono::milliseconds(0);
  bool stopped = false;
  http::Response r = stream(transport_, req, on_chunk, stopped);
  if (!ok(r.status)) fail(r, what);
}

std::string jobs_path(const std::string& ns) {
  return "/apis/batch/v1/namespaces/" + ns + "/jobs";
}
std::string job_path(const std::string& ns, const std::string& name) {
  return jobs_path(ns) + "/" + name;
}
std::string jobsets_path(const std::string& ns) {
  return "/apis/jobset.x-k8s.io/v1alpha2/namespaces/" + ns + "/jobsets";
}
std::string jobset_path(const std::string& ns, const std::string& name) {
  return jobsets_path(ns) + "/" + name;
}
std::string deployments_path(const std::string& ns) {
  return "/apis/apps/v1/namespaces/" + ns + "/deployments";
}
std::string deployment_path(const std::string& ns, const std::string& name) {
  return deployments_path(ns) + "/" + name;
}
std::string services_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/services";
}
std::string service_path(const std::string& ns, const std::string& name) {
  return services_path(ns) + "/" + name;
}
std::string pods_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/pods";
}
std::string pod_path(const std::string& ns, const std::string& name) {
  return pods_path(ns) + "/" + name;
}
std::string secrets_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/secrets";
}
std::string secret_path(const std::string& ns, const std::string& name) {
  return secrets_path(ns) + "/" + name;
}
std::string events_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/events";
}
std::string nodes_path() {
  return "/api/v1/nodes";
}

namespace {

struct KindInfo {
  const char* kind;
  const char* plural;
  bool namespaced;
};

// The kinds kinetic creates or applies: its own workloads, what a JobSet or Kueue release holds,
// and Kueue's queues.
constexpr KindInfo kKinds[] = {
    {"Namespace", "namespaces", false},
    {"CustomResourceDefinition", "customresourcedefinitions", false},
    {"ClusterRole", "clusterroles", false},
    {"ClusterRoleBinding", "clusterrolebindings", false},
    {"MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false},
    {"ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false},
    {"PriorityClass", "priorityclasses", false},
    {"APIService", "apiservices", false},
    // Kueue's queues (backend/gke/kueue.h).
    {"ResourceFlavor", "resourceflavors", false},
    {"ClusterQueue", "clusterqueues", false},
    {"WorkloadPriorityClass", "workloadpriorityclasses", false},
    {"LocalQueue", "localqueues", true},
    {"ServiceAccount", "serviceaccounts", true},
    {"Role", "roles", true},
    {"RoleBinding", "rolebindings", true},
    {"ConfigMap", "configmaps", true},
    {"Secret", "secrets", true},
    {"Service", "services", true},
    {"Deployment", "deployments", true},
    {"Job", "jobs", true},
    {"CronJob", "cronjobs", true},
    {"JobSet", "jobsets", true},
    {"Pod", "pods", true},
};

}  // namespace

std::string object_path(const json& object, const std::string& default_ns) {
  const std::string api_version = object.value("apiVersion", "");
  const std::string kind = object.value("kind", "");
  const json metadata = object.value("metadata", json::object());
  const std::string name = metadata.value("name", "");
  if (api_version.empty() || kind.empty() || name.empty())
    throw Error(Errc::usage, "a manifest object lacks apiVersion, kind or metadata.name" +
                                 (kind.empty() ? std::string() : " (kind " + kind + ")"));
  for (const auto& k : kKinds) {
    if (kind != k.kind) continue;
    std::string path =
        api_version.find('/') == std::string::npos ? "/api/" + api_version : "/apis/" + api_version;
    if (k.namespaced) path += "/namespaces/" + metadata.value("namespace", default_ns);
    return path + "/" + k.plural + "/" + name;
  }
  throw Error(Errc::usage, "kinetic does not know where the API keeps objects of kind " + kind +
                               " (" + api_version + ", " + name + ")");
}

}  // namespace kinetic::k8s
