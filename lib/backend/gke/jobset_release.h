// JobSet on the cluster (docs/multihost.md). A multi-host TPU slice runs as a JobSet, and GKE does
// not ship its controller, so `kinetic up` installs a pinned release (release.h: the way xpk
// does, server-side applied, then a wait for the controller). `down` deletes it with the cluster.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/gke/release.h"

namespace kinetic::gke {

// The JobSet release kinetic installs. v0.10 is the first with onJobFailureMessagePatterns,
// which the JobSet's failure policy needs to tell a preemption from a run that is over.
inline constexpr const char* kJobSetVersion = "v0.10.1";
// The sha256 of that release's manifests.yaml (github.com/kubernetes-sigs/jobset/releases/
// download/v0.10.1/manifests.yaml), which the download must match. EMPTY: not yet taken from
// the published asset (no machine that built kinetic could reach it); until it is filled in the
// HTTPS download installs as before and `up` prints its sha256. A copy the user names
// (--jobset-manifests, KINETIC_JOBSET_MANIFESTS) installs whatever its digest.
inline constexpr const char* kJobSetManifestsSha256 = "";
inline constexpr const char* kJobSetNamespace = "jobset-system";
inline constexpr const char* kJobSetDeployment = "jobset-controller-manager";
// Set on every object kinetic applies: which release it installed.
inline constexpr const char* kJobSetVersionAnnotation = "kinetic.dev/jobset-version";

const Release& jobset_release();

// Where the release manifests come from: FLAG (`up --jobset-manifests`), else
// KINETIC_JOBSET_MANIFESTS, else the release on GitHub. A URL (https, http) or a file path.
std::string jobset_manifests_source(const std::string& flag, const Env& env);
// The release on GitHub, kinetic's default source.
std::string default_jobset_manifests_url();

// release.h's verify_release for JobSet, against PIN.
std::string verify_manifests(const std::string& text, const std::string& source,
                             const std::string& pin = kJobSetManifestsSha256);

// The installed JobSet release ("" when none; "unknown" for one someone else installed).
std::string installed_jobset_version(k8s::Client& kube);

// Installs or upgrades JobSet to kJobSetVersion from SOURCE unless it is there already, then
// waits for its controller. The change says "installed", "exists" or "upgraded from vX".
ClusterChange ensure_jobset(const Session& session, k8s::Client& kube, const std::string& source);

}  // namespace kinetic::gke
