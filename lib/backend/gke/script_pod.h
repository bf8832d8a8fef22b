// The pod of kinetic's own in-cluster scripts (the auto-down check, a detached pipeline's
// runner): Python's standard library in a slim image, in the default pool, as a service account
// of the script's own, unprivileged, with a read-only root and small limits.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kinetic::gke {

// The image the scripts run in: Python's standard library is all they need. Pinned by digest,
// not by the tag alone: the auto-down script may delete the cluster and the runner launches
// jobs, so what runs as them must not change when Docker Hub moves `3.12-slim`. The digest is
// the image index `python:3.12-slim` named on 2026-08-05 (Python 3.12.13), as Docker's official
// images publish it (docs/gke-conformance.md "Images kinetic runs"). Bump it deliberately.
inline constexpr const char* kScriptImage =
    "python:3.12-slim@sha256:229a2c5bfa27522db7815ea81f9bed70af17ccb9de9fc7ad142b1877b5830d36";

// The objects of script APP ("kinetic-auto-down": its CronJob or Job, account and RBAC), as each
// script's file names them once (`constexpr ScriptObjects kAutoDownObjects{kAutoDownName}`).
struct ScriptObjects {
  std::string_view app;
  // The labels of every one of them: managed by kinetic, named APP.
  nlohmann::ordered_json labels() const;
  // {name, namespace, labels()}.
  nlohmann::ordered_json metadata(const std::string& name, const std::string& ns) const;
};

// A pod spec running `python3 -c SOURCE` in container CONTAINER with ENV (an array of
// {name, value}) as service account SERVICE_ACCOUNT; it never restarts in place.
nlohmann::ordered_json script_pod_spec(const std::string& container, std::string_view source,
                                       nlohmann::ordered_json env,
                                       const std::string& service_account);

}  // namespace kinetic::gke
