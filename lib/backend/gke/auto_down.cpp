// Idle auto-down: the objects, the grant, and reading what the script recorded. Decisions:
// - The idle rule lives in the script alone (auto_down.py's decide()): `status` shows what it
//   recorded and never decides anything itself, so the two cannot disagree.
// - The period is the ConfigMap's idle_after, applied by `up` (server-side apply owns that key
//   only; the script patches the others), so changing it is one apply and the script reads it
//   at its next run.
// - The custom role stays when access is revoked: unbound it grants nothing, and a deleted
//   role's id cannot be reused for weeks, which would break the next `up --auto-down`.
#include "backend/gke/auto_down.h"

#include <ctime>

#include "backend/gke/cluster_access.h"
#include "backend/gke/data_access.h"
#include "backend/gke/script_pod.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "gcp/project_iam.h"
#include "gcp/service_usage.h"
#include "k8s/timestamp.h"

namespace kinetic {
extern const std::string_view kAutoDownSource;  // generated from auto_down.py
}

namespace kinetic::gke {

using ojson = nlohmann::ordered_json;

namespace {

constexpr ScriptObjects kAutoDownObjects{kAutoDownName};

std::optional<double> time_field(const nlohmann::json& data, const char* key) {
  auto it = data.find(key);
  if (it == data.end() || !it->is_string()) return std::nullopt;
  auto ts = k8s::parse_timestamp(it->get<std::string>());
  if (!ts) return std::nullopt;
  return static_cast<double>(ts->seconds);
}

std::string configmap_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/configmaps/" + kAutoDownName;
}

// "kube-*, gke-*, ...": what the check leaves out, as `up` says it.
std::string ignored_namespaces_text() {
  std::string text = kAutoDownIgnored;
  for (size_t at = text.find(','); at != std::string::npos; at = text.find(',', at + 2))
    text.replace(at, 1, ", ");
  return text;
}

// Deletes auto-down's objects in NS (the CronJob first, so no new run starts while its access
// goes), and with CLUSTER_WIDE its ClusterRole and binding. True when the CronJob was there.
bool remove_auto_down_objects(k8s::Client& kube, const std::string& ns, const std::string& cluster,
                              bool cluster_wide) {
  const std::string rbac = "/apis/rbac.authorization.k8s.io/v1/";
  const bool had = kube.remove("/apis/batch/v1/namespaces/" + ns + "/cronjobs/" + kAutoDownName);
  kube.remove("/api/v1/namespaces/" + ns + "/configmaps/" + kAutoDownName);
  kube.remove(rbac + "namespaces/" + ns + "/rolebindings/" + kAutoDownName);
  kube.remove(rbac + "namespaces/" + ns + "/roles/" + kAutoDownName);
  kube.remove("/api/v1/namespaces/" + ns + "/serviceaccounts/" +
              auto_down_service_account(cluster));
  if (cluster_wide) {
    kube.remove(rbac + "clusterrolebindings/" + kAutoDownName);
    kube.remove(rbac + "clusterroles/" + kAutoDownName);
  }
  return had;
}

}  // namespace

std::string_view auto_down_source() {
  return kAutoDownSource;
}

std::string auto_down_service_account(const std::string& cluster) {
  std::string name = kAutoDownName;  // appended in steps: GCC 12 warns wrongly on a + b + c
  name += '-';
  name += cluster;
  return name;
}

std::string auto_down_principal(const Target& t, const std::string& project_number) {
  return service_account_principal(project_number, t.project, kAutoDownNamespace,
                                   auto_down_service_account(t.cluster));
}

std::string auto_down_condition_title(const Target& t) {
  return "kinetic auto-down of " + t.cluster + " in " + t.location;
}

std::string auto_down_condition(const Target& t) {
  return "resource.name == \"projects/" + t.project + "/locations/" + t.location + "/clusters/" +
         t.cluster + "\"";
}

