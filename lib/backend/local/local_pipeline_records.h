// The local backend's pipeline records (backend/pipeline_records.h): files in the state
// directory, the runner a process of this machine.
#pragma once

#include "backend/pipeline_records.h"
#include "core/fs.h"

namespace kinetic {

// STATE/pipelines/runs/ID.json (the record), ID.cancel (cancel asked), ID.log (a detached
// runner's output). The runner is a process of this machine, named by pid, start time and boot
// (backend/process_identity.h), so a reused pid never passes for it.
class LocalPipelineRecords : public PipelineRecords {
 public:
  explicit LocalPipelineRecords(fs::path state_dir);
  std::optional<PipelineDocument> load(const std::string& id) override;
  void save(const std::string& id, const PipelineDocument& doc) override;
  std::vector<PipelineDocument> list() override;
  void remove(const std::string& id) override;
  void request_cancel(const std::string& id) override;
  bool cancel_requested(const std::string& id) override;
  nlohmann::ordered_json this_runner() override;
  bool runner_alive(const PipelineDocument& doc) override;
  bool wake_runner(const PipelineDocument& doc) override;

  // Checked: an id never walks out of runs/.
  fs::path record_path(const std::string& id) const;
  fs::path log_path(const std::string& id) const;

 private:
  fs::path dir_;
};

}  // namespace kinetic
