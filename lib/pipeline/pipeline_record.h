// A pipeline run's record as `status`, `logs` and `cancel` see it, over the backend's
// PipelineRecords (backend/pipeline_records.h).
#pragma once

#include <optional>
#include <string>

#include "backend/pipeline_records.h"

namespace kinetic {

// Pipeline ID's record as `status` shows it: a record still `running` whose runner is gone (killed,
// or the machine restarted) reads `lost`, exit code 125. nullopt when there is none.
std::optional<PipelineDocument> pipeline_view(PipelineRecords& records, const std::string& id);

// Pipeline ID's record, or Error(not_found) naming the nearest ids ("did you mean").
PipelineDocument require_pipeline(PipelineRecords& records, const std::string& id);

// Whether a pipeline's state is final (succeeded, failed, cancelled, lost).
bool pipeline_finished(const PipelineDocument& doc);

}  // namespace kinetic
