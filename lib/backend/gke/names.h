// Names of everything kinetic creates in a project (docs/architecture.md "Where state lives":
// cluster `kinetic`, bucket PROJECT-kinetic-CLUSTER, repository `kinetic`, labels on everything).
#pragma once

#include <string>
#include <string_view>

#include "job/catalog.h"
#include "pack/archive.h"

namespace kinetic::gke {

inline constexpr const char* kDefaultCluster = "kinetic";
inline constexpr const char* kRepository = "kinetic";
inline constexpr const char* kImagePackage = "base";
inline constexpr const char* kNamespace = "default";
// The Kubernetes service account every job pod (Job and JobSet) runs as, created in the job
// namespace before a submit: its Workload Identity principal, not the namespace's `default`
// (which every other pod of the namespace shares), holds the jobs bucket and the --grant data
// buckets (docs/security.md "Every identity kinetic creates holds the least it needs").
inline constexpr const char* kJobServiceAccount = "kinetic-job";
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kJobLabel = "kinetic.dev/job";
inline constexpr const char* kPoolLabel = "kinetic.dev/pool";
inline constexpr const char* kAcceleratorLabel = "kinetic.dev/accelerator";
// Staging objects live under these prefixes of the bucket; the lifecycle rule deletes them.
inline constexpr const char* kContextsPrefix = "contexts/";
inline constexpr const char* kJobsPrefix = "jobs/";
inline constexpr const char* kBuildsPrefix = "builds/";
inline constexpr int kStagingDays = 7;
// The parts of a parallel composite upload (gcp/composite_upload.h), deleted once composed; the
// lifecycle rule removes, a day on, any a crashed kinetic left behind.
inline constexpr const char* kUploadsPrefix = "uploads/";
inline constexpr int kUploadPartDays = 1;

// PROJECT-kinetic-CLUSTER, made a valid bucket name: a domain-scoped project ("example.com:p")
// loses its ':' and '.', "google" (which bucket names may not contain) becomes "g00gle", and the
// name is cut to 63 characters.
std::string bucket_name(const std::string& project, const std::string& cluster);

// The node pool kinetic uses for an accelerator: "v5litepod-4", "l4", "a100x8-spot", "cpu".
std::string pool_name(const Accelerator& accelerator);
// The pool of slice SLICE (from 0) of a multislice run: pool_name, then "-slice-2", "-slice-3"...
// (JobSet places each slice alone on a pool: docs/multihost.md "Multislice").
std::string slice_pool_name(const Accelerator& accelerator, int slice);

// gcloud's kubeconfig names: gke_PROJECT_LOCATION_CLUSTER.
std::string kube_context_name(const std::string& project, const std::string& location,
                              const std::string& cluster);

// Label selectors: everything kinetic made, and one job's objects (its Job or JobSet, pods,
// Secret).
std::string managed_selector();
std::string job_selector(const std::string& job_id);

// Where a job's objects live in the bucket.
std::string job_prefix(const std::string& job_id);  // jobs/ID/
// The ID of an object jobs/ID/... of a job's record.
std::string job_id_of_record(std::string_view object);
std::string spec_object(const std::string& job_id);  // jobs/ID/spec.json
// A function job's call and its runner's source (job/function_call.h), beside the spec: the
// bootstrap finds them there from KINETIC_SPEC_URI.
std::string function_call_object(const std::string& job_id);    // jobs/ID/function.pkl
std::string function_runner_object(const std::string& job_id);  // jobs/ID/function_runner.py
// `run --debug`'s launcher (job/debug_spec.h), beside the spec as the function runner is.
std::string debug_launcher_object(const std::string& job_id);  // jobs/ID/debug_launcher.py
// jobs/ID/follower: refreshed while a kinetic process follows a foreground run; the pod stops a
// run nobody follows any more (docs/run-record.md).
std::string follower_object(const std::string& job_id);
std::string results_prefix(const std::string& job_id);  // jobs/ID/results/
// Where host HOST of a job records its run: results/ for host 0, results/workers/K/ for the
// others (docs/run-record.md).
std::string host_results_prefix(const std::string& job_id, int host);
// contexts/SHA.tar.zst or contexts/SHA.tar.gz
std::string context_object(const std::string& sha256, Compression compression);

}  // namespace kinetic::gke
