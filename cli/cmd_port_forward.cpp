// kinetic port-forward JOB [LOCAL:]REMOTE... [--host N] [--address A]: ports of a running job
// reached from this machine, as `kubectl port-forward` reaches a pod's, until Ctrl-C or the
// job's end (backend/port_forwarder.h).
#include "app.h"
#include "backend/port_forwarder.h"
#include "core/signal_pipe.h"
#include "job/spec.h"
#include "job_lookup.h"

namespace kinetic::cli {

namespace {

using ojson = nlohmann::ordered_json;

struct PortForwardOptions : PrintingOptions {
  std::string job;
  std::vector<std::string> specs;
  std::vector<PortMapping> mappings;
  int host = 0;
  std::string address = "127.0.0.1";

  PortForwardOptions() : PrintingOptions({OutputFormat::table, OutputFormat::json}) {}

  void validate() const override {
    require_job_id(job);
    if (host < 0) throw Error(Errc::usage, "--host must be 0 or more (a slice's host index)");
    for (const auto& s : specs) parse_port_mapping(s);
  }

  void print_listening(Factory& f, const PortForwarder& forwarder) const {
    FILE* out = f.io().out;
    if (format == OutputFormat::json) {
      ojson ports = ojson::array();
      for (const auto& m : forwarder.mappings())
        ports.push_back({{"local", m.local}, {"remote", m.remote}});
      const ojson doc = {
          {"job", job}, {"host", host}, {"address", forwarder.address()}, {"ports", ports}};
      std::fprintf(out, "%s\n", doc.dump().c_str());
    } else {
      for (const auto& m : forwarder.mappings())
        std::fprintf(out, "Forwarding from %s:%d -> %d\n", forwarder.address().c_str(), m.local,
                     m.remote);
    }
    std::fflush(out);
  }

  int run(Factory& f) override {
    for (const auto& s : specs) mappings.push_back(parse_port_mapping(s));
    Backend& b = f.backend("port-forward");
    require_job(b, job);
    std::unique_ptr<PortDialer> dialer = b.port_dialer(job, host);
    PortForwarder forwarder(*dialer, address, mappings);
    SignalPipe signals;  // Ctrl-C, SIGTERM, SIGHUP: close every connection, then exit
    if (address != "127.0.0.1" && address != "localhost")
      f.io().warn("listening on " + address +
                  ": whoever can reach this machine there reaches the job's ports, with no "
                  "credentials");
    print_listening(f, forwarder);
    f.io().info("to " + dialer->where() + "; Ctrl-C ends the forward");
    const std::string ended =
        forwarder.serve(signals.fd(), [&f](const std::string& line) { f.io().warn(line); });
    // Ctrl-C is how a forward ends when all went well, as with kubectl.
    if (ended.empty()) return 0;
    throw Error(Errc::not_found, ended);
  }
};

}  // namespace

void add_port_forward(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<PortForwardOptions>();
  CLI::App* c = root.add_subcommand(
      "port-forward",
      "Forward local ports to a running job's ports, as kubectl port-forward does to a pod");
  c->add_option("job", o->job, "Job id (see `kinetic status`)")->required();
  c->add_option("ports", o->specs,
                "REMOTE, LOCAL:REMOTE, or :REMOTE (any free local port, printed)")
      ->required();
  c->add_option("--host", o->host,
                "Which host of a multi-host slice (default 0; see `kinetic logs --all-hosts`)");
  c->add_option("--address", o->address,
                "The local address to listen on (default 127.0.0.1; 0.0.0.0: every interface)");
  c->footer(
      "One line per port, `Forwarding from ADDRESS:LOCAL -> REMOTE`, once it listens (-o json: "
      "one object with the ports). Many connections at once; on gke each is a pods/portforward "
      "WebSocket to the job's pod, locally a connection to 127.0.0.1:REMOTE. Runs until Ctrl-C "
      "(exit 0) or the job ends (exit 1 with a line saying so). Bad ports or a local port in use "
      "exit 2; no such job or a job not running, 1.\n\n"
      "Examples:\n"
      "  kinetic port-forward job-1a2b3c4d 6006            # TensorBoard at localhost:6006\n"
      "  kinetic port-forward job-1a2b3c4d 9000:8000 :5678\n"
      "  kinetic port-forward job-1a2b3c4d --host 1 8080");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
