// The run pipeline (docs/architecture.md "The job's journey"): resolve, package, image, stage,
// submit, watch, stream, collect, clean — the same steps on every backend.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
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
  // --function CALL: a pickled Python call instead of FILE (job/function_call.h).
  std::string function;
  // --with REQ: requirement lines added to kinetic's own image (e.g. cloudpickle==3.0.0).
  std::vector<std::string> with;
  // --label K=V, parsed (job/spec.h parse_label).
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::string> args;
  std::string accelerator;  // empty: cpu
  bool spot = false;
  bool flex_start = false;  // --flex-start: flex-start capacity (docs/capacity.md)
  int slices = 1;  // --slices N: multislice, N slices of a multi-host TPU (docs/multihost.md)
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
  // --debug: the job's Python starts under debugpy, waiting for a debugger on DEBUG_PORT in the
  // job (job/debug_spec.h); a foreground run forwards a local port to it (run/debug_attach.h).
  bool debug = false;
  int debug_port = kDebugPort;
  bool dry_run = false;
  std::optional<long> timeout_seconds;
  std::optional<double> max_cost_usd;  // --max-cost: becomes a deadline (job/budget.h)
  // --timeout-from: what the deadline counts from, "submit" (empty: the wait for capacity
  // counts) or "start" (the job's first start on a node: it does not; docs/capacity.md).
  std::string timeout_from;
  int retries = 0;
  int max_preemptions = 10;                         // docs/run-record.md
  std::optional<long> checkpoint_interval_seconds;  // default: the spec's
  long hold_on_failure_seconds = 0;                 // --hold-on-failure
  std::string priority;  // --priority low|normal|high (a queued cluster's; empty: normal)
  OutputFormat format = OutputFormat::table;
  bool format_given = false;
  // A pipeline step's inputs (job/spec.h JobSpec::inputs): each needed step's name and where its
  // outputs are.
  std::vector<std::pair<std::string, std::string>> inputs;
  // Files (absolute) left out of the context: a pipeline's own file, whose steps' fields are in
  // their keys already, so editing one step does not change every step's context.
  std::vector<std::string> exclude;
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

// A job resolved, packaged and staged (steps 1, 2 and 4) but not submitted, for a caller that
// decides whether and when it runs: `kinetic pipeline run` (lib/pipeline/) reuses a step whose
// inputs are unchanged, and those inputs include the context's hash and the image's tag.
struct PreparedJob {
  JobSpec spec;  // a fresh id and output_dir; run_prepared sets its image
  // The values of spec.secret_env: they never reach a record, a log or a key.
  std::map<std::string, std::string> secrets;
  std::optional<ImageRecipe> recipe;  // kinetic's own image; empty with --image
  std::string image_tag;              // what the job runs in: the recipe's tag, else --image
};

// Steps 1, 2 and 4 of REQ (no dry run, no --detach). Throws Error as run_pipeline does.
PreparedJob prepare_job(const RunRequest& req, const RunEnvironment& env);

// Steps 3 and 5-9 of a prepared job, followed in the foreground: the image (built when
// missing), submit, the job's output into SINK until it ends, collect, clean. INTERRUPT (or
// null) as Backend::stream_logs. Returns the job's final status; throws Error when it cannot
// start or be followed (the message says how to get back to a job that may still run). Jobs
// may run from several threads at once, each with its own SINK, on a backend that allows it
// (the local one does).
JobStatus run_prepared(PreparedJob& job, const RunEnvironment& env, LogSink& sink,
                       const Interrupt* interrupt);

// The process exit code a job's final status stands for (README "Exit codes").
int exit_code_of(const JobStatus& st);

// A run's last line: how JOB ended, after how many attempts, why, and where its outputs are
// (relative to CWD when inside it):
//   kinetic: job-5c7cbd62 succeeded in 3m02s; outputs in kinetic-out/job-5c7cbd62/
std::string summary_line(const JobStatus& st, const JobSpec& spec, const fs::path& cwd);

// How job ID ended (ST), its attempts and why, without where its outputs are (`kinetic wait`):
//   job-5c7cbd62 failed (exit 3) after 12s: ValueError: bad shape
std::string verdict_line(const JobStatus& st, const std::string& id);

}  // namespace kinetic
