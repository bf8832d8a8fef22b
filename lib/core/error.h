// Errors: typed exceptions thrown by the library and caught once, at the CLI's edge, which maps
// them to the documented exit codes and prints the one-line message.
#pragma once

#include <stdexcept>
#include <string>

namespace kinetic {

// kinetic's exit codes, in one place (README "Exit codes", docs/decisions.md). `run` exits with the
// job's own code, or with one of the codes from 124 up, which say what kept the job from
// finishing (as timeout(1), env(1) and shells use them). The in-cluster scripts' copy is
// lib/job/incluster_common.py's EXIT_*; tests/golden/exit_codes.json holds both to one table.
namespace exit_codes {
inline constexpr int ok = 0;
inline constexpr int failed = 1;         // any command but run: it failed
inline constexpr int usage = 2;          // bad flags or arguments, or a refused confirmation
inline constexpr int timeout = 124;      // run: --timeout reached
inline constexpr int kinetic = 125;      // run: kinetic itself failed (or the job was lost)
inline constexpr int not_run = 126;      // run: the job could not start
inline constexpr int not_found = 127;    // run: the job file or its interpreter is missing
inline constexpr int interrupted = 130;  // run: Ctrl-C or cancelled (128 + SIGINT)
}  // namespace exit_codes

// What went wrong, coarse enough to choose an exit code from.
enum class Errc {
  usage,             // bad flags or arguments (exit 2)
  refused,           // a confirmation was needed and not given (exit 2)
  not_found,         // a job, context or object that does not exist
  config,            // a malformed or inconsistent configuration
  auth,              // credentials missing or rejected
  api,               // a cloud API answered with an error
  packaging,         // the context could not be packaged or unpacked
  unsupported,       // the command needs a backend that is not available yet
  job_file_missing,  // run: the job file or its interpreter is missing (exit 127)
  job_start,         // run: the job could not start (exit 126)
  timeout,           // run: --timeout reached (exit 124)
  interrupted,       // run: Ctrl-C or cancelled (exit 130)
  internal,          // anything else
};

class Error : public std::runtime_error {
 public:
  Error(Errc code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  Errc code() const { return code_; }

 private:
  Errc code_;
};

// Exit code for an error. `run` has its own table (README "Exit codes", core/error.h); every other
// command uses 1 for failures and 2 for usage errors and refusals.
int exit_code_for(Errc code, bool is_run_command);

}  // namespace kinetic
