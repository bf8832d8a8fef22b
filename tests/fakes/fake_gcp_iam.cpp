// FakeGcp: Cloud Resource Manager v1 project IAM policies (getIamPolicy, setIamPolicy with etags,
// policy versions and conditional bindings) and IAM v1 custom roles (create, get, list, patch,
// soft delete, undelete; permissions.queryTestablePermissions, which `gcloud iam roles create`
// asks first). kinetic grants its in-cluster auto-down job a one-permission custom role on the
// project policy, conditioned on its cluster's name, and fake_gcp_authz.cpp enforces what these
// policies say for Workload Identity tokens.
#include <algorithm>
#include <regex>

#include "fakes/fake_gcp_internal.h"

namespace kinetic::fakes {

using namespace gcp_detail;

namespace {

constexpr const char* kVersionsHelp =
    "For more information, please refer to https://cloud.google.com/iam/docs/policies#versions.";
constexpr const char* kConcurrentChange =
    "There were concurrent policy changes. Please retry the whole read-modify-write with "
    "exponential backoff.";
constexpr const char* kDefaultOwner = "user:test@example.com";

// An IAM etag is a proto `bytes` field: its JSON form is base64, and the API reads either
// alphabet. gcloud (apitools) writes bytes back URL-safe, so a policy read with "+" or "/" in its
// etag comes back with "-" or "_": the same etag.
std::string etag_bytes(std::string etag) {
  for (char& c : etag) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (!etag.empty() && etag.back() == '=') etag.pop_back();
  return etag;
}

bool same_etag(const std::string& a, const std::string& b) {
  return etag_bytes(a) == etag_bytes(b);
}

bool has_condition(const json& binding) {
  auto it = binding.find("condition");
  return it != binding.end() && !it->is_null();
}

bool conditional(const json& bindings) {
  return std::any_of(bindings.begin(), bindings.end(), has_condition);
}

// Member types a project policy takes (allUsers and allAuthenticatedUsers are refused on
// projects, as Resource Manager does).
bool valid_member(const std::string& m) {
  static const char* prefixes[] = {"user:",    "serviceAccount:", "group:",         "domain:",
                                   "deleted:", "principal://",    "principalSet://"};
  for (const char* p : prefixes) {
    std::string_view pv(p);
    if (m.size() > pv.size() && m.compare(0, pv.size(), pv) == 0) return true;
  }
  return false;
}

std::set<std::string> parse_mask(const std::string& mask) {
  std::set<std::string> paths;
  std::size_t pos = 0;
  while (pos <= mask.size()) {
    auto comma = mask.find(',', pos);
    if (comma == std::string::npos) comma = mask.size();
    auto path = mask.substr(pos, comma - pos);
    path.erase(0, path.find_first_not_of(' '));
    path.erase(path.find_last_not_of(' ') + 1);
    if (path == "audit_configs") path = "auditConfigs";
    if (path == "included_permissions") path = "includedPermissions";
    if (!path.empty()) paths.insert(path);
    pos = comma + 1;
  }
  return paths;
}

// The permissions the fake knows, for queryTestablePermissions (gcloud warns about those whose
// API is disabled). A role may hold others of the right form: the real catalog is far larger.
const std::vector<std::string>& permission_catalog() {
  static const std::vector<std::string> all = {"container.clusters.connect",
                                               "container.clusters.create",
                                               "container.clusters.delete",
                                               "container.clusters.get",
                                               "container.clusters.getCredentials",
                                               "container.clusters.list",
                                               "container.clusters.update",
                                               "container.operations.get",
                                               "container.operations.list",
                                               "iam.roles.create",
                                               "iam.roles.delete",
                                               "iam.roles.get",
                                               "iam.roles.list",
                                               "iam.roles.undelete",
                                               "iam.roles.update",
                                               "resourcemanager.projects.get",
                                               "resourcemanager.projects.getIamPolicy",
                                               "resourcemanager.projects.setIamPolicy"};
  return all;
}

bool valid_permission(const std::string& p) {
  static const std::regex re(R"([a-z][a-zA-Z0-9]*\.[a-zA-Z0-9]+\.[a-zA-Z0-9]+)");
  return std::regex_match(p, re);
}

bool valid_role_id(const std::string& id) {
  static const std::regex re(R"([a-zA-Z0-9_\.]{3,64})");
  return std::regex_match(id, re);
}

const std::set<std::string>& stages() {
  static const std::set<std::string> all = {"ALPHA", "BETA", "GA", "DEPRECATED", "DISABLED", "EAP"};
  return all;
}

}  // namespace

// ---- shared ------------------------------------------------------------------------------------

std::string FakeGcp::Impl::project_id(const std::string& project) const {
  if (project.empty() || !std::all_of(project.begin(), project.end(), ::isdigit)) return project;
  auto matches = [&](const std::string& id) {
    return id != project && project_number(id) == project;
  };
  for (auto& [id, p] : policies)
    if (matches(id)) return id;
  for (auto& [key, c] : clusters)
    if (matches(c.project)) return c.project;
  for (auto& [id, set] : enabled)
    if (matches(id)) return id;
  return project;
}

std::string FakeGcp::Impl::new_etag() {
  // Opaque to clients; shaped like IAM's ("BwY..."): 8 bytes, the last four a sequence so that
  // no two etags of this fake are equal.
  std::uint64_t seq = ++etag_sequence;
  std::string bytes = "\x07\x06";
  bytes.push_back(static_cast<char>(rng() & 0xff));
  bytes.push_back(static_cast<char>(rng() & 0xff));
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(seq >> shift));
  return base64_encode(bytes);
}

