#include "backend/stopped_verdict.h"

#include "backend/backend.h"
#include "core/error.h"
#include "job/budget.h"

namespace kinetic {

StoppedVerdict cancelled_verdict() {
  return {std::string(kCancelled), exit_codes::interrupted, std::string(kCancelled)};
}

StoppedVerdict deadline_verdict(const JobSpec& spec) {
  const long limit = spec.timeout_seconds.value_or(0);
  // The budget is the deadline only when it is the sooner of the two (job/budget.h).
  if (spec.max_cost_usd && spec.budget_seconds && *spec.budget_seconds == limit)
    return {std::string(kTimedOut), exit_codes::timeout,
            budget_stop_message(*spec.max_cost_usd, limit, spec.accelerator)};
  return {std::string(kTimedOut), exit_codes::timeout,
          "timed out after " + std::to_string(limit) + "s (--timeout)"};
}

}  // namespace kinetic
