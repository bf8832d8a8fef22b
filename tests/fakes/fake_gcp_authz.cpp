// FakeGcp: what a Workload Identity token may do. The user's tokens (any the fake did not mint)
// are an owner's and pass. A token from a metadata server (fake_gcp_metadata.cpp) acts as its
// pod's principal: on the GKE routes of the table below it needs the route's permission from a
// binding of the project's IAM policy that names the principal, through a live custom role (or
// one of a few predefined ones) and a condition that holds for the resource; every other route
// of every API is denied to it. kinetic's auto-down job is such a principal, granted only
// container.clusters.delete on its own cluster, so the fake must refuse it everything else.
#include <algorithm>

#include "fakes/fake_gcp_internal.h"

namespace kinetic::fakes {

using namespace gcp_detail;

namespace {

constexpr const char* kProjectType = "cloudresourcemanager.googleapis.com/Project";

// One permission check: PERMISSION on RESOURCE (what conditions see), and the resource as the
// denial names it (the request's own form, "zones" in a legacy path).
struct Check {
  std::string permission;
  CelResource resource;
  std::string shown;
};

// The GKE routes a Workload Identity token may be allowed, with the permission GKE checks. Node
// pool routes are authorized on their cluster. nullopt: a route outside the table.
std::optional<Check> gke_check(const Call& call, const std::string& project) {
  const auto& s = call.seg;
  if (s.size() < 6 || s[0] != "v1" || s[1] != "projects" ||
      (s[3] != "locations" && s[3] != "zones"))
    return std::nullopt;
  const std::string& location = s[4];
  const std::string shown_parent = "projects/" + s[2] + "/" + s[3] + "/" + location;
  const std::string service = "container.googleapis.com";
  auto on_project = [&](const char* permission) {
    return Check{permission, {"projects/" + project, kProjectType, service}, "projects/" + s[2]};
  };
  if (s[5] == "operations" && call.method == "GET" && call.verb.empty()) {
    if (s.size() == 6) return on_project("container.operations.list");
    if (s.size() == 7)
      return Check{"container.operations.get",
                   {"projects/" + project + "/locations/" + location + "/operations/" + s[6],
                    "container.googleapis.com/Operation", service},
                   shown_parent + "/operations/" + s[6]};
    return std::nullopt;
  }
  if (s[5] != "clusters") return std::nullopt;
  if (s.size() == 6 && call.verb.empty()) {
    if (call.method == "GET") return on_project("container.clusters.list");
    if (call.method == "POST") return on_project("container.clusters.create");
    return std::nullopt;
  }
  if (s.size() < 7) return std::nullopt;
  Check c;
  c.resource = {"projects/" + project + "/locations/" + location + "/clusters/" + s[6],
                "container.googleapis.com/Cluster", service};
  c.shown = shown_parent + "/clusters/" + s[6];
  if (s.size() == 7 && call.verb.empty() && call.method == "GET")
    c.permission = "container.clusters.get";
  else if (s.size() == 7 && call.verb.empty() && call.method == "DELETE")
    c.permission = "container.clusters.delete";
  else if (call.method == "GET")
    c.permission = "container.clusters.get";  // node pools
  else
    c.permission = "container.clusters.update";  // node pools, setX verbs, cluster update
  return c;
}

// A permission named after the route, as Google's APIs name theirs (SERVICE.COLLECTION.VERB),
// for the denial of a route outside the table.
std::string route_permission(const Call& call) {
  std::string api = call.service == "cloudresourcemanager" ? "resourcemanager" : call.service;
  std::string collection = "projects";
  bool has_id = false;
  for (std::size_t i = 1; i < call.seg.size(); i += 2) {
    collection = call.seg[i];
    has_id = i + 1 < call.seg.size();
  }
  std::string verb = call.verb;
  if (verb.empty()) {
    if (call.method == "GET")
      verb = has_id ? "get" : "list";
    else if (call.method == "POST")
      verb = "create";
    else if (call.method == "DELETE")
      verb = "delete";
    else
      verb = "update";
  }
  return api + "." + collection + "." + verb;
}

// Predefined roles the fake grants GKE permissions through (any other predefined role grants
// nothing here).
bool predefined_grants(const std::string& role, const std::string& permission) {
  auto starts = [&](const char* prefix) { return permission.rfind(prefix, 0) == 0; };
  auto reads = [&] {
    auto dot = permission.rfind('.');
    auto verb = permission.substr(dot + 1);
    return verb == "get" || verb == "list";
  };
  if (role == "roles/owner" || role == "roles/editor" || role == "roles/container.admin")
    return starts("container.");
  if (role == "roles/container.clusterAdmin")
    return starts("container.clusters.") || starts("container.operations.");
  if (role == "roles/container.viewer") return starts("container.") && reads();
  if (role == "roles/container.clusterViewer") return starts("container.clusters.") && reads();
  return false;
}

bool names_principal(const json& members, const WiIdentity& who) {
  const std::string pool =
      "principalSet://iam.googleapis.com/projects/" + project_number(who.project) +
      "/locations/global/workloadIdentityPools/" + who.project + ".svc.id.goog";
  for (const auto& m : members) {
    if (!m.is_string()) continue;
    const auto& s = m.get_ref<const std::string&>();
    if (s == who.principal || s == pool + "/namespace/" + who.ns || s == pool + "/*") return true;
  }
  return false;
}

}  // namespace

void FakeGcp::Impl::authorize(const Call& call, const std::string& token) const {
  auto who = wi_tokens.find(token);
  if (who == wi_tokens.end()) return;  // the user's own token
  const std::string project =
      call.seg.size() >= 3 && call.seg[1] == "projects" ? project_id(call.seg[2]) : std::string();
  std::optional<Check> check;
  if (call.service == "container" && !project.empty()) check = gke_check(call, project);

  if (check) {
    bool held = false;
    if (const auto* policy = find_policy(project)) {
      for (const auto& b : policy->bindings) {
        if (!names_principal(b.value("members", json::array()), who->second)) continue;
        const auto role = b.value("role", std::string());
        bool grants = predefined_grants(role, check->permission);
        auto r = roles.find(role);
        if (r != roles.end() && !r->second.value("deleted", false)) {
          auto perms = r->second.value("includedPermissions", json::array());
          grants = std::find(perms.begin(), perms.end(), check->permission) != perms.end();
        }
        if (!grants) continue;
        if (b.contains("condition") && b["condition"].is_object()) {
          auto holds = evaluate_condition(b["condition"].value("expression", std::string()),
                                          check->resource);
          if (!holds || !*holds) continue;
        }
        held = true;
        break;
      }
    }
    if (held) return;
    RpcError e = rpc_error(
        403, "Required \"" + check->permission + "\" permission(s) for \"" + check->shown + "\".");
    e.details = json::array(
        {{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
          {"reason", "IAM_PERMISSION_DENIED"},
          {"domain", "container.googleapis.com"},
          {"metadata", {{"permission", check->permission}, {"resource", check->shown}}}}});
    throw e;
  }

  // Outside the table: denied, whatever the policy says (docs/fakes.md).
  std::string resource;
  for (std::size_t i = 1; i < call.seg.size(); ++i) resource += (i > 1 ? "/" : "") + call.seg[i];
  const auto permission = route_permission(call);
  RpcError e = rpc_error(403, call.service == "cloudresourcemanager"
                                  ? std::string("The caller does not have permission")
                                  : "Permission '" + permission + "' denied on resource '" +
                                        resource + "' (or it may not exist).");
  e.details = json::array({{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                            {"reason", "IAM_PERMISSION_DENIED"},
                            {"domain", call.service + ".googleapis.com"},
                            {"metadata", {{"permission", permission}, {"resource", resource}}}}});
  throw e;
}

}  // namespace kinetic::fakes