FakeGcp::Impl::ProjectPolicy& FakeGcp::Impl::policy_of(const std::string& project) {
  auto id = project_id(project);
  auto it = policies.find(id);
  if (it != policies.end()) return it->second;
  ProjectPolicy p;
  p.bindings = json::array({{{"role", "roles/owner"}, {"members", json::array({kDefaultOwner})}}});
  p.etag = new_etag();
  return policies[id] = std::move(p);
}

const FakeGcp::Impl::ProjectPolicy* FakeGcp::Impl::find_policy(const std::string& project) const {
  auto it = policies.find(project_id(project));
  return it == policies.end() ? nullptr : &it->second;
}

json FakeGcp::Impl::policy_json(const ProjectPolicy& p) const {
  // A policy is version 3 exactly when it holds a conditional binding (IAM answers version 1
  // otherwise, whatever was asked or set).
  json j = {{"version", conditional(p.bindings) ? 3 : 1}, {"etag", p.etag}};
  if (!p.bindings.empty()) j["bindings"] = p.bindings;
  if (!p.audit_configs.empty()) j["auditConfigs"] = p.audit_configs;
  return j;
}

// ---- Cloud Resource Manager v1 --------------------------------------------------------------

void FakeGcp::Impl::cloudresourcemanager(Call& call, httplib::Response& res) {
  const auto& s = call.seg;
  if (s.size() != 3 || s[0] != "v1" || s[1] != "projects") throw not_found("Method not found.");
  const std::string project = project_id(s[2]);

  if (call.match({"v1", "projects", "*"}, "GET")) {
    return send_json(res, {{"projectNumber", project_number(project)},
                           {"projectId", project},
                           {"lifecycleState", "ACTIVE"},
                           {"name", project},
                           {"createTime", "2024-01-01T00:00:00.000Z"}});
  }

  if (call.match({"v1", "projects", "*"}, "POST", "getIamPolicy")) {
    int requested = 0;
    if (call.body.contains("options")) {
      const auto& options = call.body["options"];
      if (!options.is_object()) throw invalid_argument("Invalid value at 'options'.");
      requested = options.value("requestedPolicyVersion", 0);
    }
    if (requested != 0 && requested != 1 && requested != 3)
      throw invalid_argument("Invalid requested policy version (" + std::to_string(requested) +
                             "). Valid values are 0, 1, and 3. " + kVersionsHelp);
    auto& p = policy_of(project);
    json out = policy_json(p);
    // A client that does not ask for version 3 could not keep the conditions on its write.
    if (out["version"] == 3 && requested < 3)
      throw invalid_argument("Requested policy version (" + std::to_string(std::max(requested, 1)) +
                             ") cannot be less than the existing policy version (3). " +
                             kVersionsHelp);
    send_json(res, out);
    // A pending concurrent writer changes the policy right after this read was answered.
    auto it =
        std::find_if(policy_interleaves.begin(), policy_interleaves.end(),
                     [&](const PolicyInterleave& x) { return project_id(x.project) == project; });
    if (it == policy_interleaves.end()) return;
    bool added = false;
    for (auto& b : p.bindings) {
      if (b.value("role", "") != it->role || has_condition(b)) continue;
      auto& members = b["members"];
      if (std::find(members.begin(), members.end(), it->member) == members.end())
        members.push_back(it->member);
      added = true;
      break;
    }
    if (!added) p.bindings.push_back({{"role", it->role}, {"members", json::array({it->member})}});
    p.etag = new_etag();
    policy_interleaves.erase(it);
    return;
  }

  if (call.match({"v1", "projects", "*"}, "POST", "setIamPolicy")) {
    if (!call.body.contains("policy") || !call.body["policy"].is_object())
      throw invalid_argument("Request contains an invalid argument.");
    const json& in = call.body["policy"];
    auto& p = policy_of(project);
    std::set<std::string> mask = {"bindings", "etag"};  // Resource Manager's default mask
    if (call.body.contains("updateMask")) {
      mask = parse_mask(call.body["updateMask"].get<std::string>());
      for (auto& path : mask) {
        if (path != "bindings" && path != "etag" && path != "auditConfigs" && path != "version")
          throw invalid_argument("Invalid update mask path: \"" + path + "\".");
      }
    }
    // Without an etag the write is blind (IAM allows it, conditions and all); with one it must
    // be the current policy's.
    const bool has_etag =
        in.contains("etag") && in["etag"].is_string() && !in["etag"].get<std::string>().empty();
    if (has_etag && !same_etag(in["etag"].get<std::string>(), p.etag))
      throw aborted(kConcurrentChange);
    const int version = in.value("version", 0);
    if (version != 0 && version != 1 && version != 3)
      throw invalid_argument("Invalid policy version (" + std::to_string(version) +
                             "). Valid values are 0, 1, and 3. " + kVersionsHelp);

    json bindings = json::array();
    if (in.contains("bindings")) {
      if (!in["bindings"].is_array()) throw invalid_argument("Invalid value at 'policy.bindings'.");
      for (const auto& x : in["bindings"]) {
        if (!x.is_object() || !x.contains("role") || !x["role"].is_string() ||
            x["role"].get<std::string>().empty())
          throw invalid_argument("A role binding must name a role.");
        const auto role = x["role"].get<std::string>();
        // Predefined roles are not modelled one by one: any roles/ name is taken. A custom role
        // must be this project's and live; a deleted one only stays where it was already bound
        // (IAM keeps such bindings, inert, and a read-modify-write sends them back).
        bool known = role.size() > 6 && role.rfind("roles/", 0) == 0;
        static const std::regex custom(R"(projects/([^/]+)/roles/([^/]+))");
        std::smatch m;
        if (std::regex_match(role, m, custom) && project_id(m[1]) == project) {
          auto r = roles.find("projects/" + project + "/roles/" + m[2].str());
          if (r != roles.end()) {
            const bool bound =
                std::any_of(p.bindings.begin(), p.bindings.end(),
                            [&](const json& b) { return b.value("role", "") == role; });
            known = !r->second.value("deleted", false) || bound;
            // A role IAM has not propagated yet (unseen_roles_for_next).
            if (known && !bound && unseen_role_refusals > 0) {
              --unseen_role_refusals;
              known = false;
            }
          }
        }
        if (!known)
          throw invalid_argument("Role (" + role + ") does not exist in the resource's hierarchy.");
        json members = json::array();
        if (x.contains("members")) {
          if (!x["members"].is_array())
            throw invalid_argument("Invalid value at 'policy.bindings.members'.");
          for (const auto& member : x["members"]) {
            if (!member.is_string() || !valid_member(member.get<std::string>()))
              throw invalid_argument("Policy members must be of the form \"<type>:<value>\".");
            if (std::find(members.begin(), members.end(), member) == members.end())
              members.push_back(member);
          }
        }
        if (members.empty())
          throw invalid_argument("Policy binding for role (" + role +
                                 ") must have at least one member.");
        json stored = {{"role", role}, {"members", members}};
        if (has_condition(x)) {
          const auto& c = x["condition"];
          if (!c.is_object() || !c.contains("expression") || !c["expression"].is_string() ||
              c["expression"].get<std::string>().empty())
            throw invalid_argument("Condition expression must be set.");
          if (!c.contains("title") || !c["title"].is_string() ||
              c["title"].get<std::string>().empty())
            throw invalid_argument("Condition title must be set.");
          json cond = {{"expression", c["expression"]}, {"title", c["title"]}};
          if (c.contains("description") && c["description"].is_string() &&
              !c["description"].get<std::string>().empty())
            cond["description"] = c["description"];
          stored["condition"] = cond;
        }
        // Two bindings of one role and one condition are one binding.
        auto same = std::find_if(bindings.begin(), bindings.end(), [&](const json& b) {
          return b["role"] == stored["role"] &&
                 b.value("condition", json()) == stored.value("condition", json());
        });
        if (same == bindings.end()) {
          bindings.push_back(std::move(stored));
        } else {
          for (auto& member : stored["members"]) {
            auto& ms = (*same)["members"];
            if (std::find(ms.begin(), ms.end(), member) == ms.end()) ms.push_back(member);
          }
        }
      }
    }
    if (conditional(bindings) && version != 3)
      throw invalid_argument("Policy version (" + std::to_string(std::max(version, 1)) +
                             ") cannot hold conditional role bindings: set version 3. " +
                             kVersionsHelp);
    if (has_etag && version < 3 && conditional(p.bindings))
      throw invalid_argument("Specified policy version (" + std::to_string(std::max(version, 1)) +
                             ") cannot be less than the existing policy version (3). " +
                             kVersionsHelp);
    if (mask.count("bindings")) p.bindings = std::move(bindings);
    if (mask.count("auditConfigs")) p.audit_configs = in.value("auditConfigs", json::array());
    p.etag = new_etag();
    return send_json(res, policy_json(p));
  }
  throw not_found("Method not found.");
}

