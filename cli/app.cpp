#include "app.h"

#include "job/pricing.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "argv_scrub.h"
#include "auth/adc.h"
#include "auth/authed.h"
#include "backend/gke/gke_backend.h"
#include "backend/gke/gke_cluster.h"
#include "backend/gke/session.h"
#include "backend/gke/submission_preview.h"
#include "backend/local/local_backend.h"
#include "backend/local/local_cluster.h"
#include "config/paths.h"
#include "core/error.h"
#include "core/strings.h"
#include "gcp/endpoints.h"
#include "gcp/google_error.h"
#include "http/retry.h"
#include "http/trace.h"
#include "job/spec.h"

namespace kinetic::cli {

IOStreams& Factory::io() {
  if (!io_ready_) {
    io_.quiet = globals_.quiet;
    io_.verbosity = globals_.verbosity;
    io_.color = !globals_.no_color && io_.err_tty && !env_.get("NO_COLOR");
    io_ready_ = true;
  }
  return io_;
}

ConfigFile& Factory::config() {
  if (!config_) config_ = ConfigFile::load(config_file_path(env_));
  return *config_;
}

const Settings& Factory::settings() {
  if (!settings_) {
    // gcloud's configuration is read only when a cloud context needs it.
    GcloudConfig gcloud;
    Settings probe = resolve_settings(globals_.flags, env_, config(), gcloud);
    if (probe.backend != "local") gcloud = read_gcloud_config(env_);
    settings_ = resolve_settings(globals_.flags, env_, config(), gcloud);
  }
  return *settings_;
}

fs::path Factory::state_dir() const {
  return state_dir_path(env_);
}

fs::path Factory::cwd() const {
  std::error_code ec;
  auto p = fs::current_path(ec);
  if (ec) throw Error(Errc::internal, "cannot read the current directory: " + ec.message());
  return p;
}

OutputFormat Factory::format(const std::vector<OutputFormat>& allowed) {
  return parse_output_format(globals_.format, allowed);
}

Backend* Factory::backend_or_null() {
  if (!backend_ && settings().backend == "local") {
    int grace = 10;
    if (auto g = env_.get_nonempty("KINETIC_KILL_GRACE_SECONDS")) grace = std::atoi(g->c_str());
    auto local = std::make_unique<LocalBackend>(state_dir(), local_job_base_env(env_.all()), grace);
    // --data gs://: your credentials, as gcloud storage would use them; built only when asked.
    local->use_storage(
        [this]() -> gcp::StorageClient& {
          if (!data_storage_)
            data_storage_ =
                std::make_shared<gcp::StorageClient>(*cloud(), gcp::api_endpoint("storage", env_));
          return *data_storage_;
        },
        [this](const std::string& line) { io().info(line); });
    backend_ = std::move(local);
  }
  if (!backend_ && settings().backend == "gke") {
    gke::require_target(gke_target(), "the gke context " + settings().context.value);
    backend_ = std::make_unique<gke::GkeBackend>(gke_session());
  }
  return backend_.get();
}

Cluster& Factory::cluster(const std::string& command, bool provisioning) {
  if (!cluster_ && !provisioning && settings().backend != "gke")
    cluster_ = std::make_unique<LocalCluster>(settings().context.value, command);
  if (!cluster_) {
    gke::require_target(gke_target(provisioning), "kinetic " + command);
    cluster_ = std::make_unique<gke::GkeCluster>(gke_session(provisioning), change_printer());
  }
  return *cluster_;
}

std::function<void(const ClusterChange&)> Factory::change_printer() {
  return [this](const ClusterChange& c) {
    const std::string line = c.kind + " " + c.name + ": " + c.action;
    if (gke_session_ && gke_session_->progress) {
      gke_session_->progress->finish(line);
    } else {
      io().info(line);
    }
  };
}

const Settings& Factory::cloud_settings(bool provisioning) {
  if (!provisioning || settings().backend == "gke") return settings();
  if (!cloud_settings_) {
    // Resolve as if a fresh gke context were selected: flags and environment first, then
    // gcloud's configuration, then the defaults (cluster `kinetic`).
    ConfigFile scratch = config();
    const std::string name = "kinetic-up-scratch";
    scratch.upsert(name).backend = "gke";
    GlobalFlags flags = globals_.flags;
    flags.context = name;
    cloud_settings_ = resolve_settings(flags, env_, scratch, read_gcloud_config(env_));
    cloud_settings_->context = settings().context;
  }
  return *cloud_settings_;
}

gke::Target Factory::gke_target(bool provisioning) {
  const Settings& s = cloud_settings(provisioning);
  gke::Target t;
  t.project = s.project.value;
  t.location = s.zone.set() ? s.zone.value : s.region.value;
  t.region = s.region.value;
  t.cluster = s.cluster.value;
  t.ns = s.namespace_.set() ? s.namespace_.value : "default";
  return t;
}

gke::Session& Factory::gke_session(bool provisioning) {
  if (!gke_session_) {
    // Every endpoint is checked before the first request: an override that would carry the
    // token in clear fails the command before any other API was called.
    for (const char* service : gcp::kServices) gcp::api_endpoint(service, env_);
    gke::Session session;
    session.target = gke_target(provisioning);
    session.cloud = cloud();
    session.new_cloud = [this] { return make_cloud_transport(); };
    session.credentials = credentials();
    session.env = &env_;
    session.io = &io();
    session.verbosity = globals_.verbosity;
    session.state_dir = state_dir();
    session.prices = price_book_setting(settings().prices.value, settings().prices.source);
    // Fakes and emulators finish operations at once; tests set a short interval.
    if (auto ms = env_.get_nonempty("KINETIC_POLL_INTERVAL_MS")) {
      auto interval = std::chrono::milliseconds(std::atol(ms->c_str()));
      session.poll.initial = interval;
      session.poll.max = interval;
    }
    // One current line for every operation being waited for, on a terminal.
    session.progress = std::make_shared<StatusLine>(io());
    struct Current {
      std::string name;
      double started = 0;
    };
    auto current = std::make_shared<Current>();
    session.poll.on_poll = [progress = session.progress, current](const nlohmann::json& op) {
      const std::string name = op.value("name", "");
      if (name != current->name) *current = {name, now_unix()};
      gke::show_operation(*progress, op, current->started);
    };
    gke_session_ = std::make_shared<gke::Session>(std::move(session));
  }
  return *gke_session_;
}

namespace {

std::unique_ptr<http::Transport> trace_to(FILE* err, std::unique_ptr<http::Transport> inner,
                                          int verbosity) {
  return http::traced(std::move(inner), verbosity, [err](std::string_view line) {
    std::fprintf(err, "%.*s\n", static_cast<int>(line.size()), line.data());
  });
}

}  // namespace

std::shared_ptr<http::Transport> Factory::http() {
  if (!http_)
    http_ = trace_to(io().err, http::retried(http::make_curl_transport()), globals_.verbosity);
  return http_;
}

std::shared_ptr<auth::TokenCache> Factory::credentials() {
  if (!credentials_) {
    auth::AdcOptions options;
    if (!globals_.access_token_file.empty()) options.access_token_file = globals_.access_token_file;
    credentials_ =
        std::make_shared<auth::TokenCache>(auth::find_credentials(env_, http(), options));
  }
  return credentials_;
}

std::shared_ptr<http::Transport> Factory::make_cloud_transport() {
  http::RetryPolicy policy;
  policy.body_hint = [](const http::Response& r) { return gcp::retry_info_delay(r.body); };
  // No token to the storage emulator, as Google's libraries (docs/security.md).
  return trace_to(io().err,
                  http::retried(auth::authed(http::make_curl_transport(), credentials(),
                                             gcp::storage_emulator(env_)),
                                policy),
                  globals_.verbosity);
}

std::shared_ptr<http::Transport> Factory::cloud() {
  if (!cloud_) cloud_ = make_cloud_transport();
  return cloud_;
}

std::unique_ptr<SubmissionPreview> Factory::submission_preview(const std::string& command) {
  if (settings().backend == "gke")
    return gke::make_submission_preview(
        gke_target(), command + " on the gke context " + settings().context.value);
  return make_local_submission_preview(state_dir());
}

Backend& Factory::backend(const std::string& command) {
  if (Backend* b = backend_or_null()) return *b;
  // The config file admits only the backends above.
  throw Error(Errc::internal, "`kinetic " + command + "`: no backend '" + settings().backend + "'");
}

std::unique_ptr<CLI::App> build_app(Factory& f, Action& action) {
  auto app = std::make_unique<CLI::App>(
      "kinetic ships a job (a script or program plus its project folder) to a Cloud TPU or GPU "
      "on GKE, or runs it on this machine, and brings back its logs, files and exit code.",
      "kinetic");
  app->fallthrough(true);  // global flags work after the command too
  app->set_help_flag("-h,--help", "Show help for a command");
  app->footer(
      "Examples:\n"
      "  kinetic run examples/hello/train.py           # run on the current context\n"
      "  kinetic run train.py --accelerator v5litepod-1 -- --epochs 3\n"
      "  kinetic run train.py --detach && kinetic logs -f JOB\n"
      "  kinetic accelerators\n"
      "\nExit codes: run returns the job's own code, 124 timeout, 125 kinetic failed, 126 job "
      "could not start, 127 job file or interpreter not found, 130 interrupted; other commands "
      "0 ok, 1 failed, 2 usage.");
  Globals& g = f.globals();
  const char* globals = "Global flags";
  app->add_option("--context", g.flags.context,
                  "Context to use (env KINETIC_CONTEXT; default: the current context)")
      ->group(globals);
  app->add_option("--project", g.flags.project, "Google Cloud project (env KINETIC_PROJECT)")
      ->group(globals);
  app->add_option("--zone", g.flags.zone, "Compute zone (env KINETIC_ZONE)")->group(globals);
  app->add_option("--region", g.flags.region, "Compute region (env KINETIC_REGION)")
      ->group(globals);
  app->add_option("--cluster", g.flags.cluster, "GKE cluster (env KINETIC_CLUSTER)")
      ->group(globals);
  app->add_option("--namespace", g.flags.namespace_, "Kubernetes namespace (env KINETIC_NAMESPACE)")
      ->group(globals);
  app->add_option("-o,--format", g.format, "Output format: table, wide, json, yaml or name")
      ->group(globals);
  app->add_flag("-q,--quiet", g.quiet, "Print only data and errors")->group(globals);
  app->add_option("-v,--verbosity", g.verbosity, "Log level (6+: HTTP trace, secrets redacted)")
      ->group(globals);
  app->add_flag("--no-color", g.no_color, "Never color the output")->group(globals);
  app->add_option("--access-token-file", g.access_token_file,
                  "Use the Google access token in this file (overrides every other credential)")
      ->group(globals);
  for (const auto& c : commands()) c.add(*app, f, action);
  return app;
}

namespace {

// The deepest subcommand the parser reached.
CLI::App* deepest(CLI::App* app) {
  for (CLI::App* sub : app->get_subcommands())
    if (sub->parsed()) return deepest(sub);
  return app;
}

std::string command_path(CLI::App* app) {
  std::string path;
  for (CLI::App* a = app; a != nullptr; a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

std::vector<std::string> flag_names(CLI::App* app) {
  std::vector<std::string> names;
  for (CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
      for (const auto& s : o->get_snames()) names.push_back("-" + s);
    }
  }
  return names;
}

// One line, with "did you mean", for arguments the parser did not expect.
// EXTRAS come in the parser's order; ARGS is what the user typed, to report the first of them.
std::string explain_extras(CLI::App* root, const std::vector<std::string>& extras,
                           const std::vector<std::string>& args) {
  CLI::App* app = deepest(root);
  const std::string where = command_path(app);
  std::string word = extras.front();
  for (const auto& a : args) {
    if (std::find(extras.begin(), extras.end(), a) != extras.end()) {
      word = a;
      break;
    }
  }
  // An unknown flag drags its value into the extras; the flag is what to report.
  for (const auto& a : args) {
    if (!a.empty() && a[0] == '-' && std::find(extras.begin(), extras.end(), a) != extras.end()) {
      word = a;
      break;
    }
  }
  if (!word.empty() && word[0] == '-') {
    std::string flag = word.substr(0, word.find('='));
    auto near = closest_matches(flag, flag_names(app));
    std::string msg = "unknown flag '" + flag + "' for `" + where + "`";
    if (!near.empty()) msg += "; did you mean " + join_or(near) + "?";
    if (app->get_name() == "run") msg += " (arguments for the job go after --)";
    return msg;
  }
  std::vector<std::string> subs;
  for (CLI::App* s : app->get_subcommands({})) subs.push_back(s->get_name());
  if (!subs.empty()) {
    auto near = closest_matches(word, subs);
    return "unknown command '" + word + "' for `" + where + "`" +
           (near.empty() ? "" : "; did you mean " + join_or(near) + "?") + " (see `" + where +
           " --help`)";
  }
  std::string msg = "unexpected argument '" + word + "' for `" + where + "`";
  if (app->get_name() == "run")
    msg += "; pass arguments for the job after --, e.g. kinetic run FILE -- " + word;
  return msg;
}

// Bytes of a user's input that are not UTF-8 show as \xNN, so the line stays readable text, and
// controls from a record (a job's error) are escaped so that none drives the terminal.
void print_error(FILE* err, const std::string& message) {
  std::fprintf(err, "error: %s\n", escape_for_terminal(message, true).c_str());
}

}  // namespace

int run(Factory& f, const std::vector<std::string>& argv) {
  Action action;
  std::unique_ptr<CLI::App> app;
  bool is_run = false;
  std::vector<std::string> args;
  // Not f.io() before parsing: its first call fixes --quiet and -v.
  auto out = [&f] { return f.io().out; };
  auto err = [&f] { return f.io().err; };
  try {
    app = build_app(f, action);
    // Everything after the first `--` belongs to the job (kinetic run FILE -- ARGS).
    std::vector<std::string> job_args;
    bool dashdash = false;
    for (const auto& arg : argv) {
      if (!dashdash && arg == "--") {
        dashdash = true;
        continue;
      }
      (dashdash ? job_args : args).push_back(arg);
    }
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app->parse(reversed);
    CLI::App* cmd = deepest(app.get());
    is_run = cmd->get_name() == "run";
    // `run FILE -- ARGS` and `exec JOB -- CMD` take what follows `--` as is.
    if (dashdash && !is_run && cmd->get_name() != "exec")
      throw Error(Errc::usage, "`" + command_path(cmd) + "` takes no arguments after --");
    f.globals().job_args = job_args;
    if (!action) {
      // A command group without its verb, or no command at all: show the help.
      std::fputs(cmd->help().c_str(), out());
      return cmd == app.get() ? 0 : 2;
    }
    action->complete(f);
    action->validate();
    int code = action->run(f);
    std::fflush(out());
    return code;
  } catch (const CLI::Success& e) {
    // --help and its kin: CLI11 writes them to the streams it is given.
    std::ostringstream text, problems;
    int code = app->exit(e, text, problems);
    std::fputs(text.str().c_str(), out());
    std::fputs(problems.str().c_str(), err());
    return code;
  } catch (const CLI::ExtrasError& e) {
    std::string what = e.what();
    auto colon = what.find(": ");
    std::vector<std::string> extras;
    if (colon != std::string::npos)
      for (const auto& w : split(what.substr(colon + 2), ' '))
        if (!w.empty()) extras.push_back(w);
    print_error(err(), extras.empty() ? what : explain_extras(app.get(), extras, args));
    return exit_codes::usage;
  } catch (const CLI::ParseError& e) {
    CLI::App* cmd = app ? deepest(app.get()) : nullptr;
    std::string msg = e.what();
    if (!msg.empty() && msg.back() == '\n') msg.pop_back();
    print_error(err(), msg + (cmd ? " (see `" + command_path(cmd) + " --help`)" : ""));
    return exit_codes::usage;
  } catch (const Error& e) {
    print_error(err(), e.what());
    return exit_code_for(e.code(), is_run);
  } catch (const std::exception& e) {
    print_error(err(), std::string("internal error: ") + e.what() +
                           " (please report it with the command you ran)");
    return exit_code_for(Errc::internal, is_run);
  }
}

int run(int argc, char** argv) {
  // A closed stdout or stderr (`kinetic run job.py | head -1`) ends the output, not the run: a
  // write then fails with EPIPE, which the printers ignore, and the run goes on to collect and
  // clean, its exit code the job's. The processes kinetic starts get SIGPIPE back (fork sites).
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  Factory f(Env::process());
  {
    // The option table read as the parse will read it: building it touches nothing.
    Action unused;
    scrub_secrets(argc, argv, option_shapes(*build_app(f, unused)));
  }
  return run(f, args);
}

}  // namespace kinetic::cli