std::vector<ojson> auto_down_manifests(const Target& t, long idle_seconds) {
  std::vector<ojson> out;
  const std::string ns = kAutoDownNamespace;
  const std::string sa = auto_down_service_account(t.cluster);
  const ojson role_ref_group = "rbac.authorization.k8s.io";
  const ojson subjects =
      ojson::array({{{"kind", "ServiceAccount"}, {"name", sa}, {"namespace", ns}}});
  // A namespace of its own: whoever may create pods in the jobs' namespace (a pipeline's runner)
  // cannot run one as this account, which may delete the cluster.
  out.push_back({{"apiVersion", "v1"},
                 {"kind", "Namespace"},
                 {"metadata", {{"name", ns}, {"labels", kAutoDownObjects.labels()}}}});
  out.push_back({{"apiVersion", "v1"},
                 {"kind", "ServiceAccount"},
                 {"metadata", kAutoDownObjects.metadata(sa, ns)}});
  // What runs anywhere in the cluster (another context's jobs, anything else) keeps it: list
  // workloads in every namespace, never read a Secret or a log. Its one write: delete the
  // Deployment of a server stopped by --idle-stop, in whichever namespace the server runs
  // (docs/security.md "What auto-down may do").
  out.push_back(
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "ClusterRole"},
       {"metadata", {{"name", kAutoDownName}, {"labels", kAutoDownObjects.labels()}}},
       {"rules",
        ojson::array(
            {{{"apiGroups", {"batch"}}, {"resources", {"jobs"}}, {"verbs", {"list"}}},
             {{"apiGroups", {"jobset.x-k8s.io"}}, {"resources", {"jobsets"}}, {"verbs", {"list"}}},
             {{"apiGroups", {""}}, {"resources", {"pods", "events"}}, {"verbs", {"list"}}},
             {{"apiGroups", {"apps"}}, {"resources", {"deployments"}}, {"verbs", {"delete"}}}})}});
  out.push_back({{"apiVersion", "rbac.authorization.k8s.io/v1"},
                 {"kind", "ClusterRoleBinding"},
                 {"metadata", {{"name", kAutoDownName}, {"labels", kAutoDownObjects.labels()}}},
                 {"roleRef",
                  {{"apiGroup", role_ref_group}, {"kind", "ClusterRole"}, {"name", kAutoDownName}}},
                 {"subjects", subjects}});
  // Its record: get and patch one ConfigMap by name, in its own namespace.
  out.push_back({{"apiVersion", "rbac.authorization.k8s.io/v1"},
                 {"kind", "Role"},
                 {"metadata", kAutoDownObjects.metadata(kAutoDownName, ns)},
                 {"rules", ojson::array({{{"apiGroups", {""}},
                                          {"resources", {"configmaps"}},
                                          {"resourceNames", {kAutoDownName}},
                                          {"verbs", {"get", "patch"}}}})}});
  out.push_back(
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "RoleBinding"},
       {"metadata", kAutoDownObjects.metadata(kAutoDownName, ns)},
       {"roleRef", {{"apiGroup", role_ref_group}, {"kind", "Role"}, {"name", kAutoDownName}}},
       {"subjects", subjects}});
  out.push_back({{"apiVersion", "v1"},
                 {"kind", "ConfigMap"},
                 {"metadata", kAutoDownObjects.metadata(kAutoDownName, ns)},
                 {"data", {{"idle_after", std::to_string(idle_seconds)}}}});
  ojson env = ojson::array({{{"name", "KINETIC_PROJECT"}, {"value", t.project}},
                            {{"name", "KINETIC_LOCATION"}, {"value", t.location}},
                            {{"name", "KINETIC_CLUSTER"}, {"value", t.cluster}},
                            {{"name", "KINETIC_NAMESPACE"}, {"value", ns}},
                            {{"name", "KINETIC_STATE"}, {"value", kAutoDownName}},
                            {{"name", "KINETIC_IGNORED_NAMESPACES"}, {"value", kAutoDownIgnored}}});
  const ojson pod = script_pod_spec("auto-down", auto_down_source(), env, sa);
  out.push_back(
      {{"apiVersion", "batch/v1"},
       {"kind", "CronJob"},
       {"metadata", kAutoDownObjects.metadata(kAutoDownName, ns)},
       {"spec",
        {{"schedule", kAutoDownSchedule},
         {"concurrencyPolicy", "Forbid"},
         {"startingDeadlineSeconds", 240},
         {"successfulJobsHistoryLimit", 1},
         {"failedJobsHistoryLimit", 1},
         {"jobTemplate",
          {{"metadata", {{"labels", kAutoDownObjects.labels()}}},
           {"spec",
            {{"backoffLimit", 0},
             {"activeDeadlineSeconds", 240},
             {"template",
              {{"metadata", {{"labels", kAutoDownObjects.labels()}}}, {"spec", pod}}}}}}}}}});
  return out;
}

