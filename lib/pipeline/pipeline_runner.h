// `kinetic pipeline run` (docs/pipelines.md): a pipeline file's steps, each a job of its own run
// by the single-job machinery (run/pipeline.h prepare_job, run_prepared), in dependency order,
// steps that do not need one another at the same time (up to max_parallel), each step's inputs
// the outputs of the steps it needs, and a step whose key is unchanged reused from the cache.
#pragma once

#include <string>
#include <vector>

#include "pipeline/pipeline_record.h"
#include "render/output.h"
#include "run/pipeline.h"

namespace kinetic {

struct PipelineRequest {
  std::string file = "kinetic.yaml";  // -f, relative to the working directory
  std::vector<std::string> only;      // --only STEP (repeatable)
  std::string from;                   // --from STEP
  std::vector<std::string> force;     // --force STEP (repeatable)
  int max_parallel = 4;
  OutputFormat format = OutputFormat::table;  // -o json|yaml: a PipelineRun document
  // --detach: once every step is planned, a runner process of its own session runs them (its
  // output in STATE/pipelines/runs/ID.log) and the call returns at once.
  bool detach = false;
};

// Runs the pipeline on ENV's backend, outputs into ENV.cwd/kinetic-out/PIPELINE-ID/STEP/, and
// returns the exit code: 0 when every step succeeded or was reused, else the code of the first
// step (in the pipeline's order) that failed. A malformed file, a cycle, a missing need or a
// step that cannot be prepared throws Error before any step runs. The run's record (its
// PipelineRun document) is in RECORDS from the start, rewritten whenever a step starts or ends.
// With req.detach it returns 0 once the detached runner has written its first record, printing
// the pipeline's id (or, with -o json|yaml, that record).
int run_pipeline_file(const PipelineRequest& req, const RunEnvironment& env,
                      PipelineRecords& records);

// Throws Error(Errc::unsupported) unless pipelines run on BACKEND (local, in this build).
void require_pipeline_backend(const std::string& backend);

// A fresh pipeline id: "pipe-" + 8 random lowercase hex digits.
std::string new_pipeline_id();

}  // namespace kinetic
