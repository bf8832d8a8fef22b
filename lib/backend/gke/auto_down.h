// Idle auto-down (docs/cost.md): `kinetic up --auto-down 2h` makes the cluster delete itself once
// no kinetic job has been pending or running for two hours, with the user's laptop closed.
//
// In the cluster, in its own namespace (kAutoDownNamespace): a CronJob (every 5 minutes, in the
// default pool) runs lib/backend/gke/auto_down.py, embedded, as a ServiceAccount of its own whose
// ClusterRole lets it list Jobs, JobSets, pods and events in every namespace and whose Role lets
// it read and patch one ConfigMap, where the script records what it decided (state, idle_since,
// deletes_at) and `status` reads it. In the project: a custom role
// holding only container.clusters.delete, granted to that ServiceAccount's Workload Identity
// principal on a condition naming this cluster, so it may delete this cluster and nothing else.
// `up` installs and grants; `up --auto-down off` and `down` remove and revoke.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/auto_down_state.h"
#include "backend/gke/provisioner.h"
#include "backend/gke/session.h"
#include "k8s/client.h"

namespace kinetic::gke {

// The CronJob, ClusterRole, Role, their bindings and the ConfigMap; the ServiceAccount is per
// cluster (below).
inline constexpr const char* kAutoDownName = "kinetic-auto-down";
// Where they live (made by `up --auto-down`): a namespace of their own, where nothing else of
// kinetic's creates pods, so no one able to create pods in the jobs' namespace (a pipeline's
// runner) can run one as auto-down's account.
inline constexpr const char* kAutoDownNamespace = "kinetic-system";
// The namespaces whose pods, Jobs and JobSets do not keep the cluster up, as the script reads them
// (a trailing '*' matches any rest): Kubernetes' and GKE's own (kube-system, gke-managed-*,
// gmp-system, ...: always running), the JobSet and Kueue controllers kinetic installs, and
// auto-down's own.
inline constexpr const char* kAutoDownIgnored =
    "kube-*,gke-*,gmp-*,jobset-system,kueue-system,kinetic-system";
inline constexpr const char* kAutoDownRoleId = "kineticAutoDown";
inline constexpr const char* kResourceManagerService = "cloudresourcemanager.googleapis.com";
inline constexpr const char* kAutoDownSchedule = "*/5 * * * *";
// The script, as embedded (comments dropped).
std::string_view auto_down_source();

// "kinetic-auto-down-CLUSTER": the principal is the namespace's service account of that name in
// the project's workload pool, which every cluster of the project shares, so the name carries the
// cluster's: another cluster's auto-down is another principal.
std::string auto_down_service_account(const std::string& cluster);
// principal://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/
// PROJECT.svc.id.goog/subject/ns/NS/sa/SA
std::string auto_down_principal(const Target& target, const std::string& project_number);
// The IAM condition's title, one per cluster ("kinetic auto-down of CLUSTER in LOCATION").
std::string auto_down_condition_title(const Target& target);
// `resource.name == "projects/P/locations/L/clusters/C"`.
std::string auto_down_condition(const Target& target);

// The in-cluster objects, in the order they are applied (golden: tests/golden/manifests/).
std::vector<nlohmann::ordered_json> auto_down_manifests(const Target& target, long idle_seconds);

// Grants the role (creating it if need be) and applies the objects; PROJECT_NUMBER names the
// principal. Reports each step through RECORD.
void install_auto_down(const Session& session, k8s::Client& kube, const std::string& project_number,
                       long idle_seconds, const std::function<void(ClusterChange)>& record);
// Deletes the objects (KUBE may be null when the cluster is gone) and revokes the grant, if any
// (none can exist while the Resource Manager API is off).
void remove_auto_down(const Session& session, k8s::Client* kube,
                      const std::function<void(ClusterChange)>& record);

// Null when auto-down is not installed (in kAutoDownNamespace, or by an older kinetic in the job
// namespace LEGACY_NS).
std::optional<AutoDownState> read_auto_down(k8s::Client& kube, const std::string& legacy_ns);
std::optional<AutoDownState> read_auto_down(const Session& session);
}  // namespace kinetic::gke
