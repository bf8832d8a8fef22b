// Artifact Registry (artifactregistry.googleapis.com/v1): the DOCKER repository kinetic's images
// live in, and tag lookups through the API (so endpoint overrides apply) (docs/gcp-api.md §4).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "gcp/operations.h"
#include "http/transport.h"

namespace kinetic::gcp {

class ArtifactRegistryClient {
 public:
  ArtifactRegistryClient(http::Transport& transport, std::string endpoint, PollOptions poll);

  std::optional<nlohmann::json> get_repository(const std::string& project,
                                               const std::string& location,
                                               const std::string& repo);
  // Creates a DOCKER repository (waiting for the operation); an existing one is returned as is.
  // Returns {repository, created}.
  std::pair<nlohmann::json, bool> ensure_repository(const std::string& project,
                                                    const std::string& location,
                                                    const std::string& repo,
                                                    const std::string& description);
  // false when it did not exist.
  bool delete_repository(const std::string& project, const std::string& location,
                         const std::string& repo);
  // packages.tags.get: whether PACKAGE:TAG exists (PACKAGE may contain '/', sent as %2F).
  bool has_tag(const std::string& project, const std::string& location, const std::string& repo,
               const std::string& package, const std::string& tag);

 private:
  http::Transport& transport_;
  std::string endpoint_;
  PollOptions poll_;
};

}  // namespace kinetic::gcp
