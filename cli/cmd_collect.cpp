// kinetic collect JOB [--output DIR]: a job's outputs and status.json brought here once it has
// ended (a detached job's, or again elsewhere), its summary line, and its exit code, as `run`
// would have given them. The Python API's JobHandle.result() is this (docs/python.md).
#include "app.h"
#include "core/error.h"
#include "job/spec.h"
#include "job_lookup.h"
#include "run/pipeline.h"

namespace kinetic::cli {

namespace {

// Waiting drops the job's output: `kinetic logs -f` is for reading it.
class DiscardSink : public LogSink {
 public:
  void write(LogStream, std::string_view) override {}
};

struct CollectOptions : CommandOptions {
  std::string job;
  std::string output;
  bool no_wait = false;

  void validate() const override { require_job_id(job); }

  int run(Factory& f) override {
    Backend& b = f.backend("collect");
    JobStatus st = require_job(b, job);
    if (!st.terminal() && !is_held(st, rfc3339(now_unix()))) {
      if (no_wait)
        throw Error(Errc::not_found, job + " is " + st.state +
                                         "; collect it once it has ended (without --no-wait, "
                                         "`kinetic collect` waits for it)");
      // Nothing is asked of the job: a Ctrl-C here stops the waiting, not the job.
      DiscardSink discard;
      b.stream_logs(job, {.follow = true}, discard, nullptr);
    }
    std::optional<JobSpec> spec = b.get_spec(job);
    if (!spec)
      throw Error(Errc::not_found, "the record of " + job +
                                       " has no spec.json; it cannot be "
                                       "collected");
    spec->output_dir = output_dir(f);
    st = b.collect(*spec);
    f.io().info(summary_line(st, *spec, f.cwd()));
    return exit_code_of(st);
  }

  std::string output_dir(Factory& f) const {
    const fs::path dir = output.empty()                   ? f.cwd() / "kinetic-out" / job
                         : fs::path(output).is_absolute() ? fs::path(output)
                                                          : f.cwd() / output;
    return dir.lexically_normal().string();
  }
};

}  // namespace

void add_collect(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<CollectOptions>();
  CLI::App* c = root.add_subcommand(
      "collect", "Bring a job's outputs here once it has ended, and exit with its exit code");
  c->add_option("job", o->job, "Job id (see `kinetic status`)")->required();
  c->add_option("--output", o->output, "Where outputs go (default ./kinetic-out/JOB)");
  c->add_flag("--no-wait", o->no_wait, "Fail (exit 1) instead of waiting when the job still runs");
  c->footer(
      "Waits (silently) for the job to end, then brings its outputs and status.json into "
      "./kinetic-out/JOB/ (or --output DIR), prints the job's summary line and exits with its "
      "exit code, as a foreground `kinetic run` would have. The job is only read: stopping "
      "collect leaves it running.\n\n"
      "Examples:\n"
      "  JOB=$(kinetic run train.py --detach)\n"
      "  kinetic collect $JOB                      # waits, then ./kinetic-out/$JOB/\n"
      "  kinetic collect $JOB --output results/    # again, somewhere else\n"
      "\nExit code: the job's own; 124 timed out, 125 lost or kinetic failed, 126 could not "
      "start, 130 cancelled; 1 no such job (or still running with --no-wait).");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
