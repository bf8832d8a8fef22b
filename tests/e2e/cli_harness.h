// Runs the kinetic binary as a user would: a fresh HOME, config and state per test, stdout and
// stderr captured, the exit code returned.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/fs.h"
#include "fakes/fake_loopback_port.h"

namespace kinetic::test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class Sandbox {
 public:
  Sandbox();
  ~Sandbox();
  const fs::path& root() const { return root_; }
  fs::path home() const { return root_ / "home"; }
  fs::path state() const { return root_ / "state"; }
  fs::path config_file() const { return root_ / "config" / "kinetic" / "config.yaml"; }
  // A project directory under the sandbox (created).
  fs::path project(const std::string& name = "proj");

  // Writes FILE (relative to the sandbox root) with CONTENT and MODE.
  fs::path write(const std::string& file, const std::string& content, unsigned mode = 0644);

  // Runs kinetic with ARGS in CWD (default: the sandbox root).
  CliResult run(const std::vector<std::string>& args, const fs::path& cwd = {},
                const std::map<std::string, std::string>& extra_env = {}) const;
  // The same, with STDIN_FILE's bytes on kinetic's stdin (/dev/null otherwise).
  CliResult run_with_stdin(const std::vector<std::string>& args, const fs::path& cwd,
                           const fs::path& stdin_file,
                           const std::map<std::string, std::string>& extra_env = {}) const;
  // Runs SCRIPT with bash -c in CWD (default: the sandbox root), the sandbox's environment and
  // `kinetic` first on PATH, stdin /dev/null (a script closes or replaces it itself).
  CliResult shell(const std::string& script, const fs::path& cwd = {},
                  const std::map<std::string, std::string>& extra_env = {}) const;
  // Starts kinetic without waiting; returns the pid. Output goes to files under the sandbox.
  int spawn(const std::vector<std::string>& args, const fs::path& cwd, const fs::path& out_file,
            const fs::path& err_file,
            const std::map<std::string, std::string>& extra_env = {}) const;
  // Waits for PID and returns its exit code (128+N for a signal).
  static int wait(int pid);

  std::vector<std::string> environment(const std::map<std::string, std::string>& extra) const;

 private:
  fs::path root_;
};

// The first line of S.
std::string first_line(const std::string& s);
// Number of lines in S.
size_t line_count(const std::string& s);
// Reads FILE (empty when missing).
std::string slurp(const fs::path& file);

}  // namespace kinetic::test

#include <functional>

namespace kinetic::test {
// Polls COND until it holds or LIMIT_SECONDS pass (a bound against hangs, not a timing
// assumption). Returns whether it held.
bool eventually(const std::function<bool()>& cond, double limit_seconds = 30);
// True while a process with PID exists (and is not a zombie).
bool process_alive(int pid);
// A port of 127.0.0.1 nothing listens on now, for a job's or a server's port (the fake's pods
// share this machine's network); nothing in these tests listens on a fixed port.
using fakes::unused_loopback_port;
// The job id in a "kinetic: job-xxxxxxxx ..." line of S, or "".
std::string job_id_in(const std::string& s);
}  // namespace kinetic::test
