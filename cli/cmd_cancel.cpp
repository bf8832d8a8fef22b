// kinetic cancel JOB...: stop jobs and clean up after them.
#include "app.h"
#include "core/duration.h"
#include "job/spec.h"
#include "job_lookup.h"

namespace kinetic::cli {

namespace {

struct CancelOptions : CommandOptions {
  std::vector<std::string> jobs;

  void validate() const override {
    for (const auto& id : jobs) require_job_id(id);
  }

  int run(Factory& f) override {
    Backend& b = f.backend("cancel");
    for (const auto& id : jobs) require_job(b, id);  // all known before any is touched
    for (const auto& id : jobs) {
      JobStatus before = *b.get(id);
      if (is_held(before, rfc3339(now_unix()))) {
        // A job that failed and is held for `exec` (--hold-on-failure): its verdict stands.
        b.cancel(id);
        f.io().info(id + " " + before.state + "; its hold (--hold-on-failure) is released");
        continue;
      }
      if (before.terminal()) {
        f.io().info(id + " already " + before.state);
        continue;
      }
      JobStatus after = b.cancel(id);
      f.io().info(id + " " + after.state);
    }
    return 0;
  }
};

}  // namespace

void add_cancel(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<CancelOptions>();
  CLI::App* c = root.add_subcommand("cancel", "Stop running jobs and clean up after them");
  c->add_option("jobs", o->jobs, "Job ids")->required();
  c->footer("Examples:\n  kinetic cancel job-1a2b3c4d\n  kinetic cancel $(kinetic status -o name)");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
