#include "run/serve.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "backend/port_forwarder.h"
#include "backend/stream_sink.h"
#include "core/backoff.h"
#include "core/duration.h"
#include "core/fs.h"
#include "core/signal_pipe.h"
#include "job/catalog.h"
#include "render/printer.h"

namespace kinetic {

namespace {

// How often readiness is tried: soon at first (a small server is up in well under a second),
// then every 2 s; each try is one connection, so a server that takes minutes to load a model
// sees a few dozen, and `serve` answers within 2 s of the server.
constexpr BackoffCurve kReadyCurve{.initial = std::chrono::milliseconds(100),
                                   .max = std::chrono::milliseconds(2000),
                                   .factor = 2.0};

// --from JOB: where its outputs are for the server, which must be a job that succeeded and
// whose outputs are still all there.
std::pair<std::string, std::string> outputs_input(Backend& backend, const std::string& job) {
  const std::optional<JobStatus> st = backend.get(job);
  if (!st) throw Error(Errc::usage, "--from " + job + ": no such job (see `kinetic status`)");
  if (st->state != kSucceeded)
    throw Error(Errc::usage, "--from " + job + ": the job is " + st->state +
                                 "; a server reads the outputs of a job that succeeded");
  PipelineStore* store = backend.pipeline_store();
  const std::optional<JobSpec> spec = backend.get_spec(job);
  if (!store || !spec)
    throw Error(Errc::unsupported,
                "--from " + job + ": the " + backend.name() + " backend cannot pass outputs on");
  const std::string location = store->outputs_of(job, spec->output_dir);
  if (!store->outputs_present(location))
    throw Error(Errc::usage, "--from " + job + ": its outputs are no longer at " + location +
                                 " (run the job again, or `kinetic collect " + job + "`)");
  return {job, location};
}

// Whether PORT of server ID accepts a connection now. A dialer for a server not yet running
// (gke: its pod pending) or a refused connection is "not yet".
bool answers(Backend& backend, const std::string& id, int port) {
  try {
    std::unique_ptr<PortDialer> dialer = backend.port_dialer(id, 0);
    std::unique_ptr<PortStream> stream = dialer->dial(port);
    return stream != nullptr && stream->error().empty();
  } catch (const Error&) {
    return false;
  }
}

// What `serve` prints on stdout once the server answers: its id (--detach), or where it is
// reached (a foreground serve). -o json: one document on one line, flushed, so that a script
// reading a pipe learns the port before the server's log follows.
void print_ready(const ServeRequest& req, const RunEnvironment& env, const std::string& id,
                 int local_port) {
  FILE* out = env.io.out;
  const std::string url = "http://127.0.0.1:" + std::to_string(local_port);
  if (req.format == OutputFormat::json) {
    nlohmann::ordered_json fields = {{"id", id}, {"state", "running"}, {"port", req.port}};
    if (!req.detach) {
      fields["local_port"] = local_port;
      fields["url"] = url;
    }
    std::fprintf(out, "%s\n", document_of({.kind = "Server", .fields = fields}).dump().c_str());
  } else if (req.detach) {
    std::fprintf(out, "%s\n", id.c_str());
  } else {
    std::fprintf(out, "Serving at %s\n", url.c_str());
  }
  std::fflush(out);
}

// The foreground: the URL's port forwarded to the server on a thread of its own while its log
// streams here, until Ctrl-C (which stops it and removes it: 0) or its end (an error).
int serve_in_foreground(const ServeRequest& req, const RunEnvironment& env, const JobSpec& spec,
                        const SignalPipe& signals) {
  Backend& backend = *env.backend;
  std::unique_ptr<PortDialer> dialer;
  std::optional<PortForwarder> listening;
  try {
    dialer = backend.port_dialer(spec.id, 0);
    listening.emplace(*dialer, "127.0.0.1", std::vector<PortMapping>{{req.local_port, req.port}});
  } catch (const Error&) {
    // --local-port in use: the server started for this serve alone, so it goes too.
    stop_server(backend, spec.id);
    throw;
  }
  PortForwarder& forwarder = *listening;
  print_ready(req, env, spec.id, forwarder.mappings().front().local);
  env.io.info("kinetic: " + spec.id + " answers on port " + std::to_string(req.port) + " (" +
              dialer->where() + "); Ctrl-C stops it");
  int stop_pipe[2];
  if (::pipe2(stop_pipe, O_CLOEXEC) != 0) throw Error(Errc::internal, "pipe failed");
  UniqueFd stop_read(stop_pipe[0]), stop_write(stop_pipe[1]);
  std::thread forwarding([&] {
    try {
      forwarder.serve(stop_read.get(), [&env](const std::string& line) { env.io.warn(line); });
    } catch (const Error& e) {
      env.io.warn(std::string("kinetic: the forward to ") + spec.id + " ended: " + e.what());
    }
  });
  bool interrupted = false;
  Interrupt intr{signals.fd(), [&] {
                   if (!interrupted) env.io.info("kinetic: stopping " + spec.id);
                   interrupted = true;
                   backend.request_cancel(spec.id);
                 }};
  StreamSink sink(env.io);
  std::optional<Error> failure;
  try {
    backend.stream_logs(spec.id, {.follow = true}, sink, &intr);
  } catch (const Error& e) {
    failure = e;
  }
  (void)!::write(stop_write.get(), "x", 1);
  forwarding.join();
  if (failure)
    throw Error(failure->code(), std::string(failure->what()) + "; " + spec.id +
                                     " may still be up: `kinetic serve stop " + spec.id + "`");
  if (interrupted) {
    stop_server(backend, spec.id);
    env.io.info("kinetic: " + spec.id + " stopped");
    return exit_codes::ok;
  }
  const std::optional<JobStatus> st = backend.get(spec.id);
  throw Error(Errc::not_found, spec.id + " ended by itself (" +
                                   (st ? verdict_line(*st, spec.id) : std::string("gone")) +
                                   "); see `kinetic serve logs " + spec.id +
                                   "`, and `kinetic serve stop " + spec.id + "` removes it");
}

}  // namespace

int serve(const ServeRequest& req, const RunEnvironment& env) {
  SignalPipe signals;  // Ctrl-C stops the server, whenever it comes
  const JobSpec spec = start_server(req, env);
  env.io.info("kinetic: " + spec.id + " started; waiting until it answers on port " +
              std::to_string(req.port));
  if (!wait_until_ready(*env.backend, spec.id, req.port, signals.fd(), req.ready_timeout_seconds)) {
    stop_server(*env.backend, spec.id);
    env.io.info("kinetic: " + spec.id + " stopped before it was ready");
    return exit_codes::interrupted;
  }
  if (!req.detach) return serve_in_foreground(req, env, spec, signals);
  print_ready(req, env, spec.id, 0);
  env.io.info("kinetic: " + spec.id + " is serving; `kinetic port-forward " + spec.id + " :" +
              std::to_string(req.port) + "` reaches it, `kinetic serve stop " + spec.id +
              "` stops it");
  return exit_codes::ok;
}

JobSpec start_server(const ServeRequest& req, const RunEnvironment& env) {
  if (!env.backend) throw Error(Errc::internal, "serve: no backend");
  if (!env.backend->capabilities().runs_servers)
    throw Error(Errc::unsupported, "kinetic serve does not run on the " + env.backend->name() +
                                       " backend yet; use a local context, or `kinetic run "
                                       "--detach` and `kinetic port-forward` meanwhile");
  env.backend->check_server(
      ServeSpec{.port = req.port, .idle_stop_seconds = req.idle_stop_seconds});
  RunRequest run = req.run;
  run.detach = false;  // prepare_job's shape; the spec is made detached below
  run.dry_run = false;
  run.labels.emplace_back(std::string(kServeLabel), std::to_string(req.port));
  if (!req.from.empty()) run.inputs.push_back(outputs_input(*env.backend, req.from));
  PreparedJob job = prepare_job(run, env);
  // A server runs until it is stopped: nobody follows it, no deadline of a foreground run's
  // follower stops it, and it has no outputs to deliver.
  job.spec.detached = true;
  job.spec.follower_timeout_seconds = 0;
  job.spec.output_dir.clear();
  job.spec.env.emplace_back(std::string(kServePortVariable), std::to_string(req.port));
  job.spec.serve = ServeSpec{.port = req.port, .idle_stop_seconds = req.idle_stop_seconds};
  job.spec.image = job.recipe ? env.backend->prepare_image(*job.recipe) : job.image_tag;
  env.backend->submit(job.spec, job.secrets);
  return job.spec;
}

bool wait_until_ready(Backend& backend, const std::string& id, int port, int stop_fd,
                      double timeout_seconds) {
  const double deadline = now_unix() + timeout_seconds;
  for (int attempt = 1;; ++attempt) {
    const std::optional<JobStatus> st = backend.get(id);
    if (!st || st->terminal())
      throw Error(Errc::not_found, id + " ended (" + (st ? st->state : std::string("gone")) +
                                       ") before it answered on port " + std::to_string(port) +
                                       "; see `kinetic serve logs " + id + "`");
    if (st->state == kRunning && answers(backend, id, port)) return true;
    if (now_unix() > deadline)
      throw Error(Errc::timeout, id + " did not answer on port " + std::to_string(port) +
                                     " within " + format_duration(timeout_seconds) +
                                     " (--ready-timeout); it is still up: `kinetic serve logs " +
                                     id + "`, `kinetic serve stop " + id + "`");
    pollfd p{stop_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(kReadyCurve.delay(attempt).count())) > 0) return false;
  }
}

double server_price_per_hour(const JobStatus& st, const PriceBook& prices) {
  if (st.backend != "gke" || st.accelerator.empty()) return 0;
  try {
    Accelerator accel = resolve_accelerator(st.accelerator);
    accel.slices = st.slices;
    return accelerator_price(accel, prices);
  } catch (const Error&) {
    return 0;
  }
}

bool is_server(const JobStatus& st) {
  return server_port(st) > 0;
}

int server_port(const JobStatus& st) {
  for (const auto& [key, value] : st.labels)
    if (key == kServeLabel) return std::atoi(value.c_str());
  return 0;
}

std::vector<CleanupItem> stop_server(Backend& backend, const std::string& id) {
  backend.cancel(id);
  return backend.remove_job(id, /*dry_run=*/false);
}

}  // namespace kinetic
