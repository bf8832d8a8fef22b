// Finding a job by the id a user typed, with "did you mean" when it is not there.
#pragma once

#include <string>

#include "backend/backend.h"
#include "pipeline/pipeline_record.h"

namespace kinetic::cli {

JobStatus require_job(JobStore& backend, const std::string& id);

// Where BACKEND keeps pipelines' records; Error(unsupported) where pipelines do not run.
std::unique_ptr<PipelineRecords> pipeline_records(Backend& backend);

// Usage error unless ID looks like a job id (job-1a2b3c4d) or a pipeline id (pipe-1a2b3c4d).
void require_job_or_pipeline_id(const std::string& id);

// "3m" style age of an RFC 3339 time, or "" when unknown.
std::string age_of(const std::string& rfc3339_time);

}  // namespace kinetic::cli
