// kinetic run FILE [flags] [-- ARGS]: the job's whole journey (job/pipeline.h).
#include <algorithm>

#include "app.h"
#include "config/paths.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/budget.h"
#include "job/data_mount.h"
#include "job/spec.h"
#include "job_request_flags.h"
#include "run/pipeline.h"

namespace kinetic::cli {

namespace {

struct RunOptions : CommandOptions {
  RunRequest req;
  JobRequestFlags job;
  std::string timeout;
  std::string checkpoint_interval;
  std::string hold_on_failure;

  void complete(Factory& f) override {
    req.args = f.globals().job_args;
    req.format = f.format({OutputFormat::table, OutputFormat::json, OutputFormat::yaml});
    req.format_given = !f.globals().format.empty();
    if (!timeout.empty()) req.timeout_seconds = parse_duration(timeout, "--timeout");
    job.complete(req);
    if (!checkpoint_interval.empty())
      req.checkpoint_interval_seconds =
          parse_duration(checkpoint_interval, "--checkpoint-interval");
    if (!hold_on_failure.empty())
      req.hold_on_failure_seconds = parse_duration(hold_on_failure, "--hold-on-failure");
  }

  void validate() const override {
    if (req.file.empty() && req.function.empty())
      throw Error(Errc::usage, "no job file given; usage: kinetic run FILE [-- ARGS]");
    if (!req.file.empty() && !req.function.empty())
      throw Error(Errc::usage, "pass a job FILE or --function CALL, not both");
    if (req.timeout_seconds && *req.timeout_seconds <= 0)
      throw Error(Errc::usage, "--timeout must be positive, e.g. --timeout 30m");
    if (!req.timeout_from.empty() && req.timeout_from != "submit" && req.timeout_from != "start")
      throw Error(Errc::usage,
                  "--timeout-from takes submit (the wait for capacity counts) or "
                  "start (it does not), not '" +
                      req.timeout_from + "'");
    if (!req.timeout_from.empty() && !req.timeout_seconds && !req.max_cost_usd)
      throw Error(Errc::usage,
                  "--timeout-from says what --timeout counts from; pass --timeout "
                  "(or --max-cost) too, or drop it");
    if (req.retries < 0 || req.retries > 100)
      throw Error(Errc::usage, "--retries must be between 0 and 100");
    if (req.max_preemptions < 0 || req.max_preemptions > 1000)
      throw Error(Errc::usage, "--max-preemptions must be between 0 and 1000");
    if (req.hold_on_failure_seconds < 0 || req.hold_on_failure_seconds > 24 * 3600)
      throw Error(Errc::usage,
                  "--hold-on-failure must be between 1s and 24h, e.g. --hold-on-failure 15m");
    if (req.checkpoint_interval_seconds && *req.checkpoint_interval_seconds <= 0)
      throw Error(Errc::usage,
                  "--checkpoint-interval must be at least 1s, e.g. --checkpoint-interval 30s");
    check_data_mounts(req.data);
    if (req.grant && std::none_of(req.data.begin(), req.data.end(),
                                  [](const DataMount& m) { return m.is_gcs(); }))
      throw Error(Errc::usage,
                  "--grant gives the job access to its --data gs:// buckets, and it has none");
  }

