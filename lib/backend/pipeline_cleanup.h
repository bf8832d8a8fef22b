// `kinetic cleanup` of finished pipeline runs' records, by the same rule as jobs' records
// (backend/cleanup_policy.h; docs/run-record.md "How long a record is kept").
#pragma once

#include <vector>

#include "backend/backend.h"
#include "backend/cleanup_policy.h"
#include "backend/pipeline_records.h"

namespace kinetic {

// The records of RECORDS' finished runs that POLICY removes at NOW, removed unless DRY_RUN. A run
// still running, or whose runner is gone without saying how it ended (`status` shows it lost),
// stays: when it finished is not known. Its steps' jobs are records of their own.
std::vector<CleanupItem> prune_pipeline_records(PipelineRecords& records,
                                                const CleanupPolicy& policy, double now,
                                                bool dry_run);

}  // namespace kinetic
