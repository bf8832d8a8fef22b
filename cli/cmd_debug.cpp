// kinetic debug JOB [--port N]: a debugger for a running job started with `run --debug`: a
// local port forwarded to debugpy in the job (host 0) and the launch configuration to attach
// with, until Ctrl-C or the job's end (run/debug_attach.h; docs/serving.md "Debugging").
#include "app.h"
#include "core/signal_pipe.h"
#include "job/spec.h"
#include "job_lookup.h"
#include "run/debug_attach.h"

namespace kinetic::cli {

namespace {

using ojson = nlohmann::ordered_json;

struct DebugOptions : PrintingOptions {
  std::string job;
  int port = 0;  // 0: 5678 when free, else any free port
  std::string address = "127.0.0.1";

  DebugOptions() : PrintingOptions({OutputFormat::table, OutputFormat::json}) {}

  void validate() const override {
    require_job_id(job);
    if (port < 0 || port > 65535)
      throw Error(Errc::usage, "--port must be 1 to 65535 (default 5678 when free, else any)");
  }

  // The job's debug record; a job run without --debug has no debugger to reach.
  DebugSpec debug_spec(Backend& b) const {
    const std::optional<JobSpec> spec = b.get_spec(job);
    if (!spec || !spec->debug)
      throw Error(Errc::not_found,
                  job +
                      " was not started with --debug: no debugger waits in it; run it again "
                      "with `kinetic run --debug FILE` (or `kinetic port-forward " +
                      job + " PORT` for a port of its own)");
    return *spec->debug;
  }

  void print_attach(Factory& f, const ojson& launch, const DebugSpec& debug) const {
    FILE* out = f.io().out;
    if (format == OutputFormat::json) {
      const ojson doc = {{"job", job},
                         {"address", launch["connect"]["host"]},
                         {"port", launch["connect"]["port"]},
                         {"remote_port", debug.port},
                         {"launch", launch}};
      std::fprintf(out, "%s\n", doc.dump().c_str());
    } else {
      std::fprintf(out, "%s\n", launch.dump(2).c_str());
    }
    std::fflush(out);
    const ojson& connect = launch["connect"];
    f.io().info("kinetic: " + connect["host"].get<std::string>() + ":" +
                std::to_string(connect["port"].get<int>()) + " -> debugpy's port " +
                std::to_string(debug.port) + " of " + job +
                " (host 0); add the configuration above to .vscode/launch.json's "
                "\"configurations\", then Run > Start Debugging (F5); Ctrl-C ends the forward");
  }

  int run(Factory& f) override {
    Backend& b = f.backend("debug");
    require_job(b, job);
    const DebugSpec debug = debug_spec(b);
    std::unique_ptr<PortDialer> dialer = b.port_dialer(job, 0);
    const auto forwarder = debug_forwarder(*dialer, address, port, debug.port);
    SignalPipe signals;  // Ctrl-C, SIGTERM, SIGHUP: close every connection, then exit
    if (address != "127.0.0.1" && address != "localhost")
      f.io().warn("listening on " + address +
                  ": whoever can reach this machine there reaches the job's debugger, which runs "
                  "any code it is sent, with no credentials");
    const ojson launch =
        launch_configuration(job, forwarder->address(), forwarder->mappings().front().local,
                             local_root_here(debug), debug.remote_root);
    print_attach(f, launch, debug);
    const std::string ended =
        forwarder->serve(signals.fd(), [&f](const std::string& line) { f.io().warn(line); });
    if (ended.empty()) return 0;
    throw Error(Errc::not_found, ended);
  }
};

}  // namespace

void add_debug(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<DebugOptions>();
  CLI::App* c = root.add_subcommand(
      "debug", "Attach a debugger to a running job started with `run --debug` (debugpy, host 0)");
  c->add_option("job", o->job, "Job id (see `kinetic status`)")->required();
  c->add_option("--port", o->port,
                "The local port to forward (default 5678, debugpy's own, when free; else any "
                "free port)");
  c->add_option("--address", o->address,
                "The local address to listen on (default 127.0.0.1; 0.0.0.0: every interface)");
  c->footer(
      "Forwards a local port to debugpy in the job (its host 0) and prints the VS Code launch "
      "configuration that attaches to it (-o json: one object with the ports and the "
      "configuration). Runs until Ctrl-C (exit 0) or the job ends (exit 1). A job not running, "
      "or not started with --debug, exits 1; a local port in use, 2.\n\n"
      "Examples:\n"
      "  kinetic run train.py --debug --detach     # then:\n"
      "  kinetic debug job-1a2b3c4d\n"
      "  kinetic debug job-1a2b3c4d --port 5679 -o json");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
