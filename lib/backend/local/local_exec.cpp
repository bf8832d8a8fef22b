#include "backend/local/local_exec.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend/process_identity.h"
#include "core/error.h"
#include "core/fs.h"

namespace kinetic {

namespace {

// The job's process: the leader of its recorded group, if it is still the one recorded (a pid
// is reused; a reboot starts the count again).
pid_t job_process(const JobStatus& st) {
  const auto proc = st.pgid > 0 ? read_proc_stat(static_cast<pid_t>(st.pgid)) : std::nullopt;
  if (!proc || proc->state == 'Z' || proc->start != st.pgid_start ||
      st.boot_id != current_boot_id())
    throw Error(Errc::not_found, st.id + "'s process has exited (state " + st.state +
                                     "): there is nothing to exec into; see `kinetic logs " +
                                     st.id + "`");
  return static_cast<pid_t>(st.pgid);
}

std::vector<std::string> environment_of(pid_t pid) {
  const auto text = read_file("/proc/" + std::to_string(pid) + "/environ");
  if (!text)
    throw Error(Errc::internal, "cannot read the environment of the job's process " +
                                    std::to_string(pid) + ": " + std::strerror(errno));
  std::vector<std::string> env;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\0', start);
    if (end == std::string::npos) end = text->size();
    if (end > start) env.push_back(text->substr(start, end - start));
    start = end + 1;
  }
  return env;
}

std::string working_directory_of(pid_t pid) {
  std::error_code ec;
  auto cwd = fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec);
  if (ec)
    throw Error(Errc::internal, "cannot read the working directory of the job's process " +
                                    std::to_string(pid) + ": " + ec.message());
  return cwd.string();
}

}  // namespace

int exec_beside_job(const JobStatus& st, const ExecRequest& request) {
  if (request.host != 0)
    throw Error(Errc::usage, "--host " + std::to_string(request.host) +
                                 ": the local backend runs a job on one host, host 0");
  if (request.command.empty())
    throw Error(Errc::usage, "no command: kinetic exec " + st.id + " -- CMD [ARGS...]");
  const pid_t job = job_process(st);
  const std::vector<std::string> env = environment_of(job);
  const std::string cwd = working_directory_of(job);

  // Built before fork(): the child only makes async-signal-safe calls.
  std::vector<char*> argv, envp;
  for (const auto& a : request.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  // Each candidate, as execvp would try them, but with the job's PATH, not kinetic's.
  std::vector<std::string> candidates;
  if (request.command[0].find('/') != std::string::npos) {
    candidates.push_back(request.command[0]);
  } else {
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      std::string dir = path.substr(start, end - start);
      candidates.push_back((dir.empty() ? "." : dir) + "/" + request.command[0]);
      start = end + 1;
    }
  }
  const std::string not_found =
      "kinetic: exec: " + request.command[0] + ": not found in the job's PATH\n";
  const std::string not_runnable = "kinetic: exec: " + request.command[0] + ": cannot run it\n";

  // Like system(): the terminal's Ctrl-C is the command's (same process group), not kinetic's.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ::signal(SIGPIPE, SIG_DFL);  // kinetic ignores it; the command must not
    if (!request.stdin_open) {
      int null = ::open("/dev/null", O_RDONLY);
      if (null >= 0) ::dup2(null, 0);
    }
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    bool found = false;
    for (const auto& c : candidates) {
      ::execve(c.c_str(), argv.data(), envp.data());
      if (errno != ENOENT && errno != ENOTDIR) found = true;
    }
    const std::string& why = found ? not_runnable : not_found;
    (void)!::write(2, why.data(), why.size());
    ::_exit(found ? 126 : 127);
  }
  int status = 0;
  if (pid > 0)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  if (pid < 0) throw Error(Errc::internal, std::string("fork: ") + std::strerror(errno));
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace kinetic
