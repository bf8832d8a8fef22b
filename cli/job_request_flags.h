// The job flags `run` and `serve` both take as text (cmd_run.cpp, cmd_serve.cpp): --max-cost,
// --data and --label, parsed into a RunRequest the one way.
#pragma once

#include <string>
#include <vector>

#include "run/pipeline.h"

namespace kinetic::cli {

struct JobRequestFlags {
  std::string max_cost;
  std::vector<std::string> data;
  std::vector<std::string> labels;

  // Sets REQ's max_cost_usd, data and labels from the flags; a bad value is Error(usage) naming
  // its flag.
  void complete(RunRequest& req) const;
};

}  // namespace kinetic::cli
