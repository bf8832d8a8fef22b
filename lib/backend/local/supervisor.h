// The local runner: a process of its own session that unpacks the staged context into a fresh
// work directory, runs the job in its own process group, records its output, enforces the
// timeout, passes cancellation on, delivers the outputs and writes status.json — the local
// counterpart of a pod running the in-pod bootstrap.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "job/spec.h"

namespace kinetic {

struct SupervisorSetup {
  fs::path job_dir;          // state/jobs/JOBID: spec.json, log, status.json, work/, output/
  fs::path context_archive;  // the staged context
  JobSpec spec;
  std::map<std::string, std::string> secrets;  // values of spec.secret_env
  // The job's environment before kinetic's and the user's variables (PATH, HOME, locale...).
  std::vector<std::pair<std::string, std::string>> base_env;
  int kill_grace_seconds = 10;  // SIGTERM, then SIGKILL this much later
  // Write end of a pipe to the caller, or -1: the runner writes a byte to it whenever the log
  // grows, and its closing (when the runner exits, however it dies) tells the caller it is done.
  int notify_fd = -1;
};

// Forks the runner and returns its pid. The runner starts a new session with stdio on /dev/null,
// so it outlives the caller (--detach) and a terminal's Ctrl-C reaches only the caller.
pid_t start_supervisor(const SupervisorSetup& setup);

// Files of a job directory.
inline fs::path status_path(const fs::path& job_dir) {
  return job_dir / "status.json";
}
inline fs::path spec_path(const fs::path& job_dir) {
  return job_dir / "spec.json";
}
inline fs::path log_path(const fs::path& job_dir) {
  return job_dir / "log";
}
inline fs::path supervisor_path(const fs::path& job_dir) {
  return job_dir / "supervisor.json";
}
// A function job's call and the runner it runs with (job/function_call.h).
inline fs::path function_call_path(const fs::path& job_dir) {
  return job_dir / "function.pkl";
}
inline fs::path function_runner_path(const fs::path& job_dir) {
  return job_dir / "function_runner.py";
}
// `run --debug`'s launcher (job/debug_spec.h), written beside the spec.
inline fs::path debug_launcher_path(const fs::path& job_dir) {
  return job_dir / "debug_launcher.py";
}

// Copies CALL's file and the function runner into JOB_DIR, readable by you alone, checking the
// copy against the sha256 the spec records. Throws Error(Errc::usage) when the call file changed
// since it was read, Error(Errc::internal) when it cannot be copied.
void stage_function_call(const FunctionCall& call, const fs::path& job_dir);

// Writes the debug launcher into JOB_DIR (0600): a debug job's Python starts under it.
void stage_debug_launcher(const fs::path& job_dir);

// True while the job's runner process is alive (checked by pid and start time, so a reused pid
// does not count).
bool supervisor_alive(const fs::path& job_dir);
// Asks the runner to cancel the job (SIGTERM). False when no runner is alive.
bool signal_supervisor(const fs::path& job_dir, int sig);

}  // namespace kinetic
