// Service Usage: which APIs a project has on, and turning them on (docs/gcp-api.md §6).
#pragma once

#include <string>
#include <vector>

#include "gcp/operations.h"
#include "http/transport.h"

namespace kinetic::gcp {

class ServiceUsageClient {
 public:
  ServiceUsageClient(http::Transport& transport, std::string endpoint);

  // The services of SERVICES ("container.googleapis.com"...) that are not ENABLED in PROJECT
  // (one batchGet per 30 names).
  std::vector<std::string> disabled(const std::string& project,
                                    const std::vector<std::string>& services);
  // batchEnable (20 per call), each operation polled to done. Failures name the service.
  void enable(const std::string& project, const std::vector<std::string>& services,
              const PollOptions& poll);

 private:
  http::Transport& transport_;
  std::string endpoint_;
};

}  // namespace kinetic::gcp