void install_auto_down(const Session& session, k8s::Client& kube, const std::string& project_number,
                       long idle_seconds, const std::function<void(ClusterChange)>& record) {
  const Target& t = session.target;
  gcp::ProjectIamClient iam(*session.cloud, session.endpoint("cloudresourcemanager"),
                            session.endpoint("iam"), session.poll);
  const std::string role = "projects/" + t.project + "/roles/" + kAutoDownRoleId;
  record({"IAM role", role + " (container.clusters.delete only)",
          iam.ensure_custom_role(t.project, kAutoDownRoleId, "kinetic auto-down",
                                 "Deletes an idle GKE cluster made by kinetic (kinetic up "
                                 "--auto-down); granted on a condition naming the cluster",
                                 {"container.clusters.delete"})});
  // An older kinetic ran auto-down in the job namespace, as a principal of that namespace: its
  // objects go, and so does its grant, given again below to the account in kinetic-system.
  if (remove_auto_down_objects(kube, t.ns, t.cluster, false))
    iam.revoke(t.project, role, auto_down_condition_title(t));
  // The grant first: the CronJob must not run before its principal may do its one thing.
  const bool granted = iam.grant(
      t.project,
      {role,
       auto_down_principal(t, project_number),
       {auto_down_condition_title(t),
        "lets kinetic's auto-down delete cluster " + t.cluster + " only", auto_down_condition(t)}});
  record({"auto-down access", "may delete cluster " + t.cluster + " and nothing else",
          granted ? "granted" : "exists"});

  std::string action = "installed";
  if (auto existing = kube.get(configmap_path(kAutoDownNamespace))) {
    const auto data = existing->value("data", nlohmann::json::object());
    action = data.value("idle_after", "") == std::to_string(idle_seconds) ? "exists" : "updated";
  }
  for (const auto& object : auto_down_manifests(t, idle_seconds)) {
    const nlohmann::json plain = nlohmann::json::parse(object.dump());
    kube.apply(k8s::object_path(plain, kAutoDownNamespace), plain, "kinetic");
  }
  record({"auto-down",
          "deletes the cluster after " + auto_down_period_text(idle_seconds) +
              " with no pod, Job or JobSet pending or running in any namespace but " +
              ignored_namespaces_text() + " (checked every 5 minutes; jobs bucket and images kept)",
          action});
}

void remove_auto_down(const Session& session, k8s::Client* kube,
                      const std::function<void(ClusterChange)>& record) {
  const Target& t = session.target;
  if (kube) {
    const bool had = remove_auto_down_objects(*kube, kAutoDownNamespace, t.cluster, true);
    const bool legacy = remove_auto_down_objects(*kube, t.ns, t.cluster, false);
    if (had || legacy)
      record({"auto-down",
              "CronJob " + std::string(had ? kAutoDownNamespace : t.ns) + "/" + kAutoDownName,
              "removed"});
  }
  // Without Resource Manager on, auto-down was never granted (up enables it first): nothing to
  // read, and reading would fail.
  gcp::ServiceUsageClient services(*session.cloud, session.endpoint("serviceusage"));
  if (!services.disabled(t.project, {kResourceManagerService}).empty()) return;
  gcp::ProjectIamClient iam(*session.cloud, session.endpoint("cloudresourcemanager"),
                            session.endpoint("iam"), session.poll);
  const std::string role = "projects/" + t.project + "/roles/" + kAutoDownRoleId;
  if (iam.revoke(t.project, role, auto_down_condition_title(t)))
    record({"auto-down access", "to delete cluster " + t.cluster, "revoked"});
}

std::optional<AutoDownState> read_auto_down(k8s::Client& kube, const std::string& legacy_ns) {
  auto cm = kube.get(configmap_path(kAutoDownNamespace));
  if (!cm) cm = kube.get(configmap_path(legacy_ns));  // installed by an older kinetic
  if (!cm) return std::nullopt;
  const auto data = cm->value("data", nlohmann::json::object());
  AutoDownState s;
  try {
    s.idle_seconds = std::stol(data.value("idle_after", "0"));
  } catch (const std::exception&) {
    s.idle_seconds = 0;
  }
  s.state = data.value("state", "");
  try {
    s.active = std::stoi(data.value("active", "0"));
  } catch (const std::exception&) {
    s.active = 0;
  }
  s.idle_since = time_field(data, "idle_since");
  s.deletes_at = time_field(data, "deletes_at");
  s.checked_at = time_field(data, "checked_at");
  s.message = data.value("message", "");
  return s;
}

std::optional<AutoDownState> read_auto_down(const Session& session) {
  auto conn = connect_kube(session, cluster_access(session));
  return read_auto_down(*conn.client, session.target.ns);
}

}  // namespace kinetic::gke
