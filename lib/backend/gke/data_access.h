// Who reads a `run --data gs://BUCKET` mount on GKE: the Cloud Storage FUSE CSI driver mounts it
// as the job's pods, i.e. their Kubernetes service account (kJobServiceAccount) through Workload
// Identity
// (docs/security.md "Who can read what"). Pure helpers: the principal, the role a mount needs,
// whether a bucket policy already grants it, and the one command that grants it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kinetic::gke {

// principal://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/
// PROJECT.svc.id.goog/subject/ns/NS/sa/SA: the Google principal of the pods that run as
// Kubernetes service account SA of namespace NS, through Workload Identity.
std::string service_account_principal(const std::string& project_number, const std::string& project,
                                      const std::string& ns, const std::string& sa);
// The job pods' principal: they run as kJobServiceAccount ("kinetic-job") of namespace NS.
std::string pods_principal(const std::string& project_number, const std::string& project,
                           const std::string& ns);

// roles/storage.objectViewer for a read-only mount (gcsfuse lists and reads), objectUser for :rw.
std::string data_role(bool writable);

// Whether POLICY (a bucket's IAM policy) grants MEMBER, or everyone, a role that covers
// data_role(WRITABLE) without a condition. A grant kinetic cannot see (the project's policy, a
// group) reads as false.
bool policy_grants(const nlohmann::json& policy, const std::string& member, bool writable);

// gcloud storage buckets add-iam-policy-binding gs://BUCKET --member=MEMBER --role=ROLE
std::string grant_command(const std::string& bucket, const std::string& member,
                          const std::string& role);

}  // namespace kinetic::gke
