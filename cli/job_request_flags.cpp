#include "job_request_flags.h"

#include "job/budget.h"
#include "job/data_mount.h"
#include "job/spec.h"

namespace kinetic::cli {

void JobRequestFlags::complete(RunRequest& req) const {
  if (!max_cost.empty()) req.max_cost_usd = parse_usd(max_cost, "--max-cost");
  req.data.clear();
  for (const auto& value : data) req.data.push_back(parse_data_flag(value));
  req.labels.clear();
  for (const auto& value : labels) req.labels.push_back(parse_label(value, "--label"));
}

}  // namespace kinetic::cli
