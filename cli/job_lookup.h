// Finding a job by the id a user typed, with "did you mean" when it is not there.
#pragma once

#include <string>

#include "backend/backend.h"

namespace kinetic::cli {

JobStatus require_job(Backend& backend, const std::string& id);

// "3m" style age of an RFC 3339 time, or "" when unknown.
std::string age_of(const std::string& rfc3339_time);

}  // namespace kinetic::cli
