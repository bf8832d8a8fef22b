#include "backend/gke/job_identity.h"

#include <set>

#include "backend/gke/data_access.h"
#include "backend/gke/names.h"
#include "backend/gke/pipeline_runner_job.h"
#include "core/error.h"
#include "gcp/storage.h"

namespace kinetic::gke {

namespace {

std::string workload_pool_prefix(const std::string& project_number, const std::string& project) {
  return "principal://iam.googleapis.com/projects/" + project_number +
         "/locations/global/workloadIdentityPools/" + project + ".svc.id.goog/subject/ns/";
}

// The record of the data buckets kinetic granted on: {"grants": [{"bucket", "member"}]}. What
// the pods may have written there is read as no record rather than an error: `down` goes on.
nlohmann::json read_data_grants(gcp::StorageClient& storage, const std::string& jobs_bucket,
                                int64_t* generation) {
  *generation = 0;
  auto object = storage.get_object(jobs_bucket, kDataGrantsObject);
  if (!object) return {{"grants", nlohmann::json::array()}};
  *generation = object->generation;
  auto record = nlohmann::json::parse(storage.download_string(jobs_bucket, kDataGrantsObject),
                                      nullptr, false);
  if (!record.is_object() || !record.contains("grants") || !record["grants"].is_array())
    return {{"grants", nlohmann::json::array()}};
  return record;
}

}  // namespace

nlohmann::json job_service_account(const std::string& ns) {
  return {{"apiVersion", "v1"},
          {"kind", "ServiceAccount"},
          {"metadata",
           {{"name", kJobServiceAccount},
            {"namespace", ns},
            {"labels", {{kManagedByLabel, "kinetic"}}}}}};
}

void ensure_job_service_account(k8s::Client& kube, const std::string& ns) {
  const std::string collection = "/api/v1/namespaces/" + ns + "/serviceaccounts";
  if (kube.get(collection + "/" + kJobServiceAccount)) return;
  auto create = [&](const std::string& where, const nlohmann::json& object) {
    try {
      kube.create(where, object);
    } catch (const k8s::ApiError& e) {
      if (e.code() != 409) throw;  // another submit made it meanwhile
    }
  };
  // A namespace of the user's choosing (--namespace) may not exist yet on this cluster.
  if (!kube.get("/api/v1/namespaces/" + ns))
    create("/api/v1/namespaces",
           {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  create(collection, job_service_account(ns));
}

bool is_kinetic_principal(const std::string& member, const std::string& project_number,
                          const std::string& project) {
  const std::string prefix = workload_pool_prefix(project_number, project);
  if (member.rfind(prefix, 0) != 0) return false;
  const std::string rest = member.substr(prefix.size());  // NS/sa/KSA
  const auto slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) return false;
  const std::string account = rest.substr(slash);
  return account == std::string("/sa/") + kJobServiceAccount ||
         account == std::string("/sa/") + kPipelineRunnerName;
}

void grant_jobs_bucket(const Session& session, const std::string& project_number,
                       const std::function<void(ClusterChange)>& record) {
  const Target& t = session.target;
  gcp::StorageClient& storage = session.storage();
  const std::string bucket = session.bucket();
  const std::string member = pods_principal(project_number, t.project, t.ns);
  const bool granted = storage.add_bucket_iam_member(bucket, "roles/storage.objectUser", member);
  record({"bucket access",
          "roles/storage.objectUser for the job pods (service account " +
              std::string(kJobServiceAccount) + " of namespace " + t.ns + ")",
          granted ? "granted" : "exists"});
  // An older kinetic ran the jobs as the namespace's `default` and granted it: every pod of the
  // namespace that names no account of its own held the bucket.
  const std::string legacy = service_account_principal(project_number, t.project, t.ns, "default");
  const auto removed =
      storage.remove_bucket_iam_members(bucket, [&](const std::string& m) { return m == legacy; });
  if (!removed.empty())
    record({"bucket access", "for every pod of namespace " + t.ns + " (service account default)",
            "revoked"});
}

void remember_data_grant(const Session& session, const std::string& bucket,
                         const std::string& member) {
  gcp::StorageClient& storage = session.storage();
  const std::string jobs_bucket = session.bucket();
  for (int attempt = 1;; ++attempt) {
    int64_t generation = 0;
    nlohmann::json record = read_data_grants(storage, jobs_bucket, &generation);
    const nlohmann::json entry = {{"bucket", bucket}, {"member", member}};
    for (const auto& g : record["grants"])
      if (g == entry) return;
    record["grants"].push_back(entry);
    try {
      // Conditioned on the generation read: two runs granting at once both land.
      storage.upload_string(
          jobs_bucket, kDataGrantsObject, record.dump(2) + "\n",
          {.content_type = "application/json", .if_generation_match = generation});
      return;
    } catch (const Error&) {
      if (attempt == 3) throw;
    }
  }
}

void revoke_job_grants(const Session& session, bool keep_bucket,
                       const std::function<void(ClusterChange)>& record) {
  const Target& t = session.target;
  gcp::StorageClient& storage = session.storage();
  const std::string jobs_bucket = session.bucket();
  auto info = storage.get_bucket(jobs_bucket);
  if (!info || info->project_number.empty()) return;  // no bucket, nothing kinetic granted
  const std::string number = info->project_number;
  auto ours = [&](const std::string& m) { return is_kinetic_principal(m, number, t.project); };

  int64_t generation = 0;
  const nlohmann::json grants = read_data_grants(storage, jobs_bucket, &generation)["grants"];
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& g : grants) {
    if (!g.is_object()) continue;
    const std::string bucket = g.value("bucket", ""), member = g.value("member", "");
    if (bucket.empty() || bucket == jobs_bucket || !ours(member)) continue;
    if (!seen.insert({bucket, member}).second) continue;
    try {
      const auto removed = storage.remove_bucket_iam_members(
          bucket, [&](const std::string& m) { return m == member; });
      if (!removed.empty())
        record({"data access", "gs://" + bucket + " for the job pods", "revoked"});
    } catch (const Error& e) {
      // A bucket deleted since, or no longer ours to administer: say so, go on with the rest.
      record({"data access", "gs://" + bucket + " for the job pods (" + e.what() + ")", "kept"});
    }
  }
  if (keep_bucket) {
    const auto removed = storage.remove_bucket_iam_members(jobs_bucket, ours);
    if (!removed.empty())
      record({"bucket access", "gs://" + jobs_bucket + " for the job pods and pipeline runners",
              "revoked"});
    if (generation != 0) storage.delete_object(jobs_bucket, kDataGrantsObject);
  }
}

}  // namespace kinetic::gke
