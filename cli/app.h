// The CLI shell: global flags, the lazily-built dependencies every command draws on, and the one
// place that turns errors into messages and exit codes. Commands live one per file
// (cmd_*.cpp) and are listed in commands.cpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "auth/token_cache.h"
#include "backend/backend.h"
#include "backend/cluster.h"
#include "config/config_file.h"
#include "config/settings.h"
#include "core/env.h"
#include "http/transport.h"
#include "render/output.h"

// Only app.cpp builds these: the commands reach GKE through Backend and Cluster alone.
namespace kinetic::gcp {
class StorageClient;
}  // namespace kinetic::gcp
namespace kinetic::gke {
struct Target;
struct Session;
}  // namespace kinetic::gke

namespace kinetic::cli {

struct Globals {
  GlobalFlags flags;
  std::string format;  // -o
  bool quiet = false;
  bool no_color = false;
  int verbosity = 0;
  std::string access_token_file;      // --access-token-file
  std::vector<std::string> job_args;  // everything after `--`
};

// Dependencies built on first use, so `kinetic --help` or `kinetic accelerators` never read the
// config, credentials or the network.
class Factory {
 public:
  // ENV and IO: the process's own in main(); a fixed environment and memory streams in tests.
  explicit Factory(Env env, IOStreams io = IOStreams::system()) : env_(std::move(env)), io_(io) {}

  // Tests: the backend every command uses, instead of the selected context's.
  void use_backend(std::unique_ptr<Backend> backend) { backend_ = std::move(backend); }
  // Tests: the cluster `up`, `down`, `pool` and `status` use, instead of the selected context's.
  void use_cluster(std::unique_ptr<Cluster> cluster) { cluster_ = std::move(cluster); }

  Globals& globals() { return globals_; }
  const Env& env() const { return env_; }
  IOStreams& io();
  ConfigFile& config();
  const Settings& settings();
  fs::path state_dir() const;
  fs::path cwd() const;
  // -o parsed against the formats the command supports (the first is the default).
  OutputFormat format(const std::vector<OutputFormat>& allowed);
  // The backend of the selected context. Throws Error(Errc::unsupported) naming COMMAND when
  // it is not available in this build.
  Backend& backend(const std::string& command);
  // Same, but null instead of throwing.
  Backend* backend_or_null();
  // What the backend would do with a job, for `run --dry-run`: needs no credentials. Throws a
  // config error naming COMMAND when a gke context lacks a project, location or cluster.
  std::unique_ptr<SubmissionPreview> submission_preview(const std::string& command);

  // HTTP without credentials (token endpoints, the metadata server): traced(retried(curl)).
  std::shared_ptr<http::Transport> http();
  // The Application Default Credentials, looked up on first use (honours --access-token-file).
  std::shared_ptr<auth::TokenCache> credentials();
  // What every Google API client uses: traced(retried(authed(curl))), -v 6 tracing each request
  // with secrets redacted.
  std::shared_ptr<http::Transport> cloud();
  // A new transport like cloud(), for use from another thread.
  std::shared_ptr<http::Transport> make_cloud_transport();
  // The cluster of the selected context, for `kinetic COMMAND`: GKE's (a config error naming
  // COMMAND when the context lacks a project or location), or a local context's, which has
  // none (backend/local/local_cluster.h). PROVISIONING (up, down): a local context means the
  // gke cluster that the flags and environment name, gcloud's config filling the gaps.
  Cluster& cluster(const std::string& command, bool provisioning = false);

 private:
  // Settings as a gke context sees them: the selected context's, or, when it is local and
  // PROVISIONING (`up` creates the gke context), the flags and environment with gcloud's config
  // filling the gaps.
  const Settings& cloud_settings(bool provisioning);
  // The project, location and cluster of the selected context (see cloud_settings); cheap, no
  // credentials looked up.
  gke::Target gke_target(bool provisioning = false);
  // Everything a GKE command needs, for the selected context (see cloud_settings).
  gke::Session& gke_session(bool provisioning = false);
  // Prints what up/down/pool changed, one line each, over the current progress line.
  std::function<void(const ClusterChange&)> change_printer();

  Env env_;
  Globals globals_;
  IOStreams io_;
  bool io_ready_ = false;
  std::optional<ConfigFile> config_;
  std::optional<Settings> settings_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Cluster> cluster_;
  std::shared_ptr<http::Transport> http_;
  std::shared_ptr<auth::TokenCache> credentials_;
  std::shared_ptr<http::Transport> cloud_;
  std::shared_ptr<gcp::StorageClient> data_storage_;  // the local backend's, for --data gs://
  std::optional<Settings> cloud_settings_;
  std::shared_ptr<gke::Session> gke_session_;  // shared_ptr: the type is complete in app.cpp only
};

// A parsed command, in kubectl's three phases, which cli::run calls in order once the command
// line is parsed: every command checks its input before it reads a credential, sends a request
// or changes anything, and a test can reach each phase.
class CommandOptions {
 public:
  virtual ~CommandOptions() = default;
  // Fills in what the flags leave to the factory and costs nothing: the -o format (a usage
  // error when the command does not print it), the job's arguments after --.
  virtual void complete(Factory&) {}
  // Checks the options alone: throws Error(Errc::usage) naming the flag and how to fix it.
  // Reads no config, credentials, file or network.
  virtual void validate() const {}
  // Does the work.
  virtual int run(Factory& f) = 0;
};

// A command that prints with -o: complete() parses it against the formats the command supports
// (the first is the default).
class PrintingOptions : public CommandOptions {
 public:
  explicit PrintingOptions(std::vector<OutputFormat> allowed) : allowed_(std::move(allowed)) {}
  void complete(Factory& f) override { format = f.format(allowed_); }

 protected:
  OutputFormat format = OutputFormat::table;

 private:
  std::vector<OutputFormat> allowed_;
};

// The command the parser reached, set by its callback (null: a group without its verb).
using Action = std::shared_ptr<CommandOptions>;

// Makes OPTIONS the action when the parser reaches COMMAND.
inline void on_parse(CLI::App* command, Action& action, Action options) {
  command->callback([&action, options] { action = options; });
}

struct Command {
  const char* name;
  void (*add)(CLI::App& root, Factory& f, Action& action);
};

// Every command, in help order (commands.cpp).
const std::vector<Command>& commands();

// Builds the whole command tree (also used to generate completions and the man page).
std::unique_ptr<CLI::App> build_app(Factory& f, Action& action);

// Runs kinetic with ARGS (argv without the program name) against F's environment and streams,
// and returns the exit code: what main() does, callable in-process.
int run(Factory& f, const std::vector<std::string>& args);
// main(): the process's environment and streams; overwrites the secrets in ARGV
// first (argv_scrub.h).
int run(int argc, char** argv);

}  // namespace kinetic::cli
