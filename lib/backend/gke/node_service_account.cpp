#include "backend/gke/node_service_account.h"

#include "gcp/gke.h"
#include "gcp/project_iam.h"
#include "gcp/service_accounts.h"
#include "gcp/service_usage.h"

namespace kinetic::gke {

namespace {

// A cluster of the project other than the target whose pools run as EMAIL ("" when none).
std::string other_cluster_using(const Session& session, const std::string& email) {
  const Target& t = session.target;
  gcp::GkeClient gke(*session.cloud, session.endpoint("container"), session.poll);
  for (const auto& c : gke.list_clusters(t.project, "-")) {
    if (c.name == t.cluster && c.location == t.location) continue;
    for (const auto& pool : c.raw.value("nodePools", nlohmann::json::array()))
      if (pool.value("config", nlohmann::json::object()).value("serviceAccount", "") == email)
        return c.name + " (" + c.location + ")";
  }
  return "";
}

}  // namespace

std::string node_service_account(const std::string& project) {
  return gcp::service_account_email(project, kNodeServiceAccountId);
}

const std::vector<std::string>& node_roles() {
  static const std::vector<std::string> roles = {"roles/container.defaultNodeServiceAccount",
                                                 "roles/artifactregistry.reader",
                                                 "roles/serviceusage.serviceUsageConsumer"};
  return roles;
}

void ensure_node_service_account(const Session& session,
                                 const std::function<void(ClusterChange)>& record) {
  const Target& t = session.target;
  const std::string email = node_service_account(t.project);
  gcp::ServiceAccountsClient accounts(*session.cloud, session.endpoint("iam"));
  const bool created = accounts.ensure(t.project, kNodeServiceAccountId, "kinetic nodes",
                                       "Runs the nodes of kinetic's GKE clusters (kinetic up)");
  record({"node service account", email, created ? "created" : "exists"});
  gcp::ProjectIamClient iam(*session.cloud, session.endpoint("cloudresourcemanager"),
                            session.endpoint("iam"), session.poll);
  bool granted = false;
  for (const auto& role : node_roles())
    granted = iam.grant(t.project, {role, "serviceAccount:" + email, {}}) || granted;
  record({"node access", "logs, metrics, image pulls and streaming for " + email,
          granted ? "granted" : "exists"});
}

void remove_node_service_account(const Session& session,
                                 const std::function<void(ClusterChange)>& record) {
  const Target& t = session.target;
  // Without IAM and Resource Manager on, no `up` made the account or its grants.
  gcp::ServiceUsageClient services(*session.cloud, session.endpoint("serviceusage"));
  if (!services.disabled(t.project, {"iam.googleapis.com", "cloudresourcemanager.googleapis.com"})
           .empty())
    return;
  const std::string email = node_service_account(t.project);
  if (auto other = other_cluster_using(session, email); !other.empty()) {
    record({"node service account", email + " (cluster " + other + " runs nodes as it)", "kept"});
    return;
  }
  gcp::ProjectIamClient iam(*session.cloud, session.endpoint("cloudresourcemanager"),
                            session.endpoint("iam"), session.poll);
  bool revoked = false;
  for (const auto& role : node_roles())
    revoked = iam.revoke_member(t.project, role, "serviceAccount:" + email) || revoked;
  if (revoked) record({"node access", "of " + email, "revoked"});
  gcp::ServiceAccountsClient accounts(*session.cloud, session.endpoint("iam"));
  if (accounts.remove(t.project, email)) record({"node service account", email, "deleted"});
}

}  // namespace kinetic::gke
