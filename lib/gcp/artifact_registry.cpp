// Artifact Registry client. Decisions:
// - ensure_repository reads first (no create permission needed for an existing repository), then
//   creates; the create is sent as idempotent because a replay that finds the repository (409) is
//   treated as ours: it is read back and returned (then as not created by this call).
// - has_tag writes a '/' inside the package as %2F, once. A package's resource name holds the
//   literal "%2F" (".../packages/team%2Fapp"); the REST mapping of `name` is a multi-segment
//   variable ({+name}), whose server-side decoding leaves "%2F" undecoded
//   (google/api/http.proto, "Path template syntax"), so the wire form %2F yields that name
//   exactly, as google-cloud-go's and google-cloud-cpp's REST stubs send it (they paste the name
//   into the path verbatim). gcloud's apitools escapes the '%' again (%252F), which the
//   transcoder decodes once to the same %2F; both reach the same resource, and the single form
//   is also what a plain HTTP server (the fakes) decodes to the package name. Not checked live.
#include "gcp/artifact_registry.h"

#include "core/error.h"
#include "gcp/google_error.h"
#include "gcp/json_fields.h"
#include "gcp/storage.h"

namespace kinetic::gcp {

using nlohmann::json;

ArtifactRegistryClient::ArtifactRegistryClient(http::Transport& transport, std::string endpoint,
                                               PollOptions poll)
    : transport_(transport), endpoint_(std::move(endpoint)), poll_(std::move(poll)) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
}

namespace {

std::string repos_url(const std::string& endpoint, const std::string& project,
                      const std::string& location) {
  return endpoint + "/v1/projects/" + encode_object_name(project) + "/locations/" +
         encode_object_name(location) + "/repositories";
}

json wait_op(http::Transport& transport, const std::string& endpoint, json op,
             const PollOptions& poll, const std::string& what) {
  std::string name = op.is_object() ? op.value("name", "") : "";
  auto get = [&]() {
    http::Request req;
    req.url = endpoint + "/v1/" + name;  // the name's slashes are path separators
    auto r = transport.send(req);
    if (!ok(r.status))
      throw google_error(r.status, r.body, what + " (reading operation " + name + ")");
    return parse_json(r, what, "Artifact Registry");
  };
  bool done =
      op.is_object() && op.contains("done") && op["done"].is_boolean() && op["done"].get<bool>();
  if (!done && name.empty())
    throw Error(Errc::api, what + ": Artifact Registry answered without an operation name");
  return wait_long_running(get, std::move(op), poll, what);
}

}  // namespace

std::optional<json> ArtifactRegistryClient::get_repository(const std::string& project,
                                                           const std::string& location,
                                                           const std::string& repo) {
  const std::string what = "reading repository " + repo + " in " + location;
  http::Request req;
  req.url = repos_url(endpoint_, project, location) + "/" + encode_object_name(repo);
  auto r = transport_.send(req);
  if (r.status == 404) return std::nullopt;
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  return parse_json(r, what, "Artifact Registry");
}

std::pair<json, bool> ArtifactRegistryClient::ensure_repository(const std::string& project,
                                                                const std::string& location,
                                                                const std::string& repo,
                                                                const std::string& description) {
  if (auto existing = get_repository(project, location, repo)) return {*existing, false};
  const std::string what = "creating repository " + repo + " in " + location;
  http::Request req;
  req.method = "POST";
  req.url = repos_url(endpoint_, project, location) + "?repositoryId=" + encode_object_name(repo);
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json({{"format", "DOCKER"},
                   {"description", description},
                   {"labels", {{"managed-by", "kinetic"}}}})
                 .dump();
  req.idempotent = true;  // a replay answers 409, handled below
  auto r = transport_.send(req);
  if (r.status == 409) {
    if (auto mine = get_repository(project, location, repo)) return {*mine, false};
    throw google_error(r.status, r.body, what);
  }
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  json op = wait_op(transport_, endpoint_, parse_json(r, what, "Artifact Registry"), poll_, what);
  if (auto resp = op.find("response");
      resp != op.end() && resp->is_object() && resp->contains("name"))
    return {*resp, true};
  if (auto created = get_repository(project, location, repo)) return {*created, true};
  throw Error(Errc::api, what + ": the operation finished but the repository cannot be read");
}

bool ArtifactRegistryClient::delete_repository(const std::string& project,
                                               const std::string& location,
                                               const std::string& repo) {
  const std::string what = "deleting repository " + repo + " in " + location;
  http::Request req;
  req.method = "DELETE";
  req.url = repos_url(endpoint_, project, location) + "/" + encode_object_name(repo);
  auto r = transport_.send(req);
  if (r.status == 404) return false;
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  wait_op(transport_, endpoint_, parse_json(r, what, "Artifact Registry"), poll_, what);
  return true;
}

bool ArtifactRegistryClient::has_tag(const std::string& project, const std::string& location,
                                     const std::string& repo, const std::string& package,
                                     const std::string& tag) {
  // encode_object_name writes '/' as %2F (see the note at the top) and escapes the rest.
  http::Request req;
  req.url = repos_url(endpoint_, project, location) + "/" + encode_object_name(repo) +
            "/packages/" + encode_object_name(package) + "/tags/" + encode_object_name(tag);
  auto r = transport_.send(req);
  if (ok(r.status)) return true;
  if (r.status == 404) return false;
  throw google_error(r.status, r.body,
                     "looking up image " + package + ":" + tag + " in repository " + repo);
}

}  // namespace kinetic::gcp
