// kinetic exec JOB [-it] [--host N] -- CMD [ARGS...]: a command inside a running job, as
// `kubectl exec` runs one in a pod: its output here, its exit code kinetic's.
#include "app.h"
#include "job/spec.h"
#include "job_lookup.h"

namespace kinetic::cli {

namespace {

struct ExecOptions : CommandOptions {
  ExecRequest req;

  void complete(Factory& f) override { req.command = f.globals().job_args; }

  void validate() const override {
    require_job_id(req.job);
    if (req.command.empty())
      throw Error(Errc::usage, "no command to run: kinetic exec " + req.job +
                                   " -- CMD [ARGS...], e.g. kinetic exec " + req.job +
                                   " -it -- bash");
    if (req.host < 0) throw Error(Errc::usage, "--host must be 0 or more (a slice's host index)");
  }

  int run(Factory& f) override {
    Backend& b = f.backend("exec");
    require_job(b, req.job);
    return b.exec(req);
  }
};

}  // namespace

void add_exec(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<ExecOptions>();
  CLI::App* c = root.add_subcommand(
      "exec", "Run a command inside a running job (a shell with -it), as kubectl exec does");
  c->add_option("job", o->req.job, "Job id (see `kinetic status`)")->required();
  c->add_flag("-i,--stdin", o->req.stdin_open, "Pass your stdin to the command");
  c->add_flag("-t,--tty", o->req.tty,
              "Give the command a terminal (with -i: an interactive shell)");
  c->add_option(
      "--host", o->req.host,
      "Which host of a multi-host slice (default 0; see `kinetic logs --all-hosts`); a "
      "multislice run numbers its hosts across slices: slice S's host H is S * HOSTS + H");
  c->footer(
      "The command runs in the job's working directory with the job's environment. Its exit "
      "code is kinetic's.\n\n"
      "Examples:\n"
      "  kinetic exec job-1a2b3c4d -it -- bash\n"
      "  kinetic exec job-1a2b3c4d -- nvidia-smi\n"
      "  kinetic exec job-1a2b3c4d --host 2 -- python3 -c 'import jax; print(jax.devices())'");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
