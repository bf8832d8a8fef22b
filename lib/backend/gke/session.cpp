#include "backend/gke/session.h"

#include "backend/gke/names.h"
#include "core/duration.h"
#include "core/error.h"
#include "gcp/endpoints.h"
#include "job/spec.h"

namespace kinetic::gke {

std::string Session::endpoint(const char* service) const {
  return gcp::api_endpoint(service, *env);
}

gcp::StorageClient& Session::storage() const {
  if (!storage_) storage_ = std::make_shared<gcp::StorageClient>(*cloud, endpoint("storage"));
  return *storage_;
}

Session Session::for_another_thread() const {
  if (!new_cloud) throw Error(Errc::internal, "this gke session cannot make another transport");
  Session other = *this;
  other.cloud = new_cloud();
  other.storage_.reset();
  return other;
}

std::string Session::bucket() const {
  return bucket_name(target.project, target.cluster);
}

void show_operation(StatusLine& progress, const nlohmann::json& operation, double started) {
  // GKE's own Operation names its type and status; google.longrunning only says done or not.
  std::string what = operation.value("operationType", "");
  if (what.empty()) what = "operation";
  std::string state = operation.value("status", "");
  if (state.empty()) state = operation.value("done", false) ? "DONE" : "RUNNING";
  progress.update_ticking(what + ": " + state, " (" + format_elapsed(now_unix() - started) + ")");
}

void require_target(const Target& target, const std::string& command) {
  if (target.project.empty())
    throw Error(Errc::config, command +
                                  " needs a project: pass --project P, set KINETIC_PROJECT, or "
                                  "`gcloud config set project P`");
  if (target.location.empty())
    throw Error(Errc::config,
                command +
                    " needs a location: pass --zone Z (or --region R), set KINETIC_ZONE, or "
                    "`gcloud config set compute/zone Z`");
  if (target.cluster.empty()) throw Error(Errc::config, command + " needs a cluster name");
}

}  // namespace kinetic::gke
