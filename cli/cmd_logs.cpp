// kinetic logs JOB [-f]: the job's output, following it while it runs.
#include "app.h"
#include "backend/stream_sink.h"
#include "job/spec.h"
#include "job_lookup.h"

namespace kinetic::cli {

namespace {

struct LogsOptions : CommandOptions {
  std::string job;
  bool follow = false;
  bool all_hosts = false;

  void validate() const override { require_job_id(job); }

  int run(Factory& f) override {
    Backend& b = f.backend("logs");
    require_job(b, job);
    StreamSink sink(f.io());
    b.stream_logs(job, {.follow = follow, .all_hosts = all_hosts}, sink, nullptr);
    return 0;
  }
};

}  // namespace

void add_logs(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<LogsOptions>();
  CLI::App* c = root.add_subcommand("logs", "Print a job's logs, following them with -f");
  c->add_option("job", o->job, "Job id (see `kinetic status`)")->required();
  c->add_flag("-f,--follow", o->follow, "Keep streaming until the job ends");
  c->add_flag("--all-hosts", o->all_hosts,
              "Every host of a multi-host slice, each line prefixed [host N] (default: host 0)");
  c->footer(
      "Examples:\n"
      "  kinetic logs job-1a2b3c4d\n"
      "  kinetic logs -f job-1a2b3c4d\n"
      "  kinetic logs --all-hosts job-1a2b3c4d   # a v5litepod-16's four hosts");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