// ---- IAM v1: custom roles ---------------------------------------------------------------------

void FakeGcp::Impl::iam(Call& call, httplib::Response& res) {
  const auto& s = call.seg;

  if (call.match({"v1", "permissions"}, "POST", "queryTestablePermissions")) {
    // "//cloudresourcemanager.googleapis.com/projects/P"; gcloud names the service by the host of
    // its endpoint override ("//127.0.0.1:PORT/projects/P"), so any host is taken.
    auto resource = call.body.value("fullResourceName", std::string());
    auto at = resource.find("/projects/");
    if (resource.rfind("//", 0) != 0 || at == std::string::npos || at + 10 == resource.size() ||
        resource.find('/', at + 10) != std::string::npos)
      throw invalid_argument("Invalid full resource name: \"" + resource + "\".");
    auto project = project_id(resource.substr(at + 10));
    json permissions = json::array();
    for (auto& name : permission_catalog()) {
      json perm = {{"name", name}, {"stage", "GA"}};
      auto api = name.substr(0, name.find('.'));
      if (api == "resourcemanager") api = "cloudresourcemanager";
      if (!service_enabled(project, api + ".googleapis.com")) perm["apiDisabled"] = true;
      permissions.push_back(perm);
    }
    return send_json(res, {{"permissions", permissions}});
  }

  if (s.size() >= 4 && s[0] == "v1" && s[1] == "projects" && s[3] == "serviceAccounts")
    return service_accounts_api(call, res);
  if (s.size() < 4 || s[0] != "v1" || s[1] != "projects" || s[3] != "roles")
    throw not_found("Method not found.");
  const std::string project = project_id(s[2]);
  const std::string parent = "projects/" + project;

  auto find_role = [&](const std::string& id) -> json& {
    auto it = roles.find(parent + "/roles/" + id);
    if (it == roles.end())
      throw not_found("The role named " + parent + "/roles/" + id + " was not found.");
    return it->second;
  };
  auto check_etag = [&](const json& role, const std::string& etag) {
    if (!etag.empty() && !same_etag(etag, role["etag"].get<std::string>()))
      throw aborted(kConcurrentChange);
  };
  // Copies the mutable FIELD of IN onto ROLE; a field in the mask but absent from IN is cleared.
  auto set_field = [&](json& role, const json& in, const std::string& field) {
    if (field == "stage") {
      auto stage = in.value("stage", std::string("ALPHA"));
      if (!stages().count(stage))
        throw invalid_argument(
            "Invalid value at 'role.stage' "
            "(type.googleapis.com/google.iam.admin.v1.Role.RoleLaunchStage), \"" +
            stage + "\"");
      // ALPHA is the enum's zero: proto3 JSON leaves it out (gcloud puts it back for display).
      if (stage == "ALPHA")
        role.erase("stage");
      else
        role["stage"] = stage;
    } else if (field == "includedPermissions") {
      json perms = json::array();
      for (const auto& p : in.value("includedPermissions", json::array())) {
        if (!p.is_string() || !valid_permission(p.get<std::string>()))
          throw invalid_argument("Permission " + (p.is_string() ? p.get<std::string>() : p.dump()) +
                                 " is not valid.");
        if (std::find(perms.begin(), perms.end(), p) == perms.end()) perms.push_back(p);
      }
      if (perms.empty())
        role.erase("includedPermissions");
      else
        role["includedPermissions"] = perms;
    } else if (field == "title" || field == "description") {
      auto value = in.value(field, std::string());
      if (value.empty())
        role.erase(field);
      else
        role[field] = value;
    } else {
      throw invalid_argument("Invalid update mask path: \"" + field + "\".");
    }
  };
  const std::vector<std::string> mutable_fields = {"title", "description", "includedPermissions",
                                                   "stage"};

  if (call.match({"v1", "projects", "*", "roles"}, "POST")) {
    auto id = call.body.value("roleId", std::string());
    if (!valid_role_id(id))
      throw invalid_argument("The role_id (" + id +
                             ") is not valid: it must match [a-zA-Z0-9_\\.]{3,64}.");
    auto name = parent + "/roles/" + id;
    auto existing = roles.find(name);
    if (existing != roles.end()) {
      if (existing->second.value("deleted", false))
        throw failed_precondition("You can't create a role with role_id (" + id +
                                  ") where there is an existing role with that role_id in a "
                                  "deleted state.");
      throw already_exists("A role named " + id + " in " + parent + " already exists.");
    }
    json in = call.body.value("role", json::object());
    if (!in.is_object()) throw invalid_argument("Invalid value at 'role'.");
    json role = {{"name", name}};
    for (auto& f : mutable_fields) set_field(role, in, f);
    role["etag"] = new_etag();
    roles[name] = role;
    return send_json(res, role);
  }
  if (call.match({"v1", "projects", "*", "roles"}, "GET")) {
    const bool show_deleted = call.param("showDeleted") == "true";
    const bool full = call.param("view") == "FULL";
    json list = json::array();
    for (auto& [name, role] : roles) {
      if (name.rfind(parent + "/roles/", 0) != 0) continue;
      if (role.value("deleted", false) && !show_deleted) continue;
      json r = role;
      if (!full) r.erase("includedPermissions");
      list.push_back(r);
    }
    json out = json::object();
    if (!list.empty()) out["roles"] = list;
    return send_json(res, out);
  }
  if (call.match({"v1", "projects", "*", "roles", "*"}, "GET"))
    return send_json(res, find_role(s[4]));
  if (call.match({"v1", "projects", "*", "roles", "*"}, "PATCH")) {
    auto& role = find_role(s[4]);
    if (role.value("deleted", false))
      throw failed_precondition("You can't update role_id (" + s[4] + ") as it is deleted.");
    check_etag(role, call.body.value("etag", std::string()));
    auto mask = parse_mask(call.param("updateMask"));
    json updated = role;
    if (mask.empty()) {
      for (auto& f : mutable_fields) {
        if (call.body.contains(f)) set_field(updated, call.body, f);
      }
    } else {
      for (auto& f : mask) set_field(updated, call.body, f);
    }
    updated["etag"] = new_etag();
    role = updated;
    return send_json(res, role);
  }
  if (call.match({"v1", "projects", "*", "roles", "*"}, "DELETE")) {
    auto& role = find_role(s[4]);
    if (role.value("deleted", false))
      throw failed_precondition("You can't delete role_id (" + s[4] +
                                ") as it is already deleted.");
    check_etag(role, call.param("etag"));
    role["deleted"] = true;
    role["etag"] = new_etag();
    return send_json(res, role);
  }
  if (call.match({"v1", "projects", "*", "roles", "*"}, "POST", "undelete")) {
    auto& role = find_role(s[4]);
    if (!role.value("deleted", false))
      throw failed_precondition("You can't undelete role_id (" + s[4] + ") as it is not deleted.");
    check_etag(role, call.body.value("etag", std::string()));
    role.erase("deleted");
    role["etag"] = new_etag();
    return send_json(res, role);
  }
  throw not_found("Method not found.");
}

