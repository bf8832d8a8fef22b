// The job flags `run` and `serve` both take (cmd_run.cpp, cmd_serve.cpp): declared once, with
// one help text, and --max-cost, --data and --label parsed into a RunRequest the one way.
#pragma once

#include <CLI/CLI.hpp>
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

// Adds to C the options that say what a job is and what it is given: -a, --spot, --image,
// --requirements, --python, --context-dir, -e, --capture-env, --data, --grant and --label.
// NOUN ("job", "server") is what the help calls the thing started.
void add_job_request_options(CLI::App* c, RunRequest& req, JobRequestFlags& flags,
                             const std::string& noun);

}  // namespace kinetic::cli
