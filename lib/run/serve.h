// `kinetic serve` (docs/serving.md): a long-running server, started through the run journey's
// steps 1-5 (the same image, data, environment, Secret and cost as `run`), ready once its port
// accepts a connection, reached through the port-forward engine, and stopped leaving nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "job/pricing.h"
#include "render/output.h"
#include "run/pipeline.h"

namespace kinetic {

struct ServeRequest {
  // FILE or --image, -a, --data, --env, ... as `run` takes them; never detach or dry_run.
  RunRequest run;
  int port = 0;  // --port: where the server listens, in the job
  // --from JOB: a job that succeeded, whose outputs the server finds at
  // $KINETIC_INPUT_DIR/JOB/ (e.g. fine-tuned weights).
  std::string from;
  long idle_stop_seconds = 0;          // --idle-stop: 0 never
  int local_port = 0;                  // --local-port: where the URL is (0: any free port)
  double ready_timeout_seconds = 600;  // --ready-timeout
  bool detach = false;                 // --detach: return once ready, leaving the server up
  OutputFormat format = OutputFormat::table;
};

// `kinetic serve`: starts REQ's server, waits until it answers, then either (--detach) prints
// its id and returns, or prints `Serving at http://127.0.0.1:L`, forwards L to the server's port
// and streams its log until Ctrl-C, which stops it and removes what kinetic made for it (exit
// 0). A server that ends by itself is Error(not_found) naming its state (its record kept for
// `serve logs`); one not ready in time Error(timeout). Ctrl-C before it is ready stops it too
// (exit 130).
int serve(const ServeRequest& req, const RunEnvironment& env);

// Steps 1-5 of REQ's server: resolved, packaged, staged, its image made and submitted, detached
// (it runs until stopped). Returns its spec. Throws Error as run_pipeline does; an unknown or
// unfinished --from job is Error(Errc::usage) naming it.
JobSpec start_server(const ServeRequest& req, const RunEnvironment& env);

// Waits until server ID answers on PORT: a connection its backend's dialer opens to it is
// accepted. Returns true then, false once STOP_FD is readable (Ctrl-C). Throws Error(not_found)
// when the server ends first (its state, and where its log is), Error(timeout) after
// TIMEOUT_SECONDS.
bool wait_until_ready(Backend& backend, const std::string& id, int port, int stop_fd,
                      double timeout_seconds);

// What server ST costs an hour at list price on PRICES: 0 locally or when unknown.
double server_price_per_hour(const JobStatus& st, const PriceBook& prices);

// Whether ST is a server's, and its port (0 when it is not one).
bool is_server(const JobStatus& st);
int server_port(const JobStatus& st);

// Stops server ID and removes what kinetic made for it, its record too: what was removed.
std::vector<CleanupItem> stop_server(Backend& backend, const std::string& id);

}  // namespace kinetic
