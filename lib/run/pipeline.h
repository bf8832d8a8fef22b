// The run pipeline (docs/architecture.md "The job's journey"): resolve, package, image, stage,
// submit, watch, stream, collect, clean — the same steps on every backend.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "config/settings.h"
#include "core/duration.h"
#include "core/env.h"
#include "job/data_mount.h"
#include "render/output.h"

namespace kinetic {

struct RunRequest {
  std::string file;
  std::vector<std::string> args;
  std::string accelerator;  // empty: cpu
  bool spot = false;
  std::string requirements;  // explicit requirements file
  std::string context_dir;   // explicit context directory
  std::string image;         // --image: a prebuilt image used as is (no build)
  std::string python;        // --python X.Y for kinetic's own image
  std::vector<std::string> env;
  std::vector<std::string> capture_env;
  std::vector<std::string> notify;  // --notify URLs (else the context's notify setting)
  std::vector<DataMount> data;      // --data, parsed (job/data_mount.h)
  bool grant = false;               // --grant: give the job access to its gs:// data
  std::string output;               // outputs directory (default ./kinetic-out/JOBID)
  bool detach = false;
  bool keep = false;
  bool all_hosts = false;  // stream every host of a multi-host slice, not host 0's alone
  bool dry_run = false;
  std::optional<long> timeout_seconds;
  std::optional<double> max_cost_usd;  // --max-cost: becomes a deadline (job/budget.h)
  int retries = 0;
  int max_preemptions = 10;                         // docs/run-record.md
  std::optional<long> checkpoint_interval_seconds;  // default: the spec's
  OutputFormat format = OutputFormat::table;
  bool format_given = false;
};

struct RunEnvironment {
  const Settings& settings;
  const Env& env;
  IOStreams& io;
  fs::path state_dir;
  fs::path cwd;
  fs::path home;
  // The backend of the selected context: what a run uses.
  Backend* backend = nullptr;
  // What the backend would do: what a dry run uses instead (it needs neither credentials nor a
  // cluster).
  const SubmissionPreview* preview = nullptr;
  // The wall clock (seconds since the epoch), for what the run records and remembers; tests
  // move it instead of sleeping.
  double (*now)() = now_unix;
};

// Runs the job and returns the process exit code (README "Exit codes", core/error.h): the job's own
// code, or 124/125/126/127/130. Failures before the job starts throw Error.
int run_pipeline(const RunRequest& req, const RunEnvironment& env);

}  // namespace kinetic
