// What lets a pipeline skip a step (docs/pipelines.md "Cache"), under the state dir:
//
//   STATE/pipelines/cache/KEY.json      the job that produced a step's outputs for KEY, and where
//                                       those outputs are now
//   STATE/pipelines/latest/PATH_SHA.json  per pipeline file: each step's latest outputs, which
//                                       --only and --from hand to the steps they select
//
// An entry counts only while its outputs are still there with their status.json saying
// succeeded: deleting ./kinetic-out is enough to make the steps run again.
#pragma once

#include <optional>
#include <string>

#include "core/fs.h"

namespace kinetic {

struct CachedStep {
  std::string key;
  std::string step;
  std::string job;         // the job that produced the outputs
  std::string pipeline;    // the pipeline run it ran in
  std::string output_dir;  // where the outputs are (absolute)
};

// Whether DIR holds a step's complete outputs: its status.json says succeeded.
bool outputs_present(const fs::path& dir);

class StepCache {
 public:
  explicit StepCache(fs::path state_dir) : root_(std::move(state_dir) / "pipelines") {}

  // KEY's entry when its outputs are still there.
  std::optional<CachedStep> find(const std::string& key) const;
  void remember(const CachedStep& entry) const;

  // The latest outputs of STEP of the pipeline file PIPELINE (absolute path), when still there.
  std::optional<CachedStep> latest(const fs::path& pipeline, const std::string& step) const;
  void remember_latest(const fs::path& pipeline, const CachedStep& entry) const;

 private:
  fs::path latest_path(const fs::path& pipeline) const;
  fs::path root_;
};

}  // namespace kinetic
