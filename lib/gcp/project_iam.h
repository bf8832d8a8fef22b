// A project's IAM: its allow policy (Cloud Resource Manager v1 projects.getIamPolicy and
// setIamPolicy, docs/gcp-api.md) and its custom roles (IAM v1 projects.roles). `kinetic up
// --auto-down` grants the cluster's auto-down principal a custom role holding only
// container.clusters.delete, on a condition naming the cluster; `down` revokes it
// (docs/cost.md, docs/security.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gcp/operations.h"
#include "http/transport.h"

namespace kinetic::gcp {

// An IAM condition (CEL). Bindings are told apart by role and condition title.
struct IamCondition {
  std::string title;
  std::string description;
  std::string expression;
};

struct ConditionalGrant {
  std::string role;  // "projects/P/roles/ID" or "roles/..."
  std::string member;
  IamCondition condition;  // no title: an unconditional binding
};

class ProjectIamClient {
 public:
  // CRM: the Cloud Resource Manager endpoint; IAM: the IAM endpoint (gcp/endpoints.h). POLL
  // paces the waits for a role IAM has not propagated yet.
  ProjectIamClient(http::Transport& transport, std::string crm, std::string iam, PollOptions poll);

  // Creates the custom role projects/PROJECT/roles/ROLE_ID holding exactly PERMISSIONS, or
  // brings an existing one (undeleting it if deleted) to them. Returns "created", "updated" or
  // "exists".
  std::string ensure_custom_role(const std::string& project, const std::string& role_id,
                                 const std::string& title, const std::string& description,
                                 const std::vector<std::string>& permissions);
  // Adds GRANT's member to the project's binding of its role with its condition (a
  // read-modify-write of the version 3 policy, redone when the etag shows another writer in
  // between, and after a wait while IAM says a custom role just created does not exist yet).
  // False when it was there already.
  bool grant(const std::string& project, const ConditionalGrant& grant);
  // Removes the project's bindings of ROLE whose condition is titled CONDITION_TITLE, whoever
  // they name. False when there was none.
  bool revoke(const std::string& project, const std::string& role,
              const std::string& condition_title);
  // Removes MEMBER from the project's unconditional binding of ROLE (the binding goes when it
  // has no member left). False when MEMBER was not in it.
  bool revoke_member(const std::string& project, const std::string& role,
                     const std::string& member);

 private:
  // One read-modify-write of PROJECT's policy (version 3): EDIT changes its bindings and says
  // whether anything changed (false: nothing is written, and this returns false). A 409 (another
  // writer in between) redoes it all; with UNSEEN, a 400 "does not exist" (a role or member IAM
  // has not propagated yet) is waited out on it. WHAT names the change in errors.
  bool update_policy(const std::string& project, const std::string& what,
                     const std::function<bool(nlohmann::json& bindings)>& edit,
                     Backoff* unseen = nullptr);

  http::Transport& transport_;
  std::string crm_;
  std::string iam_;
  PollOptions poll_;
};

}  // namespace kinetic::gcp
