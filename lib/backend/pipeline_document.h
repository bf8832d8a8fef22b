// Reading a pipeline run's record (pipeline.json) that someone else wrote. On gke it is an object
// of the job bucket, which every job pod may rewrite (docs/security.md "What a detached
// pipeline's runner may do"), so it is checked before `status`, `logs`, `cancel` and `cleanup`
// read it: each field they read has the type they read it as, or the record is refused whole.
#pragma once

#include <string>
#include <string_view>

#include "backend/pipeline_records.h"

namespace kinetic {

// The PipelineRun document TEXT holds. Error(Errc::api) naming WHERE and the first field that
// is wrong when TEXT is not JSON, not an object, or has a field of another type than the one
// kinetic writes: strings (id, file, state, output_dir, created, finished, error), exit_code an
// integer or null, detached a boolean, runner an object, steps an array of objects (name, state,
// key, job, error, output_dir, started, finished strings; reused a boolean; exit_code an
// integer or null; duration_seconds a number; needs an array of strings). Missing fields are
// left missing: the readers default them.
PipelineDocument read_pipeline_document(std::string_view text, const std::string& where);

}  // namespace kinetic
