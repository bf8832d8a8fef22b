// The runner Job of a detached pipeline and what it may do. Decisions:
// - One ServiceAccount, Role and RoleBinding per namespace, applied by every detached run (the
//   apply is idempotent): they hold no secret and grant only what the runner does. `down`
//   deletes them with the cluster.
// - The Role cannot name the objects it may touch (a Role's resourceNames cannot limit create),
//   so it covers the namespace's Jobs and JobSets; Secrets only to delete, never to read: the
//   step's Secret is created by the CLI when it stages the step, and its values stay there.
// - The runner Job is retried (backoffLimit 3): the script takes its last record and goes on, so
//   an evicted runner does not lose the run. It has no deadline: a pipeline may run for days.
#include "backend/gke/pipeline_runner_job.h"

#include "backend/gke/data_access.h"
#include "backend/gke/gke_pipeline_store.h"
#include "backend/gke/script_pod.h"
#include "core/error.h"
#include "gcp/storage.h"
#include "k8s/client.h"

namespace kinetic {
extern const std::string_view kPipelineRunnerSource;  // generated from pipeline_runner.py
}

namespace kinetic::gke {

using ojson = nlohmann::ordered_json;

namespace {

ojson runner_labels() {
  return script_labels(kPipelineRunnerName);
}

ojson runner_metadata(const std::string& name, const std::string& ns) {
  return script_metadata(kPipelineRunnerName, name, ns);
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

std::vector<ojson> pipeline_runner_manifests(const Target& t, const std::string& pipeline_id,
                                             const std::string& plan_uri) {
  std::vector<ojson> out;
  out.push_back({{"apiVersion", "v1"},
                 {"kind", "ServiceAccount"},
                 {"metadata", runner_metadata(kPipelineRunnerName, t.ns)}});
  out.push_back(
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "Role"},
       {"metadata", runner_metadata(kPipelineRunnerName, t.ns)},
       {"rules",
        ojson::array({{{"apiGroups", {"batch"}},
                       {"resources", {"jobs"}},
                       {"verbs", {"create", "get", "delete"}}},
                      {{"apiGroups", {"jobset.x-k8s.io"}},
                       {"resources", {"jobsets"}},
                       {"verbs", {"create", "get", "delete"}}},
                      {{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"delete"}}}})}});
  out.push_back({{"apiVersion", "rbac.authorization.k8s.io/v1"},
                 {"kind", "RoleBinding"},
                 {"metadata", runner_metadata(kPipelineRunnerName, t.ns)},
                 {"roleRef",
                  {{"apiGroup", "rbac.authorization.k8s.io"},
                   {"kind", "Role"},
                   {"name", kPipelineRunnerName}}},
                 {"subjects", ojson::array({{{"kind", "ServiceAccount"},
                                             {"name", kPipelineRunnerName},
                                             {"namespace", t.ns}}})}});
  const ojson pod = script_pod_spec(
      "runner", pipeline_runner_source(),
      ojson::array({{{"name", "KINETIC_PLAN_URI"}, {"value", plan_uri}}}), kPipelineRunnerName);
  ojson labels = runner_labels();
  labels["kinetic.dev/pipeline"] = pipeline_id;
  out.push_back(
      {{"apiVersion", "batch/v1"},
       {"kind", "Job"},
       {"metadata",
        {{"name", pipeline_runner_job(pipeline_id)}, {"namespace", t.ns}, {"labels", labels}}},
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
  const std::string plan_object = pipeline_object(pipeline_id, "plan.json");
  storage.upload_string(bucket, plan_object, plan.dump(2) + "\n",
                        {.content_type = "application/json"});
  storage.upload_string(bucket, pipeline_object(pipeline_id, "pipeline.json"),
                        plan["record"].dump(2) + "\n", {.content_type = "application/json"});
  for (const auto& object :
       pipeline_runner_manifests(t, pipeline_id, "gs://" + bucket + "/" + plan_object)) {
    const nlohmann::json plain = nlohmann::json::parse(object.dump());
    kube.apply(k8s::object_path(plain, t.ns), plain, "kinetic");
  }
  return runner;
}

}  // namespace kinetic::gke
