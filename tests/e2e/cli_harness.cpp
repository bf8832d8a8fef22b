#include "cli_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>
#include <cstdlib>
#include <cstring>

namespace kinetic::test {

Sandbox::Sandbox() {
  root_ = make_temp_dir(fs::temp_directory_path(), "kinetic-e2e-");
  make_dirs(home());
}

Sandbox::~Sandbox() {
  if (!std::getenv("KINETIC_KEEP_SANDBOX")) remove_all_quiet(root_);
}

fs::path Sandbox::project(const std::string& name) {
  fs::path p = root_ / name;
  make_dirs(p);
  return p;
}

fs::path Sandbox::write(const std::string& file, const std::string& content, unsigned mode) {
  fs::path p = root_ / file;
  atomic_write(p, content, mode);
  return p;
}

std::vector<std::string> Sandbox::environment(
    const std::map<std::string, std::string>& extra) const {
  std::map<std::string, std::string> env = {
      {"HOME", home().string()},
      {"XDG_CONFIG_HOME", (root_ / "config").string()},
      {"KINETIC_HOME", state().string()},
      {"PATH", std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"},
      {"LANG", "C.UTF-8"},
      {"KINETIC_KILL_GRACE_SECONDS", "5"},
      // Never probe the real metadata address from a test: a closed port on loopback.
      {"GCE_METADATA_HOST", "127.0.0.1:9"},
  };
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env)
    if (v != "<unset>") out.push_back(k + "=" + v);
  return out;
}

namespace {

[[noreturn]] void exec_kinetic(const std::vector<std::string>& args,
                               const std::vector<std::string>& env, const fs::path& cwd) {
  if (::chdir(cwd.c_str()) != 0) ::_exit(99);
  std::vector<char*> argv = {const_cast<char*>(KINETIC_BINARY)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  ::execve(KINETIC_BINARY, argv.data(), envp.data());
  ::_exit(98);
}

}  // namespace

CliResult Sandbox::run(const std::vector<std::string>& args, const fs::path& cwd,
                       const std::map<std::string, std::string>& extra_env) const {
  return run_with_stdin(args, cwd, "/dev/null", extra_env);
}

namespace {

// Reads the child's stdout and stderr (the read ends of two pipes) until both close, then waits
// for it.
CliResult capture(pid_t pid, int out_fd, int err_fd) {
  CliResult r;
  int fds[2] = {out_fd, err_fd};
  std::string* bufs[2] = {&r.out, &r.err};
  char buf[65536];
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = ::read(fds[i], buf, sizeof buf);
      if (n > 0) {
        bufs[i]->append(buf, static_cast<size_t>(n));
      } else {
        ::close(fds[i]);
        fds[i] = -1;
      }
    }
  }
  r.exit_code = Sandbox::wait(pid);
  return r;
}

}  // namespace

CliResult Sandbox::run_with_stdin(const std::vector<std::string>& args, const fs::path& cwd,
                                  const fs::path& stdin_file,
                                  const std::map<std::string, std::string>& extra_env) const {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return {};
  auto env = environment(extra_env);
  fs::path dir = cwd.empty() ? root_ : cwd;
  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open(stdin_file.c_str(), O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    exec_kinetic(args, env, dir);
  }
  ::close(out[1]);
  ::close(err[1]);
  return capture(pid, out[0], err[0]);
}

CliResult Sandbox::shell(const std::string& script, const fs::path& cwd,
                         const std::map<std::string, std::string>& extra_env) const {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return {};
  std::map<std::string, std::string> extra = extra_env;
  const char* path = std::getenv("PATH");
  extra["PATH"] =
      fs::path(KINETIC_BINARY).parent_path().string() + ":" + (path ? path : "/usr/bin:/bin");
  auto env = environment(extra);
  fs::path dir = cwd.empty() ? root_ : cwd;
  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    if (::chdir(dir.c_str()) != 0) ::_exit(99);
    std::vector<char*> argv = {const_cast<char*>("bash"), const_cast<char*>("-c"),
                               const_cast<char*>(script.c_str()), nullptr};
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    ::execve("/bin/bash", argv.data(), envp.data());
    ::_exit(98);
  }
  ::close(out[1]);
  ::close(err[1]);
  return capture(pid, out[0], err[0]);
}

int Sandbox::spawn(const std::vector<std::string>& args, const fs::path& cwd,
                   const fs::path& out_file, const fs::path& err_file,
                   const std::map<std::string, std::string>& extra_env) const {
  auto env = environment(extra_env);
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY);
    int o = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(devnull, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    exec_kinetic(args, env, cwd);
  }
  return pid;
}

int Sandbox::wait(int pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

size_t line_count(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  if (!s.empty() && s.back() != '\n') ++n;
  return n;
}

std::string slurp(const fs::path& file) {
  return read_file(file).value_or("");
}

}  // namespace kinetic::test

#include <signal.h>

#include <chrono>
#include <regex>
#include <thread>

namespace kinetic::test {

bool eventually(const std::function<bool()>& cond, double limit_seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

bool process_alive(int pid) {
  if (::kill(pid, 0) != 0) return false;
  // It may be reaped between the two looks: its /proc entry then answers ESRCH, which read_file
  // reports as an error rather than as a missing file. Gone is not alive.
  std::string stat;
  try {
    stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  } catch (const std::exception&) {
    return ::kill(pid, 0) == 0;
  }
  auto close = stat.rfind(')');
  return close == std::string::npos || stat.size() < close + 3 || stat[close + 2] != 'Z';
}

std::string job_id_in(const std::string& s) {
  std::smatch m;
  static const std::regex re("job-[0-9a-f]{8}");
  return std::regex_search(s, m, re) ? m.str() : "";
}

}  // namespace kinetic::test