  int run(Factory& f) override {
    // A dry run asks what the backend would do: it needs neither credentials nor a cluster.
    std::unique_ptr<SubmissionPreview> preview;
    Backend* backend = nullptr;
    if (req.dry_run) {
      preview = f.submission_preview("run --dry-run");
    } else {
      backend = &f.backend("run");
    }
    RunEnvironment env{f.settings(), f.env(),           f.io(),  f.state_dir(),
                       f.cwd(),      home_dir(f.env()), backend, preview.get()};
    return run_pipeline(req, env);
  }
};

// How long a run may go on, and how it is tried again: --timeout and what it counts from,
// --max-cost, --retries, preemptions, checkpoints, --hold-on-failure, a queue's --priority.
void add_run_limits(CLI::App* c, RunOptions& o) {
  c->add_option("--timeout", o.timeout, "Stop the job after this long, e.g. 30m (exit 124)");
  c->add_option("--timeout-from", o.req.timeout_from,
                "What --timeout and --max-cost count from: submit (default: a wait for capacity "
                "counts) or start (the job's first start on a node: it does not)");
  c->add_option("--max-cost", o.job.max_cost,
                "Stop the job once it has cost this many dollars at the accelerator's list "
                "price, e.g. 5 (it becomes the job's deadline; exit 124)");
  c->add_option("--retries", o.req.retries, "Run again up to N times if the job fails");
  c->add_option("--max-preemptions", o.req.max_preemptions,
                "Give up after N preemptions (Spot reclaims, maintenance), which do not count "
                "against --retries (default 10)");
  c->add_option("--checkpoint-interval", o.checkpoint_interval,
                "How often the pod saves changed files of KINETIC_CHECKPOINT_DIR, e.g. 30s "
                "(default 10s; also on SIGTERM and at the end)");
  c->add_option("--hold-on-failure", o.hold_on_failure,
                "When the job fails for good, keep it up this long for `kinetic exec JOB -it -- "
                "bash`, e.g. 15m (its pod and node on gke: they cost meanwhile; `kinetic cancel "
                "JOB` ends it sooner)");
  c->add_option("--priority", o.req.priority,
                "On a cluster with queues (`kinetic up --queue on`): the job's turn, low, normal "
                "(the default) or high; a higher one is admitted first (with --queue fair, within "
                "its namespace; docs/capacity.md)")
      ->check(CLI::IsMember({"low", "normal", "high"}));
}

}  // namespace

void add_run(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* c = root.add_subcommand(
      "run",
      "Run a job (FILE and its project folder) and bring back its logs, outputs and exit code");
  c->add_option("file", o->req.file, "The job: a .py, .sh, .cpp/.cc file or an executable");
  c->add_option("--function", o->req.function,
                "Run a pickled Python call instead of FILE (written by the Python package's "
                "@kinetic.run; see docs/python.md)");
  add_job_request_options(c, o->req, o->job, "job");
  c->add_flag("--flex-start", o->req.flex_start,
              "Run on flex-start capacity, which GKE provides when it has it, without a "
              "reservation; the job waits for it (same as the :flex-start suffix; needs a "
              "`pool add --flex-start` pool; see docs/capacity.md)");
  c->add_option("--with", o->req.with,
                "Also install this requirement in kinetic's own image, e.g. cloudpickle==3.0.0 "
                "(repeatable; it replaces the project's own line for the same package)");
  c->add_option("--notify", o->req.notify,
                "POST a JSON summary of the job to this https URL when it ends, e.g. a Slack or "
                "Google Chat webhook (repeatable; default: the context's notify setting; kept "
                "secret like --env values)");
  c->add_option("--output", o->req.output, "Where outputs go (default ./kinetic-out/JOB)");
  c->add_flag("-d,--detach", o->req.detach, "Print the job id and leave the job running");
  c->add_flag("--debug", o->req.debug,
              "Start the job's Python under debugpy, waiting up to 10m for a debugger: a local "
              "port is forwarded to it and a VS Code launch configuration printed (with "
              "--detach: attach later with `kinetic debug JOB`; see docs/serving.md)");
  c->add_option("--debug-port", o->req.debug_port,
                "The port debugpy listens on in the job (default 5678)");
  c->add_option("--slices", o->req.slices,
                "Multislice: run on N slices of a multi-host TPU at once, joined over the data "
                "center network, each on a node pool of its own (default 1; costs N slices; see "
                "docs/multihost.md)");
  c->add_flag("--all-hosts", o->req.all_hosts,
              "Stream every host of a multi-host slice, each line prefixed [host N] ([slice S "
              "host H] with --slices) (default: host 0; a failing host's last lines are shown "
              "either way)");
  add_run_limits(c, *o);
  c->add_flag("--keep", o->req.keep, "Keep the job's work directory and cloud objects");
  c->add_flag("--dry-run", o->req.dry_run,
              "Print what would happen; with a gke context and -o yaml|json, the manifests");
  c->footer(
      "Packages the context, builds the image only when requirements change, submits, streams the "
      "logs, fetches outputs into ./kinetic-out/JOB/ and exits with the job's exit code.\n\n"
      "Examples:\n"
      "  kinetic run examples/hello/train.py\n"
      "  kinetic run train.py --accelerator v5litepod-1 -- --epochs 3\n"
      "  kinetic run job.cpp --timeout 10m --env WANDB_API_KEY\n"
      "  kinetic run train.py -a v6e-8 --max-cost 20      # stopped once it has cost $20\n"
      "  kinetic run train.py --detach            # then: kinetic logs -f JOB\n"
      "  kinetic run train.py --detach --notify \"$SLACK_WEBHOOK\"   # told when it ends\n"
      "  kinetic run train.py -a v5litepod-8 --spot --retries 2   # preemptions resume from "
      "the checkpoint\n"
      "  kinetic run train.py -a v6e-8 --flex-start --timeout 2h --timeout-from start\n"
      "  kinetic run train.py -a v5litepod-16 --dry-run -o yaml --context my-gke\n"
      "  kinetic run train.py --data ./dataset:data --data gs://my-bucket/imagenet:/imagenet\n"
      "  kinetic run train.py --debug               # attach VS Code, step through the job\n"
      "\nExit code: the job's own; 124 --timeout or --max-cost reached, 125 kinetic failed, 126 "
      "the job could "
      "not start, 127 FILE or its interpreter not found, 130 interrupted, 197 preempted more than "
      "--max-preemptions times.");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
