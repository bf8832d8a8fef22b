// kinetic serve FILE|--image IMAGE --port P [flags] [-- ARGS]: a long-running server, started as
// `run` starts a job and reached at a local URL until Ctrl-C (run/serve.h); its subcommands
// ls, status, logs and stop are in cmd_serve_manage.cpp.
#include "app.h"
#include "config/paths.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/budget.h"
#include "job/data_mount.h"
#include "job/spec.h"
#include "job_request_flags.h"
#include "run/serve.h"

namespace kinetic::cli {

void add_serve_manage(CLI::App& serve, Action& action);

namespace {

struct ServeOptions : CommandOptions {
  ServeRequest req;
  JobRequestFlags job;
  std::string idle_stop;
  std::string ready_timeout;

  void complete(Factory& f) override {
    req.run.args = f.globals().job_args;
    req.format = f.format({OutputFormat::table, OutputFormat::json});
    job.complete(req.run);
    if (!idle_stop.empty()) req.idle_stop_seconds = parse_duration(idle_stop, "--idle-stop");
    if (!ready_timeout.empty())
      req.ready_timeout_seconds =
          static_cast<double>(parse_duration(ready_timeout, "--ready-timeout"));
  }

  void validate() const override {
    if (req.run.file.empty())
      throw Error(Errc::usage,
                  "nothing to serve; usage: kinetic serve FILE --port P [-- ARGS] (FILE starts "
                  "the server, in kinetic's image or --image IMAGE)");
    if (req.port < 1 || req.port > 65535)
      throw Error(Errc::usage,
                  "--port must be the port the server listens on, 1 to 65535, e.g. --port 8000");
    if (req.local_port < 0 || req.local_port > 65535)
      throw Error(Errc::usage, "--local-port must be 1 to 65535 (default: any free port)");
    if (req.ready_timeout_seconds <= 0)
      throw Error(Errc::usage, "--ready-timeout must be at least 1s, e.g. --ready-timeout 20m");
    if (!req.from.empty()) require_job_id(req.from);
    if (req.detach && req.local_port != 0)
      throw Error(Errc::usage,
                  "--local-port is where a foreground serve forwards; with --detach, forward "
                  "with `kinetic port-forward SERVER LOCAL:PORT`");
    check_data_mounts(req.run.data);
  }

  int run(Factory& f) override {
    RunEnvironment env{f.settings(),        f.env(), f.io(),
                       f.state_dir(),       f.cwd(), home_dir(f.env()),
                       &f.backend("serve"), nullptr};
    return serve(req, env);
  }
};

void add_job_flags(CLI::App* c, ServeOptions& o) {
  c->add_option("file", o.req.run.file,
                "The server: a .py, .sh, .cpp/.cc file or an executable (or --image)");
  add_job_request_options(c, o.req.run, o.job, "server");
  c->add_option("--max-cost", o.job.max_cost,
                "Stop the server once it has cost this many dollars at list price, e.g. 20");
}

}  // namespace

void add_serve(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* c = root.add_subcommand(
      "serve", "Run a long-running server and reach it at a local URL (ls, status, logs, stop)");
  add_job_flags(c, *o);
  c->add_option("-p,--port", o->req.port,
                "The port the server listens on, in the job (also $KINETIC_SERVE_PORT)");
  c->add_option("--local-port", o->req.local_port,
                "Where the local URL is (default: any free port, printed)");
  c->add_option("--from", o->req.from,
                "A job that succeeded whose outputs the server reads, at "
                "$KINETIC_INPUT_DIR/JOB/ (e.g. fine-tuned weights)");
  c->add_option("--idle-stop", o->idle_stop,
                "Stop the server after this long without a connection to --port, e.g. 30m "
                "(default: never; see docs/serving.md for how requests are counted)");
  c->add_option("--ready-timeout", o->ready_timeout,
                "How long the server may take to answer on --port, e.g. 20m (default 10m)");
  c->add_flag("-d,--detach", o->req.detach,
              "Print the server's id once it answers and leave it up (`kinetic serve stop ID`)");
  c->footer(
      "Starts the server as `kinetic run` starts a job (same image, data, --env, cost), waits "
      "until its port accepts a connection, then prints `Serving at http://127.0.0.1:LOCAL` and "
      "its log until Ctrl-C, which stops it and removes everything kinetic made for it.\n\n"
      "Examples:\n"
      "  kinetic serve examples/serve-http/server.py --port 8000\n"
      "  kinetic serve server.py -p 8000 --detach     # then: kinetic serve ls\n"
      "  kinetic serve examples/serve-gemma/serve.sh --image vllm/vllm-tpu:nightly -a "
      "v5litepod-4 -p 8000 --from job-1a2b3c4d\n"
      "  kinetic serve stop job-1a2b3c4d\n"
      "\nExit code: 0 stopped with Ctrl-C (with --detach: up and answering); 1 the server "
      "ended by itself, did not answer within --ready-timeout (it is left up) or could not "
      "start; 2 bad flags or --local-port in use; 130 Ctrl-C before it answered (it is stopped).");
  // `serve ls` and the others are subcommands: the server itself only when none was given.
  c->callback([&action, o, c] {
    if (c->get_subcommands().empty()) action = o;
  });
  add_serve_manage(*c, action);
}

}  // namespace kinetic::cli
