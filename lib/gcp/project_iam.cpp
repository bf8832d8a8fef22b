// Project IAM client. Decisions:
// - The policy is read and written as version 3, so conditional bindings (ours and others')
//   survive the round trip; a set carries the etag it read, and a 409 ABORTED (another writer
//   in between) redoes the whole read-modify-write, as IAM asks.
// - setIamPolicy is a POST but replaying it is harmless: a replay after a success carries a
//   stale etag and fails 409, and the re-read finds the change made.
// - IAM is eventually consistent: for a while after a custom role is created, binding it
//   answers 400 "Role (...) does not exist in the resource's hierarchy." That answer is waited
//   out (the poll back-off, two minutes at most) rather than failing the first `up --auto-down`.
// - A custom role is matched by id; a deleted one is undeleted (its id cannot be reused for
//   weeks), and its permissions are set to exactly the ones asked.
#include "gcp/project_iam.h"

#include <algorithm>

#include "core/error.h"
#include "gcp/google_error.h"
#include "gcp/json_fields.h"

namespace kinetic::gcp {

using nlohmann::json;

namespace {

constexpr int kPolicyAttempts = 5;

http::Response post(http::Transport& transport, const std::string& url, const json& body) {
  http::Request req;
  req.method = "POST";
  req.url = url;
  req.headers = {{"Content-Type", "application/json"}};
  req.body = body.dump();
  req.idempotent = true;  // a read, or a write guarded by its etag (above)
  return transport.send(req);
}

// Whether BINDING's condition is titled TITLE; an empty TITLE matches a binding with none.
bool same_condition(const json& binding, const std::string& title) {
  const bool conditional = binding.contains("condition") && binding["condition"].is_object();
  if (title.empty()) return !conditional;
  return conditional && str(binding["condition"], "title") == title;
}

}  // namespace

ProjectIamClient::ProjectIamClient(http::Transport& transport, std::string crm, std::string iam,
                                   PollOptions poll)
    : transport_(transport), crm_(std::move(crm)), iam_(std::move(iam)), poll_(std::move(poll)) {
  while (!crm_.empty() && crm_.back() == '/') crm_.pop_back();
  while (!iam_.empty() && iam_.back() == '/') iam_.pop_back();
}

std::string ProjectIamClient::ensure_custom_role(const std::string& project,
                                                 const std::string& role_id,
                                                 const std::string& title,
                                                 const std::string& description,
                                                 const std::vector<std::string>& permissions) {
  const std::string name = "projects/" + project + "/roles/" + role_id;
  const std::string what = "creating the IAM role " + name;
  json role = {{"title", title},
               {"description", description},
               {"includedPermissions", permissions},
               {"stage", "GA"}};
  auto r = post(transport_, iam_ + "/v1/projects/" + project + "/roles",
                {{"roleId", role_id}, {"role", role}});
  if (ok(r.status)) return "created";
  if (r.status != 409) throw google_error(r.status, r.body, what);

  http::Request get;
  get.url = iam_ + "/v1/" + name;
  auto g = transport_.send(get);
  if (!ok(g.status)) throw google_error(g.status, g.body, "reading the IAM role " + name);
  json existing = parse_json(g, "reading the IAM role " + name, "IAM");
  bool changed = false;
  if (existing.value("deleted", false)) {
    auto u = post(transport_, iam_ + "/v1/" + name + ":undelete", json::object());
    if (!ok(u.status)) throw google_error(u.status, u.body, "undeleting the IAM role " + name);
    existing = parse_json(u, "undeleting the IAM role " + name, "IAM");
    changed = true;
  }
  std::vector<std::string> have;
  for (const auto& p : existing.value("includedPermissions", json::array()))
    if (p.is_string()) have.push_back(p.get<std::string>());
  std::vector<std::string> want = permissions;
  std::sort(have.begin(), have.end());
  std::sort(want.begin(), want.end());
  if (have != want) {
    http::Request patch;
    patch.method = "PATCH";
    patch.url = iam_ + "/v1/" + name + "?updateMask=includedPermissions";
    patch.headers = {{"Content-Type", "application/json"}};
    json body = {{"includedPermissions", permissions}};
    if (existing.contains("etag")) body["etag"] = existing["etag"];
    patch.body = body.dump();
    auto p = transport_.send(patch);
    if (!ok(p.status)) throw google_error(p.status, p.body, "updating the IAM role " + name);
    changed = true;
  }
  return changed ? "updated" : "exists";
}

bool ProjectIamClient::update_policy(const std::string& project, const std::string& what,
                                     const std::function<bool(json& bindings)>& edit,
                                     Backoff* unseen) {
  const std::string base = crm_ + "/v1/projects/" + project;
  for (int attempt = 1;; ++attempt) {
    auto r =
        post(transport_, base + ":getIamPolicy", {{"options", {{"requestedPolicyVersion", 3}}}});
    if (!ok(r.status)) throw google_error(r.status, r.body, what);
    json policy = parse_json(r, what, "Cloud Resource Manager");
    auto& bindings = policy["bindings"];
    if (!bindings.is_array()) bindings = json::array();
    if (!edit(bindings)) return false;
    policy["version"] = 3;  // conditional bindings (ours and others') need it
    auto s = post(transport_, base + ":setIamPolicy", {{"policy", policy}});
    if (ok(s.status)) return true;
    if (s.status == 409 && attempt < kPolicyAttempts) continue;  // changed since read: redo
    // A custom role ("does not exist in the resource's hierarchy") or a service account ("does
    // not exist.") IAM has not propagated yet.
    if (unseen && s.status == 400 && s.body.find("does not exist") != std::string::npos &&
        unseen->wait()) {
      --attempt;  // not a conflict: the role or the member is not visible yet
      continue;
    }
    throw google_error(s.status, s.body, what);
  }
}

bool ProjectIamClient::grant(const std::string& project, const ConditionalGrant& grant) {
  PollOptions unseen_poll = poll_;
  unseen_poll.deadline = std::chrono::seconds(120);
  Backoff unseen(unseen_poll);
  return update_policy(
      project, "granting " + grant.role + " to " + grant.member + " in project " + project,
      [&](json& bindings) {
        json* target = nullptr;
        for (auto& b : bindings) {
          if (str(b, "role") != grant.role || !same_condition(b, grant.condition.title)) continue;
          for (const auto& m : b.value("members", json::array()))
            if (m.is_string() && m.get<std::string>() == grant.member) return false;
          if (!target) target = &b;
        }
        if (target) {
          (*target)["members"].push_back(grant.member);
          return true;
        }
        json binding = {{"role", grant.role}, {"members", json::array({grant.member})}};
        if (!grant.condition.title.empty())
          binding["condition"] = {{"title", grant.condition.title},
                                  {"description", grant.condition.description},
                                  {"expression", grant.condition.expression}};
        bindings.push_back(std::move(binding));
        return true;
      },
      &unseen);
}

bool ProjectIamClient::revoke(const std::string& project, const std::string& role,
                              const std::string& condition_title) {
  return update_policy(project,
                       "revoking " + role + " (" + condition_title + ") in project " + project,
                       [&](json& bindings) {
                         json kept = json::array();
                         for (const auto& b : bindings)
                           if (str(b, "role") != role || !same_condition(b, condition_title))
                             kept.push_back(b);
                         const bool found = kept.size() != bindings.size();
                         bindings = std::move(kept);
                         return found;
                       });
}

bool ProjectIamClient::revoke_member(const std::string& project, const std::string& role,
                                     const std::string& member) {
  return update_policy(project, "revoking " + role + " from " + member + " in project " + project,
                       [&](json& bindings) {
                         json kept = json::array();
                         bool found = false;
                         for (auto b : bindings) {
                           if (str(b, "role") == role && same_condition(b, "")) {
                             json members = json::array();
                             for (const auto& m : b.value("members", json::array())) {
                               if (m.is_string() && m.get<std::string>() == member)
                                 found = true;
                               else
                                 members.push_back(m);
                             }
                             if (members.empty()) continue;
                             b["members"] = members;
                           }
                           kept.push_back(b);
                         }
                         bindings = std::move(kept);
                         return found;
                       });
}

}  // namespace kinetic::gcp
