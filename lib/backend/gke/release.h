// A controller release kinetic installs in the cluster the way xpk does: the release's
// manifests, from a pinned version, checked against its sha256 pin, server-side applied with
// kinetic as the field manager (idempotent, no kubectl), then a wait for the controller's
// Deployment to be available. A second install with the same pin finds it and does nothing; a
// newer pin upgrades it. JobSet (jobset_release.h) and Kueue (kueue.h) are two such releases:
// what they share is here, what each is lives in its own file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cluster.h"
#include "backend/gke/session.h"
#include "core/env.h"
#include "k8s/client.h"

namespace kinetic::gke {

// One release: what it is called, where it comes from, and how kinetic finds it installed.
struct Release {
  std::string name;     // "JobSet": how messages name it
  std::string version;  // "v0.10.1"
  // The sha256 of the published manifests.yaml; empty while no machine that built kinetic could
  // read the asset (the HTTPS download then installs, and its digest is said).
  std::string sha256;
  std::string url;         // the release's manifests.yaml on GitHub
  std::string env;         // "KINETIC_JOBSET_MANIFESTS": the user's copy, after the flag
  std::string flag;        // "--jobset-manifests"
  std::string ns;          // "jobset-system"
  std::string deployment;  // the controller's Deployment in NS
  std::string crd;     // a CustomResourceDefinition the release makes: "jobsets.jobset.x-k8s.io"
  std::string image;   // the controller's image name, "/jobset:", for a release someone else put
  std::string change;  // the ClusterChange kind: "jobset"
  // Set on every object kinetic applies: which release it installed.
  std::string version_annotation;
};

// Where RELEASE's manifests come from: FLAG as given, else the release's environment variable,
// else the release on GitHub. A URL (https, http) or a file path.
std::string manifests_source(const Release& release, const std::string& flag, const Env& env);

// Checks TEXT, read from SOURCE, before anything of it is applied. What kinetic chose itself
// (the release on GitHub) must have the sha256 PIN: a download changed on the way or at the
// source is refused (any download is taken while PIN is empty). A source the user named (a file
// or URL: their own copy, a mirror, a fork) is theirs to vouch for and is taken as named: this is
// what lets a closed network install it, and what the tests' stand-ins are. Returns TEXT's sha256.
std::string verify_release(const Release& release, const std::string& text,
                           const std::string& source, const std::string& pin);

// The objects of a multi-document YAML stream, in order (empty documents skipped). Throws
// Error(Errc::config) naming WHAT ("the JobSet manifests x.yaml") and the document that does not
// parse.
std::vector<nlohmann::json> parse_yaml_objects(const std::string& yaml, const std::string& what);

// The installed release ("" when none): the version annotation kinetic set on the controller's
// Deployment, its image's tag for one someone else installed, else "unknown".
std::string installed_release_version(const Release& release, k8s::Client& kube);

// Installs or upgrades RELEASE from SOURCE unless it is there already, then waits for its
// controller. EDIT, when given, changes each object before it is applied (Kueue's configuration
// for fair sharing, kueue_fair.h). The change says "installed", "exists" or "upgraded from vX".
ClusterChange ensure_release(const Release& release, const Session& session, k8s::Client& kube,
                             const std::string& source,
                             const std::function<void(nlohmann::json&)>& edit = {});

// The API path of RELEASE's controller Deployment.
std::string deployment_path(const Release& release);

// Waits (at most 10 minutes) until RELEASE's controller Deployment has seen its last change and
// is available; throws Error(Errc::api) saying where to look otherwise.
void wait_for_controller(const Release& release, const Session& session, k8s::Client& kube);

}  // namespace kinetic::gke
