// Where a pipeline run's record is kept (docs/pipelines.md "Detached and observable"): its
// PipelineRun document, written when the run starts and rewritten whenever a step starts or
// ends, read by `status`, `logs` and `cancel`. Where it lives is the backend's: the local one
// keeps it in the state directory (backend/local/local_pipeline_records.h), gke in the job bucket
// (backend/gke/gke_pipeline_records.h), so a pipeline run on a cluster is seen from any machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "job/spec.h"

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
  // Removes the record of pipeline ID and what goes with it (its cancel mark, a local runner's
  // log): `kinetic cleanup` of a finished run. Its steps' jobs and outputs are not touched.
  virtual void remove(const std::string& id) = 0;
  // Asks ID's runner to start no more steps (it looks between steps; `cancel` also wakes it).
  virtual void request_cancel(const std::string& id) = 0;
  virtual bool cancel_requested(const std::string& id) = 0;
  // Who runs a pipeline from this process: the record's `runner`.
  virtual nlohmann::ordered_json this_runner() = 0;
  // Whether the runner DOC's `runner` names is still at work.
  virtual bool runner_alive(const PipelineDocument& doc) = 0;
  // Wakes that runner to look at the cancel mark now (a process: SIGTERM, which it takes as
  // Ctrl-C; the in-cluster runner looks every few seconds). False when it is gone.
  virtual bool wake_runner(const PipelineDocument& doc) = 0;
};

// True for "pipe-" and 8 lowercase hex digits.
inline bool looks_like_pipeline_id(const std::string& s) {
  return looks_like_id(s, "pipe-");
}

}  // namespace kinetic
