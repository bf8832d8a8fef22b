// A pipeline run's record, kept as the run goes (docs/pipelines.md "Detached and observable"):
// its PipelineRun document, written when the run starts and rewritten whenever a step starts or
// ends, read by `status`, `logs` and `cancel`. Where it lives is the backend's: the local one keeps
// it in the state directory (LocalPipelineRecords below); on GKE it will be the bucket's
// pipelines/ID/pipeline.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fs.h"

namespace kinetic {

using PipelineDocument = nlohmann::ordered_json;

class PipelineRecords {
 public:
  virtual ~PipelineRecords() = default;
  // The record of pipeline ID as last saved (kind and schema_version included); nullopt when
  // there is none.
  virtual std::optional<PipelineDocument> load(const std::string& id) = 0;
  // Replaces the record of pipeline ID with DOC, atomically: a reader sees one or the other whole.
  virtual void save(const std::string& id, const PipelineDocument& doc) = 0;
  // Every record, newest first (by `created`).
  virtual std::vector<PipelineDocument> list() = 0;
  // Asks ID's runner to start no more steps (it looks between steps; `cancel` also wakes it).
  virtual void request_cancel(const std::string& id) = 0;
  virtual bool cancel_requested(const std::string& id) = 0;
  // Who runs a pipeline from this process: the record's `runner`.
  virtual nlohmann::ordered_json this_runner() = 0;
  // Whether the runner DOC's `runner` names is still at work.
  virtual bool runner_alive(const PipelineDocument& doc) = 0;
  // Wakes that runner to look at the cancel mark now (local: SIGTERM, which it takes as Ctrl-C).
  // False when it is gone.
  virtual bool wake_runner(const PipelineDocument& doc) = 0;
};

// STATE/pipelines/runs/ID.json (the record), ID.cancel (cancel asked), ID.log (a detached
// runner's output). The runner is a process of this machine, named by pid, start time and boot
// (backend/local/process_identity.h), so a reused pid never passes for it.
class LocalPipelineRecords : public PipelineRecords {
 public:
  explicit LocalPipelineRecords(fs::path state_dir);
  std::optional<PipelineDocument> load(const std::string& id) override;
  void save(const std::string& id, const PipelineDocument& doc) override;
  std::vector<PipelineDocument> list() override;
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

// True for "pipe-" and 8 lowercase hex digits.
bool looks_like_pipeline_id(const std::string& s);

// Pipeline ID's record as `status` shows it: a record still `running` whose runner is gone (killed,
// or the machine restarted) reads `lost`, exit code 125. nullopt when there is none.
std::optional<PipelineDocument> pipeline_view(PipelineRecords& records, const std::string& id);

// Pipeline ID's record, or Error(not_found) naming the nearest ids ("did you mean").
PipelineDocument require_pipeline(PipelineRecords& records, const std::string& id);

// Whether a pipeline's state is final (succeeded, failed, cancelled, lost).
bool pipeline_finished(const PipelineDocument& doc);

}  // namespace kinetic
