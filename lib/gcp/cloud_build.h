// Cloud Build (cloudbuild.googleapis.com/v1): create a build, follow it to the end, explain its
// failure (docs/gcp-api.md §3).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gcp/operations.h"
#include "http/transport.h"

namespace kinetic::gcp {

struct BuildInfo {
  std::string id;
  std::string status;  // QUEUED, WORKING, SUCCESS, FAILURE, INTERNAL_ERROR, TIMEOUT, CANCELLED...
  std::string status_detail;
  std::string failure_type;    // failureInfo.type
  std::string failure_detail;  // failureInfo.detail
  std::string log_url;
  std::string logs_bucket;  // gs://...
  // The failing step: its index, image name and exit code, when a step failed.
  int failed_step = -1;
  std::string failed_step_name;
  int failed_step_exit_code = 0;  // steps[].exitCode, 0 when not reported
  nlohmann::json raw;
  bool terminal() const;
  bool succeeded() const { return status == "SUCCESS"; }
  // One line on why a terminal build did not succeed: the failing step, Cloud Build's detail and
  // where the log is ("" for a successful or unfinished build).
  std::string failure_message() const;
};

// A Build resource (builds.get, or an operation's metadata.build) as BuildInfo.
BuildInfo build_info_from_json(const nlohmann::json& build);

// A docker build of the gs://BUCKET/OBJECT source (a .tar.gz with a Dockerfile) tagged IMAGE,
// logs under LOGS_BUCKET (gs://...), labelled as kinetic's.
nlohmann::json docker_build_request(const std::string& bucket, const std::string& object,
                                    const std::string& image, const std::string& logs_bucket,
                                    long timeout_seconds);

class CloudBuildClient {
 public:
  CloudBuildClient(http::Transport& transport, std::string endpoint);

  // builds.create in PROJECT/LOCATION; returns the queued build (from the operation metadata).
  BuildInfo create(const std::string& project, const std::string& location,
                   const nlohmann::json& build);
  BuildInfo get(const std::string& project, const std::string& location, const std::string& id);
  // Polls get() until the build is terminal, calling ON_STATUS when the status changes.
  BuildInfo wait(const std::string& project, const std::string& location, const std::string& id,
                 const PollOptions& poll, const std::function<void(const BuildInfo&)>& on_status);
  void cancel(const std::string& project, const std::string& location, const std::string& id);

 private:
  http::Transport& transport_;
  std::string endpoint_;
};

}  // namespace kinetic::gcp
