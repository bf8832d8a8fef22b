// What lets a pipeline skip a step (docs/pipelines.md "Cache"), in the backend's PipelineStore
// (locally STATE/pipelines/, on gke the bucket's pipelines/):
//
//   cache/KEY.json        the job that produced a step's outputs for KEY, and where those
//                         outputs are now
//   latest/PATH_SHA.json  per pipeline file: each step's latest outputs, which --only and
//                         --from hand to the steps they select
//
// An entry counts only while its outputs are still there (PipelineStore::outputs_present):
// locally, deleting ./kinetic-out is enough to make the steps run again.
#pragma once

#include <optional>
#include <string>

#include "backend/backend.h"
#include "core/fs.h"

namespace kinetic {

struct CachedStep {
  std::string key;
  std::string step;
  std::string job;       // the job that produced the outputs
  std::string pipeline;  // the pipeline run it ran in
  std::string outputs;   // where the outputs are (PipelineStore::outputs_of)
};

class StepCache {
 public:
  // STORE outlives the cache.
  explicit StepCache(PipelineStore& store) : store_(store) {}

  // KEY's entry when its outputs are still there.
  std::optional<CachedStep> find(const std::string& key) const;
  void remember(const CachedStep& entry) const;

  // The latest outputs of STEP of the pipeline file PIPELINE (absolute path), when still there.
  std::optional<CachedStep> latest(const fs::path& pipeline, const std::string& step) const;
  void remember_latest(const fs::path& pipeline, const CachedStep& entry) const;

  // What remember() and remember_latest() write, for a runner that writes them itself (the
  // in-cluster runner of a detached pipeline): KEY's document name, an entry as it is kept, and
  // the name of PIPELINE's latest document (its "steps" map each step to an entry).
  static std::string entry_name(const std::string& key) { return "cache/" + key + ".json"; }
  static nlohmann::json entry_json(const CachedStep& entry);
  static std::string latest_name(const fs::path& pipeline);

 private:
  PipelineStore& store_;
};

}  // namespace kinetic
