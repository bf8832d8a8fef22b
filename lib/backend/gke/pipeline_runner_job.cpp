// The runner Job of a detached pipeline and what it may do. Decisions:
// - One ServiceAccount, Role and RoleBinding per namespace, applied by every detached run (the
//   apply is idempotent): they hold no secret, and the Role only creates Jobs and JobSets (a
//   Role's resourceNames cannot limit create). `down` deletes them with the cluster.
// - A Role and RoleBinding per pipeline (named as its runner Job, owned by it) let the runner
//   read and delete its steps' Jobs and JobSets and delete their Secrets, each by name: never
//   another job's, never a Secret's values. The step's Secret is created by the CLI when it
//   stages the step, and its values stay there.
// - Creating a Job is running a pod as any service account and mounting any Secret of the
//   namespace: RBAC cannot narrow that, so the runner checks each launch against the plan, and
//   the plan against the digest in its own Job (docs/security.md).
// - The runner Job is retried (backoffLimit 3): the script takes its last record and goes on, so
//   an evicted runner does not lose the run. It has no deadline: a pipeline may run for days.
// - The plan's sha256 is in the Job's own spec (KINETIC_PLAN_SHA256): every job pod may rewrite
//   the bucket's objects, plan.json included, but not a Job's pod template (immutable, and job
//   pods hold no Kubernetes role). The runner runs no plan whose bytes do not match.
// - The plan names the namespace and the service account the steps' pods run as (what the
//   staged manifests say), so that the runner can refuse a launch that says otherwise.
#include "backend/gke/pipeline_runner_job.h"

#include <set>

#include "backend/gke/data_access.h"
#include "backend/gke/gke_pipeline_store.h"
#include "backend/gke/script_pod.h"
#include "core/error.h"
#include "core/strings.h"
#include "gcp/storage.h"
#include "k8s/client.h"
#include "pack/sha256.h"

namespace kinetic {
extern const std::string_view kPipelineRunnerSource;  // generated from pipeline_runner.py
}

namespace kinetic::gke {

using ojson = nlohmann::ordered_json;

namespace {

constexpr ScriptObjects kRunnerObjects{kPipelineRunnerName};

// The service accounts NODE's pod specs (objects with containers) name, "" for none.
void pod_service_accounts(const ojson& node, std::set<std::string>& out) {
  if (node.is_object()) {
    if (node.contains("containers")) {
      const auto it = node.find("serviceAccountName");
      out.insert(it != node.end() && it->is_string() ? it->get<std::string>() : "");
    }
    for (const auto& [key, value] : node.items()) pod_service_accounts(value, out);
  } else if (node.is_array()) {
    for (const auto& value : node) pod_service_accounts(value, out);
  }
}

// The one service account every staged step's pods run as ("": the namespace's default), which
// the runner allows and no other.
std::string job_service_account(const ojson& plan) {
  std::set<std::string> accounts;
  for (const auto& step : plan.value("steps", ojson::array()))
    if (step.contains("launch")) pod_service_accounts(step["launch"]["manifest"], accounts);
  if (accounts.size() > 1)
    throw Error(Errc::internal, "the pipeline's steps run as different service accounts (" +
                                    join_or({accounts.begin(), accounts.end()}) +
                                    "); the runner allows one");
  const std::string account = accounts.empty() ? "" : *accounts.begin();
  if (account == kPipelineRunnerName || account.starts_with("kinetic-auto-down"))
    throw Error(Errc::internal,
                "a pipeline step may not run as kinetic's own service account " + account);
  return account;
}

}  // namespace

std::string_view pipeline_runner_source() {
  return kPipelineRunnerSource;
}

std::string pipeline_runner_job(const std::string& pipeline_id) {
  return "kinetic-" + pipeline_id;
}

std::string pipeline_object(const std::string& pipeline_id, const std::string& name) {
  return std::string(kPipelinesPrefix) + pipeline_id + "/" + name;
}

namespace {

// The last component of an API path: the object's name.
std::string name_in(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

// A rule of the pipeline's own Role: VERBS on RESOURCE of GROUP named NAMES. None when NAMES is
// empty, since a rule with no resourceNames covers every object.
void add_named_rule(ojson& rules, const char* group, const char* resource,
                    const std::set<std::string>& names, const ojson& verbs) {
  if (names.empty()) return;
  rules.push_back({{"apiGroups", {group}},
                   {"resources", {resource}},
                   {"verbs", verbs},
                   {"resourceNames", ojson(std::vector<std::string>(names.begin(), names.end()))}});
}

// What the runner of PLAN may read and delete, by name: its steps' workloads and Secrets.
ojson pipeline_rules(const ojson& plan) {
  std::set<std::string> jobs, jobsets, secrets;
  for (const auto& step : plan.value("steps", ojson::array())) {
    if (!step.contains("launch")) continue;
    const auto& launch = step["launch"];
    const std::string object = launch.value("object", "");
    (object.find("/jobsets/") != std::string::npos ? jobsets : jobs).insert(name_in(object));
    if (!launch.value("secret", "").empty()) secrets.insert(name_in(launch.value("secret", "")));
  }
  ojson rules = ojson::array();
  add_named_rule(rules, "batch", "jobs", jobs, {"get", "delete"});
  add_named_rule(rules, "jobset.x-k8s.io", "jobsets", jobsets, {"get", "delete"});
  add_named_rule(rules, "", "secrets", secrets, {"delete"});
  return rules;
}

ojson role_binding(const std::string& name, const std::string& ns) {
  return {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", kRunnerObjects.metadata(name, ns)},
      {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}}},
      {"subjects",
       ojson::array(
           {{{"kind", "ServiceAccount"}, {"name", kPipelineRunnerName}, {"namespace", ns}}})}};
}

}  // namespace

