// The local backend's PipelineStore (backend.h): documents under STATE/pipelines/, and a step's
// outputs where its job delivered them (./kinetic-out/PIPELINE-ID/STEP/), which a later run
// copies rather than moves, so the cache follows the newest copy.
#pragma once

#include "backend/backend.h"

namespace kinetic {

class LocalPipelineStore final : public PipelineStore {
 public:
  explicit LocalPipelineStore(fs::path state_dir) : root_(std::move(state_dir) / "pipelines") {}

  std::optional<std::string> read(const std::string& name) override;
  void write(const std::string& name, const std::string& data) override;
  // OUTPUT_DIR itself: a local job reads its inputs from this machine's folders.
  std::string outputs_of(const std::string& job, const fs::path& output_dir) const override;
  // The folder's status.json says succeeded (deleting ./kinetic-out makes the steps run again).
  bool outputs_present(const std::string& location) override;
  void fetch_outputs(const std::string& location, const fs::path& dir) override;
  std::string location(const std::string& name) const override { return path_of(name).string(); }

 private:
  fs::path path_of(const std::string& name) const;
  fs::path root_;
};

}  // namespace kinetic
