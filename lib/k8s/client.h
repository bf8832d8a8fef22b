// The Kubernetes API client: JSON objects by API path, lists with resourceVersion, watches as
// newline-delimited event streams, pod logs streamed. It reaches the cluster at its endpoint with
// the cluster CA pinned and a Google access token (make_kube_transport), so neither a kubeconfig
// nor gke-gcloud-auth-plugin is needed (docs/gcp-api.md §2.6, §7).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/token_cache.h"
#include "core/error.h"
#include "http/transport.h"

namespace kinetic::k8s {

// A non-2xx answer, from its Kubernetes Status body: CODE (404, 409, 410, 422...), REASON
// ("NotFound", "AlreadyExists", "Expired", "Invalid"...). what() is one actionable line.
class ApiError : public Error {
 public:
  ApiError(Errc errc, std::string message, int code, std::string reason)
      : Error(errc, std::move(message)), code_(code), reason_(std::move(reason)) {}
  int code() const { return code_; }
  const std::string& reason() const { return reason_; }

 private:
  int code_;
  std::string reason_;
};

// The error for a non-2xx answer HTTP_STATUS with BODY (a Status, else text) to WHAT ("creating
// /apis/batch/v1/..."): 401/403 name what to do, 404 is Errc::not_found.
ApiError api_error(int http_status, std::string_view body, const std::string& what);

// The transport for one cluster: curl with CA_PEM pinned, Bearer tokens from CREDENTIALS
// (refreshed once on a 401), retries, and -v tracing at VERBOSITY.
std::shared_ptr<http::Transport> make_kube_transport(const std::string& ca_pem,
                                                     std::shared_ptr<auth::TokenCache> credentials,
                                                     int verbosity);

struct ObjectList {
  std::vector<nlohmann::json> items;
  std::string resource_version;  // of the list, to start a watch from
};

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK (ERROR events become ApiError)
  nlohmann::json object;
};

struct LogOptions {
  std::string container;
  bool follow = false;
  bool timestamps = false;
  std::string since_time;  // RFC 3339
  std::optional<long> tail_lines;
};

class Client {
 public:
  // SERVER: "https://HOST[:PORT]" (a GKE endpoint gets "https://" prepended by the caller).
  Client(http::Transport& transport, std::string server);

  const std::string& server() const { return server_; }

  // POST OBJECT to COLLECTION ("/apis/batch/v1/namespaces/default/jobs"); returns the created
  // object. 409 throws ApiError reason AlreadyExists.
  nlohmann::json create(const std::string& collection, const nlohmann::json& object);
  // Server-side apply of OBJECT at PATH (its own path, not the collection's) as FIELD_MANAGER,
  // taking over fields other managers set (force): creates it or updates it; returns the object
  // as stored.
  nlohmann::json apply(const std::string& path, const nlohmann::json& object,
                       const std::string& field_manager);
  // JSON merge patch (RFC 7386) of PATH: PATCH's fields replace the object's, and a null removes
  // one, which a server-side apply to a custom resource cannot do (its schema refuses null).
  nlohmann::json merge_patch(const std::string& path, const nlohmann::json& patch_body);
  // GET PATH; nullopt on 404.
  std::optional<nlohmann::json> get(const std::string& path);
  ObjectList list(const std::string& collection, const std::string& label_selector = {},
                  const std::string& field_selector = {});
  // DELETE PATH with propagationPolicy=Background (a Job's pods go with it); false on 404.
  bool remove(const std::string& path);
  // Watches COLLECTION from RESOURCE_VERSION until ON_EVENT returns false, the server closes the
  // stream (after TIMEOUT_SECONDS) or an error; returns the last resourceVersion seen (bookmarks
  // included). 410 Expired (at connect or in the stream) throws ApiError code 410: re-list.
  std::string watch(const std::string& collection, const std::string& label_selector,
                    const std::string& resource_version, long timeout_seconds,
                    const std::function<bool(const WatchEvent&)>& on_event);
  // Streams the log of POD in NAMESPACE to ON_CHUNK (false stops). A container that has not
  // started yet throws ApiError code 400 reason BadRequest.
  void logs(const std::string& ns, const std::string& pod, const LogOptions& options,
            const std::function<bool(std::string_view chunk)>& on_chunk);

 private:
  // PATCH URL with BODY as CONTENT_TYPE (an apply or a merge patch); WHAT names it in errors.
  nlohmann::json patch(const std::string& url, const char* content_type, const nlohmann::json& body,
                       const std::string& what);

  http::Transport& transport_;
  std::string server_;
};

// API paths.
std::string jobs_path(const std::string& ns);
std::string job_path(const std::string& ns, const std::string& name);
std::string jobsets_path(const std::string& ns);
std::string jobset_path(const std::string& ns, const std::string& name);
std::string pods_path(const std::string& ns);
std::string pod_path(const std::string& ns, const std::string& name);
std::string secrets_path(const std::string& ns);
std::string secret_path(const std::string& ns, const std::string& name);
std::string events_path(const std::string& ns);
std::string nodes_path();
// A server's objects (`kinetic serve` on gke).
std::string deployments_path(const std::string& ns);
std::string deployment_path(const std::string& ns, const std::string& name);
std::string services_path(const std::string& ns);
std::string service_path(const std::string& ns, const std::string& name);
// The path of OBJECT ("/apis/apps/v1/namespaces/jobset-system/deployments/NAME") from its
// apiVersion, kind, name and namespace (DEFAULT_NS when a namespaced object names none).
// Throws Error(Errc::usage) for a kind kinetic does not know the plural and scope of.
std::string object_path(const nlohmann::json& object, const std::string& default_ns = "default");

}  // namespace kinetic::k8s
