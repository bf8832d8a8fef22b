// Who the job pods are to Google (docs/security.md "Every identity kinetic creates holds the
// least it needs"): the Kubernetes service account kJobServiceAccount of the job namespace,
// whose Workload Identity principal holds what kinetic grants the jobs, and nothing else runs as.
// - `up` grants it roles/storage.objectUser on the jobs bucket (the bootstrap reads, writes and
//   overwrites records: objects.delete too) and takes back what an older kinetic granted to the
//   namespace's `default` account (every other pod of the namespace);
// - a submit creates the account first (the ServiceAccount admission plugin refuses a pod naming
//   one that does not exist);
// - `run --data gs://B --grant` grants it the mount's role on B and records the grant in the jobs
//   bucket (kDataGrantsObject), so that `down` can take it back. The pods may write that object:
//   `down` only ever removes kinetic's own principals named in it, so a changed record can leave
//   a grant behind (deleted) or take back one of kinetic's, never touch anyone else's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/gke/provisioner.h"
#include "backend/gke/session.h"
#include "k8s/client.h"

namespace kinetic::gke {

// The ServiceAccount object (labelled as kinetic's) in namespace NS.
nlohmann::json job_service_account(const std::string& ns);
// Creates it in NS unless it exists (and NS first, if need be); idempotent, and a concurrent
// create (409) is no failure.
void ensure_job_service_account(k8s::Client& kube, const std::string& ns);

// Whether MEMBER is the principal of kJobServiceAccount (or, with the runner, of the pipeline
// runner's) in any namespace of PROJECT's workload pool: what `down` may take back.
bool is_kinetic_principal(const std::string& member, const std::string& project_number,
                          const std::string& project);

// `up`: the job principal of the target's namespace gets objectUser on the jobs bucket; the
// namespace's `default` loses the objectUser an older kinetic gave it.
void grant_jobs_bucket(const Session& session, const std::string& project_number,
                       const std::function<void(ClusterChange)>& record);

inline constexpr const char* kDataGrantsObject = "grants/data-buckets.json";
// `run --data gs://BUCKET --grant`: remembers (in kDataGrantsObject) that kinetic granted MEMBER
// on BUCKET, so that `down` revokes it.
void remember_data_grant(const Session& session, const std::string& bucket,
                         const std::string& member);

// `down`: takes back every grant kinetic made to its jobs' (and runners') principals, on the data
// buckets it remembers and, when the jobs bucket stays (KEEP_BUCKET), on it; a bucket deleted
// takes its policy with it.
void revoke_job_grants(const Session& session, bool keep_bucket,
                       const std::function<void(ClusterChange)>& record);

}  // namespace kinetic::gke