// ---- IAM v1: service accounts ------------------------------------------------------------------

// create (409 when the id is taken), get, list and delete. A deleted account is gone here (IAM
// keeps it undeletable for 30 days, which no kinetic path uses).
void FakeGcp::Impl::service_accounts_api(Call& call, httplib::Response& res) {
  const auto& s = call.seg;
  const std::string project = project_id(s[2]);
  if (call.match({"v1", "projects", "*", "serviceAccounts"}, "POST")) {
    const std::string id = call.body.value("accountId", std::string());
    static const std::regex valid(R"([a-z]([-a-z0-9]{4,28}[a-z0-9]))");
    if (!std::regex_match(id, valid))
      throw invalid_argument("Invalid account_id (" + id +
                             "): it must be 6 to 30 lowercase letters, digits or hyphens, "
                             "starting with a letter.");
    const std::string email = id + "@" + project + ".iam.gserviceaccount.com";
    if (service_accounts.count(email))
      throw already_exists("Service account " + id + " already exists within project projects/" +
                           project + ".");
    json in = call.body.value("serviceAccount", json::object());
    std::string unique_id = "1";  // 21 decimal digits, as IAM's
    while (unique_id.size() < 21) unique_id += static_cast<char>('0' + rng() % 10);
    json account = {{"name", "projects/" + project + "/serviceAccounts/" + email},
                    {"projectId", project},
                    {"uniqueId", unique_id},
                    {"email", email},
                    {"etag", "MDEwMjE5MjA="}};
    for (const char* field : {"displayName", "description"})
      if (in.contains(field) && in[field].is_string()) account[field] = in[field];
    account["oauth2ClientId"] = account["uniqueId"];
    service_accounts[email] = account;
    return send_json(res, account);
  }
  if (call.match({"v1", "projects", "*", "serviceAccounts"}, "GET")) {
    json list = json::array();
    for (auto& [email, account] : service_accounts)
      if (account["projectId"] == project) list.push_back(account);
    json out = json::object();
    if (!list.empty()) out["accounts"] = list;
    return send_json(res, out);
  }
  if (s.size() != 5) throw not_found("Method not found.");
  auto it = service_accounts.find(s[4]);  // by email; "-" stands for the project in the path
  if (it == service_accounts.end()) throw not_found("Unknown service account");
  if (call.match({"v1", "projects", "*", "serviceAccounts", "*"}, "GET"))
    return send_json(res, it->second);
  if (call.match({"v1", "projects", "*", "serviceAccounts", "*"}, "DELETE")) {
    service_accounts.erase(it);
    return send_json(res, json::object());
  }
  throw not_found("Method not found.");
}

// ---- public API ---------------------------------------------------------------------------------

std::optional<nlohmann::json> FakeGcp::service_account(const std::string& email) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->service_accounts.find(email);
  if (it == impl_->service_accounts.end()) return std::nullopt;
  return it->second;
}

nlohmann::json FakeGcp::project_iam_policy(const std::string& project) const {
  std::lock_guard lock(impl_->mu);
  return impl_->policy_json(impl_->policy_of(project));
}

std::optional<nlohmann::json> FakeGcp::custom_role(const std::string& project,
                                                   const std::string& id) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->roles.find("projects/" + impl_->project_id(project) + "/roles/" + id);
  if (it == impl_->roles.end()) return std::nullopt;
  return it->second;
}

void FakeGcp::unseen_roles_for_next(int n) {
  std::lock_guard lock(impl_->mu);
  impl_->unseen_role_refusals = n;
}

void FakeGcp::concurrent_project_iam_change_after_next_get(const std::string& project,
                                                           const std::string& role,
                                                           const std::string& member) {
  std::lock_guard lock(impl_->mu);
  impl_->policy_interleaves.push_back({project, role, member});
}

}  // namespace kinetic::fakes