std::vector<ojson> pipeline_runner_manifests(const Target& t, const std::string& pipeline_id,
                                             const ojson& plan, const std::string& plan_uri,
                                             const std::string& plan_sha256) {
  std::vector<ojson> out;
  out.push_back({{"apiVersion", "v1"},
                 {"kind", "ServiceAccount"},
                 {"metadata", kRunnerObjects.metadata(kPipelineRunnerName, t.ns)}});
  // Creating cannot be limited by name: the namespace's Role only creates. The pipeline's own
  // Role reads and deletes its steps' objects, by name, and nothing else.
  out.push_back(
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "Role"},
       {"metadata", kRunnerObjects.metadata(kPipelineRunnerName, t.ns)},
       {"rules",
        ojson::array({{{"apiGroups", {"batch"}}, {"resources", {"jobs"}}, {"verbs", {"create"}}},
                      {{"apiGroups", {"jobset.x-k8s.io"}},
                       {"resources", {"jobsets"}},
                       {"verbs", {"create"}}}})}});
  out.push_back(role_binding(kPipelineRunnerName, t.ns));
  const std::string job_name = pipeline_runner_job(pipeline_id);
  out.push_back({{"apiVersion", "rbac.authorization.k8s.io/v1"},
                 {"kind", "Role"},
                 {"metadata", kRunnerObjects.metadata(job_name, t.ns)},
                 {"rules", pipeline_rules(plan)}});
  out.push_back(role_binding(job_name, t.ns));
  const ojson pod =
      script_pod_spec("runner", pipeline_runner_source(),
                      ojson::array({{{"name", "KINETIC_PLAN_URI"}, {"value", plan_uri}},
                                    {{"name", "KINETIC_PLAN_SHA256"}, {"value", plan_sha256}}}),
                      kPipelineRunnerName);
  ojson labels = kRunnerObjects.labels();
  labels["kinetic.dev/pipeline"] = pipeline_id;
  out.push_back({{"apiVersion", "batch/v1"},
                 {"kind", "Job"},
                 {"metadata", {{"name", job_name}, {"namespace", t.ns}, {"labels", labels}}},
                 {"spec",
                  {{"backoffLimit", 3},
                   {"ttlSecondsAfterFinished", 86400},
                   {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod}}}}}});
  return out;
}

ojson start_pipeline_runner(const Session& session, k8s::Client& kube,
                            const std::string& pipeline_id, ojson plan) {
  const Target& t = session.target;
  gcp::StorageClient& storage = session.storage();
  const std::string bucket = session.bucket();
  auto info = storage.get_bucket(bucket);
  if (!info || info->project_number.empty())
    throw Error(Errc::api, "the bucket gs://" + bucket +
                               " did not say its project number, which the pipeline runner's "
                               "access needs; run `kinetic up` and try again");
  storage.add_bucket_iam_member(
      bucket, "roles/storage.objectUser",
      service_account_principal(info->project_number, t.project, t.ns, kPipelineRunnerName));
  plan["record_uri"] = "gs://" + bucket + "/" + pipeline_object(pipeline_id, "pipeline.json");
  plan["cancel_uri"] = "gs://" + bucket + "/" + pipeline_object(pipeline_id, "cancel");
  const ojson runner = {{"job", pipeline_runner_job(pipeline_id)}, {"namespace", t.ns}};
  plan["record"]["runner"] = runner;
  plan["namespace"] = t.ns;
  plan["job_service_account"] = job_service_account(plan);
  const std::string plan_object = pipeline_object(pipeline_id, "plan.json");
  const std::string plan_text = plan.dump(2) + "\n";
  storage.upload_string(bucket, plan_object, plan_text, {.content_type = "application/json"});
  storage.upload_string(bucket, pipeline_object(pipeline_id, "pipeline.json"),
                        plan["record"].dump(2) + "\n", {.content_type = "application/json"});
  const auto manifests = pipeline_runner_manifests(
      t, pipeline_id, plan, "gs://" + bucket + "/" + plan_object, sha256_hex(plan_text));
  nlohmann::json job;
  for (const auto& object : manifests) {
    const nlohmann::json plain = nlohmann::json::parse(object.dump());
    job = kube.apply(k8s::object_path(plain, t.ns), plain, "kinetic");
  }
  // The pipeline's own Role and RoleBinding go with its runner Job (Kubernetes' garbage
  // collector, once the Job's TTL has passed): owned by it, which only its uid can say.
  const nlohmann::json owner = {{"apiVersion", "batch/v1"},
                                {"kind", "Job"},
                                {"name", pipeline_runner_job(pipeline_id)},
                                {"uid", job["metadata"].value("uid", "")}};
  for (const auto& object : manifests) {
    if (object["metadata"]["name"] != pipeline_runner_job(pipeline_id) || object["kind"] == "Job")
      continue;
    nlohmann::json plain = nlohmann::json::parse(object.dump());
    plain["metadata"]["ownerReferences"] = nlohmann::json::array({owner});
    kube.apply(k8s::object_path(plain, t.ns), plain, "kinetic");
  }
  return runner;
}

}  // namespace kinetic::gke
