#include "backend/local/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

#include "backend/backend.h"
#include "backend/failure_cause.h"
#include "backend/local/job_log.h"
#include "backend/local/port_activity.h"
#include "backend/notify.h"
#include "backend/process_identity.h"
#include "backend/stopped_verdict.h"
#include "core/copy_tree.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "job/function_call.h"
#include "pack/archive.h"
#include "pack/sha256.h"

namespace kinetic {

namespace {

constexpr int kNotifyFd = 3;  // where the runner keeps SupervisorSetup::notify_fd

double monotonic() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void write_status(const fs::path& job_dir, const JobStatus& st) {
  atomic_write(status_path(job_dir), to_json(st).dump(2) + "\n", 0600, Durability::unsynced);
}

struct ChildResult {
  int exit_code = 0;
  int signal = 0;
  bool started = true;
  std::string stderr_tail;  // the end of what it wrote to stderr (failure_cause.h)
};

// What stopped the job, if anything: a cancel, or the deadline, which once passed before the
// job ended decides over a cancel (as in the bootstrap).
enum class Stop { none, cancelled, timed_out, idle };

// Runs one process of the job in its own process group, copying its output to the log, until it
// and its pipes are done. Cancellation (SIGTERM/SIGINT/SIGHUP to the runner) and the deadline
// stop the whole group: SIGTERM first, SIGKILL after the grace period.
class ChildRunner {
 public:
  ChildRunner(JobLogWriter& log, int sigfd, int grace, std::optional<double> deadline, Stop& stop)
      : log_(log), sigfd_(sigfd), grace_(grace), deadline_(deadline), stop_(stop) {}

  // A server's --idle-stop (backend/local/port_activity.h): its group is stopped once IDLE says
  // so, as a cancel stops it.
  void watch_idle(IdleWatch* idle) { idle_ = idle; }

  ChildResult run(const std::vector<std::string>& argv, const std::vector<std::string>& envp,
                  const fs::path& cwd, const std::string& path_var, long* pgid_out,
                  const std::function<void(long)>& on_start) {
    ChildResult result;
    auto prog = find_executable(argv[0], path_var);
    if (!prog) {
      log_.write(LogStream::system, argv[0] + ": command not found on PATH\n");
      result.exit_code = exit_codes::not_found;
      result.started = false;
      return result;
    }
    int out[2], err[2], go[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
        ::pipe2(go, O_CLOEXEC) != 0) {
      log_.write(LogStream::system, std::string("cannot create pipes: ") + std::strerror(errno));
      result.exit_code = exit_codes::not_run;
      result.started = false;
      return result;
    }
    const pid_t pid = spawn(*prog, argv, envp, cwd, out[1], err[1], go);
    ::close(out[1]);
    ::close(err[1]);
    ::close(go[0]);
    if (pid < 0) {
      ::close(out[0]);
      ::close(err[0]);
      ::close(go[1]);
      log_.write(LogStream::system, std::string("cannot fork: ") + std::strerror(errno) + "\n");
      result.exit_code = exit_codes::not_run;
      result.started = false;
      return result;
    }
    ::setpgid(pid, pid);  // also here, so the group exists before any kill below
    *pgid_out = pid;
    on_start(pid);
    // Recorded (status.json names the group): now the job may start. Had the runner died before
    // this, the job would never run, rather than run where nobody can find and stop it.
    const char go_byte = 1;
    [[maybe_unused]] const ssize_t sent = ::write(go[1], &go_byte, 1);
    ::close(go[1]);
    follow(pid, out[0], err[0], result);
    return result;
  }

 private:
  // Forks PROG with ARGV and ENVP in CWD, in a process group of its own, stdout and stderr on
  // the pipes' ends OUT and ERR; -1 when it cannot fork. The child execs PROG only once a byte
  // arrives on the pipe GO (the runner has recorded its group); at end of file (the runner
  // died first) it exits.
  static pid_t spawn(const fs::path& prog, const std::vector<std::string>& argv,
                     const std::vector<std::string>& envp, const fs::path& cwd, int out, int err,
                     const int go[2]) {
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : envp) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (::chdir(cwd.c_str()) != 0) {
      dprintf(2, "kinetic: cannot enter %s: %s\n", cwd.c_str(), std::strerror(errno));
      ::_exit(exit_codes::not_run);
    }
    ::close(go[1]);
    char go_byte = 0;
    ssize_t got;
    do {
      got = ::read(go[0], &go_byte, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1) ::_exit(exit_codes::not_run);
    ::execve(prog.c_str(), cargv.data(), cenv.data());
    dprintf(2, "kinetic: cannot execute %s: %s\n", prog.c_str(), std::strerror(errno));
    ::_exit(errno == ENOENT ? exit_codes::not_found : exit_codes::not_run);
  }

  // Copies the child's output to the log until it has exited and its pipes are drained, while
  // the deadline and cancels stop its group; RESULT gets its exit and the end of its stderr.
  void follow(pid_t pid, int out, int err, ChildResult& result) {
    StreamTail err_tail;
    int fds[2] = {out, err};
    bool reaped = false;
    kill_at_.reset();
    std::optional<double> drain_until;  // after the main process exits, stragglers get this long
    char buf[65536];
    while (fds[0] >= 0 || fds[1] >= 0 || !reaped) {
      double now = monotonic();
      if (!reaped && stop_ != Stop::timed_out && deadline_ && now >= *deadline_) {
        if (stop_ == Stop::none) terminate(pid, now);  // a cancel has stopped it already
        stop_ = Stop::timed_out;
      }
      if (!reaped && stop_ == Stop::none && idle_ && idle_->idle(now_unix())) {
        terminate(pid, now);
        stop_ = Stop::idle;
      }
      if (kill_at_ && now >= *kill_at_) {
        ::kill(-pid, SIGKILL);
        kill_at_.reset();
      }
      if (reaped && drain_until && now >= *drain_until) break;
      double wait = 1.0;
      auto until = [&](const std::optional<double>& t) {
        if (t) wait = std::min(wait, std::max(0.0, *t - now));
      };
      if (!reaped && stop_ != Stop::timed_out) until(deadline_);
      until(kill_at_);
      until(drain_until);
      pollfd p[3] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}, {sigfd_, POLLIN, 0}};
      int r = ::poll(p, 3, static_cast<int>(wait * 1000) + 1);
      if (r < 0 && errno != EINTR) break;
      for (int i = 0; i < 2; ++i) {
        if (fds[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = ::read(fds[i], buf, sizeof buf);
        if (n > 0) {
          const std::string_view chunk(buf, static_cast<size_t>(n));
          log_.write(i == 0 ? LogStream::out : LogStream::err, chunk);
          if (i == 1) err_tail.add(chunk);
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          ::close(fds[i]);
          fds[i] = -1;
        }
      }
      if (p[2].revents & POLLIN) take_signals(pid, reaped);
      if (!reaped && reap(pid, result)) {
        reaped = true;
        // Like a container: when the main process ends, whatever it left behind goes too.
        ::kill(-pid, SIGKILL);
        drain_until = monotonic() + 2.0;
      }
    }
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
    // Reap whatever else of the group ended up as our child (nothing, normally).
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    result.stderr_tail = err_tail.text();
  }

  // A cancel (SIGTERM, SIGINT, SIGHUP to the runner) stops the group: with grace the first
  // time, at once the second.
  void take_signals(pid_t pid, bool reaped) {
    signalfd_siginfo si{};
    while (::read(sigfd_, &si, sizeof si) == sizeof si) {
      if (si.ssi_signo == SIGCHLD) continue;  // reaped by follow()
      if (reaped) continue;
      if (stop_ == Stop::none) {
        stop_ = Stop::cancelled;
        terminate(pid, monotonic());
      } else {
        ::kill(-pid, SIGKILL);  // asked twice: no more grace
      }
    }
  }

  // Whether PID has exited; if so RESULT says how.
  static bool reap(pid_t pid, ChildResult& result) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) return false;
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
      result.exit_code = 128 + result.signal;
    }
    return true;
  }

  void terminate(pid_t pgid, double now) {
    ::kill(-pgid, SIGTERM);
    kill_at_ = now + grace_;
  }

  JobLogWriter& log_;
  int sigfd_;
  int grace_;
  std::optional<double> deadline_;
  Stop& stop_;
  IdleWatch* idle_ = nullptr;
  std::optional<double> kill_at_;  // SIGKILL the group after the grace period
};

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// A held job's stand-in (--hold-on-failure): `sleep SECONDS` in the job's working directory with
// its environment, in a process group of its own, so that `kinetic exec` finds what it reads from
// a running job's process (/proc/PID/environ and cwd) and proves it the job's the same way.
std::optional<pid_t> start_holder(const fs::path& cwd, const std::vector<std::string>& envp,
                                  const std::string& path_var, long seconds) {
  auto prog = find_executable("sleep", path_var);
  if (!prog) prog = fs::path("/bin/sleep");
  const std::string duration = std::to_string(seconds);
  std::vector<char*> argv = {const_cast<char*>("sleep"), const_cast<char*>(duration.c_str()),
                             nullptr};
  std::vector<char*> cenv;
  for (const auto& e : envp) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int devnull = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) ::dup2(devnull, fd);
    ::close_range(3, ~0U, 0);  // the notify pipe above all: its closing releases the caller
    if (::chdir(cwd.c_str()) != 0) ::_exit(exit_codes::not_run);
    ::execve(prog->c_str(), argv.data(), cenv.data());
    ::_exit(exit_codes::not_found);
  }
  if (pid < 0) return std::nullopt;
  ::setpgid(pid, pid);
  return pid;
}

// Until the hold ends: SECONDS pass, the stand-in exits, or a cancel arrives (SIGTERM, SIGINT or
// SIGHUP on SIGFD). Then the stand-in's group, with whatever an exec left in it, is killed.
void wait_out_hold(pid_t holder, int sigfd, long seconds) {
  const double until = monotonic() + static_cast<double>(seconds);
  for (bool over = false; !over;) {
    const double left = until - monotonic();
    if (left <= 0) break;
    pollfd p{sigfd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min(left, 3600.0) * 1000) + 1);
    if (r < 0 && errno != EINTR) break;
    signalfd_siginfo si{};
    while (r > 0 && ::read(sigfd, &si, sizeof si) == sizeof si)
      if (si.ssi_signo != SIGCHLD) over = true;
    if (::waitpid(holder, nullptr, WNOHANG) == holder) return;
  }
  ::kill(-holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
}

// Moves (or, across filesystems, copies) the contents of FROM into TO.
void deliver(const fs::path& from, const fs::path& to) {
  make_dirs(to.parent_path(), 0755);
  std::error_code ec;
  if (!fs::exists(to, ec)) {
    fs::rename(from, to, ec);
    if (!ec) return;
  }
  copy_tree(from, to, "the outputs");
  fs::remove_all(from, ec);
}

// A pipeline step's inputs (JobSpec::inputs): a copy of each needed step's outputs in
// INPUTS/NAME/, so a step that writes into its inputs cannot change what the cache holds. The
// status.json kinetic adds to every output directory is not the step's output: left out.
void copy_inputs(const JobSpec& spec, const fs::path& inputs) {
  for (const auto& [name, location] : spec.inputs) {
    const fs::path from = starts_with(location, "file://") ? location.substr(7) : location;
    const fs::path to = inputs / name;
    make_dirs(to, 0755);
    std::error_code ec;
    if (!fs::is_directory(from, ec))
      throw Error(Errc::not_found, "the outputs of step " + name + " are gone from " +
                                       from.string() + "; run the pipeline again to remake them");
    for (const auto& entry : fs::directory_iterator(from, ec)) {
      if (entry.path().filename() == "status.json") continue;
      fs::copy(entry.path(), to / entry.path().filename(),
               fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
      if (ec)
        throw Error(Errc::internal, "cannot copy the outputs of step " + name + " from " +
                                        entry.path().string() + ": " + ec.message());
    }
    if (ec)
      throw Error(Errc::internal, "cannot read the outputs of step " + name + " in " +
                                      from.string() + ": " + ec.message());
  }
}

// --data: each mount appears at its DST in the work directory as a link to the data itself (a
// local directory as it is, a gs:// prefix's cached copy), so nothing is copied. An absolute
// DST is its source already (pipeline.cpp refuses any other on this backend).
void link_data(const JobSpec& spec, const fs::path& work) {
  const fs::path cwd = spec.workdir.empty() ? work : work / spec.workdir;
  for (const DataMount& m : spec.data) {
    if (m.absolute_target()) continue;
    const std::string uri = m.staged_uri;
    if (!starts_with(uri, "file://"))
      throw Error(Errc::job_start, "--data " + m.source + " was not staged for this machine");
    const fs::path link = fs::path(data_mount_path(m, cwd.string()));
    make_dirs(link.parent_path(), 0755);
    std::error_code ec;
    fs::create_directory_symlink(uri.substr(7), link, ec);
    if (ec)
      throw Error(Errc::job_start,
                  "cannot show --data " + m.source + " at " + m.target + ": " + ec.message());
  }
}

// One local job's run, in the phases the GKE bootstrap runs a pod's (docs/decisions.md "One
// runner's phases"): prepare, environment, command (compiling a C++ job), attempts, the verdict,
// collect, hold, notify, clean. Each phase is a method named as the bootstrap's function.
class LocalRun {
 public:
  LocalRun(const SupervisorSetup& setup, int sigfd)
      : setup_(setup),
        spec_(setup.spec),
        dir_(setup.job_dir),
        log_(log_path(dir_), setup.notify_fd >= 0 ? kNotifyFd : -1),
        st_(initial_status(spec_)),
        m0_(monotonic()),
        work_(dir_ / "work"),
        output_(dir_ / "output"),
        checkpoints_(dir_ / "checkpoints"),
        inputs_(dir_ / "inputs"),
        cwd_(spec_.workdir.empty() ? work_ : work_ / spec_.workdir),
        sigfd_(sigfd) {
    st_.state = std::string(kRunning);
    st_.started = rfc3339(now_unix());
  }

  [[noreturn]] void run() {
    try {
      write_status(dir_, st_);
      prepare();
      environment();
      std::optional<double> deadline;
      if (spec_.timeout_seconds) deadline = m0_ + static_cast<double>(*spec_.timeout_seconds);
      ChildRunner runner(log_, sigfd_, setup_.kill_grace_seconds, deadline, stop_);
      const std::vector<std::string> argv = command(runner);
      std::optional<IdleWatch> idle;
      if (spec_.serve && spec_.serve->idle_stop_seconds > 0) {
        const int port = spec_.serve->port;
        idle.emplace(static_cast<double>(spec_.serve->idle_stop_seconds),
                     [port] { return port_use(port); });
        runner.watch_idle(&*idle);
      }
      if (!argv.empty()) attempts(runner, argv);
      stopped_verdict();
    } catch (const std::exception& e) {
      log_.write(LogStream::system, std::string(e.what()) + "\n");
      finish(kFailed, exit_codes::not_run, e.what());
    }
    collect();
    const std::optional<pid_t> holder = hold();
    if (!holder) clean();
    write_status(dir_, st_);  // last: a reader that sees a final state finds everything in place
    notify();
    if (holder) {
      // The run is over for whoever follows it: closing the notify pipe releases a foreground
      // kinetic (it reads the verdict, and held_until, from status.json).
      ::close(kNotifyFd);
      wait_out_hold(*holder, sigfd_, spec_.hold_on_failure_seconds);
      clean();
      st_.held_until.clear();
      write_status(dir_, st_);
    }
    ::_exit(0);
  }

 private:
  void finish(std::string_view state, std::optional<int> code, std::string error) {
    st_.state = std::string(state);
    st_.exit_code = code;
    st_.error = std::move(error);
    st_.finished = rfc3339(now_unix());
    st_.duration_seconds = monotonic() - m0_;
  }

  // The bootstrap's unpack_context, place_data and place_inputs.
  void prepare() {
    unpack_archive(setup_.context_archive, work_);
    link_data(spec_, work_);
    make_dirs(output_, 0755);
    make_dirs(checkpoints_, 0755);
    copy_inputs(spec_, inputs_);
  }

  // The job's environment, working directory and PATH: also what a held job's exec sees.
  void environment() {
    for (const auto& [k, v] : setup_.base_env) {
      envp_.push_back(k + "=" + v);
      if (k == "PATH") path_var_ = v;
    }
    auto add = [&](const std::string& k, const std::string& v) { envp_.push_back(k + "=" + v); };
    add("KINETIC_JOB_ID", spec_.id);
    add("KINETIC_OUTPUT_DIR", output_.string());
    add("KINETIC_CHECKPOINT_DIR", checkpoints_.string());
    add("KINETIC_ACCELERATOR", spec_.accelerator);
    add("KINETIC_BACKEND", "local");
    if (!spec_.inputs.empty()) add("KINETIC_INPUT_DIR", inputs_.string());
    add("PYTHONUNBUFFERED", "1");
    for (const auto& [k, v] : spec_.env) add(k, v);
    for (const auto& k : spec_.secret_env) {
      if (k == kNotifyVariable) continue;  // the runner's, not the job's
      auto it = setup_.secrets.find(k);
      if (it != setup_.secrets.end()) add(k, it->second);
    }
  }

  // Records each process of the job as it starts: `cancel` and `exec` find it by this group.
  void started(long pgid) {
    job_started_ = true;
    set_process_group(static_cast<pid_t>(pgid));
    st_.state = std::string(kRunning);  // a retry follows a failed attempt
    st_.exit_code.reset();
    st_.error.clear();
    write_status(dir_, st_);
  }

  void set_process_group(pid_t leader) {
    auto group = record_process_group(leader);
    st_.pgid = group.pgid;
    st_.pgid_start = group.leader_start;
    st_.pgid_session = group.session;
    st_.boot_id = group.boot_id;
  }

  ChildResult run_child(ChildRunner& runner, const std::vector<std::string>& argv) {
    return runner.run(argv, envp_, cwd_, path_var_, &st_.pgid,
                      [this](long pgid) { started(pgid); });
  }

  // What runs the job; empty when it cannot run (a C++ job that did not compile, or a stop
  // while it compiled).
  std::vector<std::string> command(ChildRunner& runner) {
    const fs::path file = work_ / spec_.file;
    std::vector<std::string> argv;
    switch (spec_.kind) {
      case JobKind::function:
        // The runner (job/function_runner.py) unpickles the call with the context importable
        // and leaves the outcome in the outputs (docs/python.md).
        argv = {"python3", "-u", function_runner_path(dir_).string(),
                function_call_path(dir_).string(), work_.string()};
        break;
      case JobKind::python:
        argv = {"python3", "-u", file.string()};
        break;
      case JobKind::shell:
        argv = {"bash", file.string()};
        break;
      case JobKind::executable:
        argv = {file.string()};
        break;
      case JobKind::cpp:
        argv = compile(runner, file);
        break;
    }
    for (const auto& a : spec_.args)
      if (!argv.empty()) argv.push_back(a);
    if (spec_.debug && !argv.empty()) argv = under_debugger(argv);
    return argv;
  }

  // `run --debug`: the same Python command, started by the debug launcher (job/debug_spec.h),
  // which waits for a debugger first. One host: no other host waits for a release.
  std::vector<std::string> under_debugger(const std::vector<std::string>& argv) const {
    const DebugSpec& debug = *spec_.debug;
    std::vector<std::string> launched = {"python3",
                                         "-u",
                                         debug_launcher_path(dir_).string(),
                                         std::to_string(debug.port),
                                         std::to_string(debug.wait_seconds),
                                         debug.remote_root,
                                         work_.string(),
                                         "-1",
                                         "--"};
    // Past "python3 -u": the script and its arguments.
    launched.insert(launched.end(), argv.begin() + 2, argv.end());
    return launched;
  }

  // Compiled where it runs, as part of the job: a compile error is the job's failure.
  std::vector<std::string> compile(ChildRunner& runner, const fs::path& file) {
    const fs::path bin = work_ / ".kinetic" / "bin" / fs::path(spec_.file).stem();
    make_dirs(bin.parent_path(), 0755);
    const ChildResult cc =
        run_child(runner, {"g++", "-O2", "-std=c++20", "-o", bin.string(), file.string()});
    if (stop_ == Stop::none && cc.exit_code == 0) return {bin.string()};
    if (stop_ == Stop::none) {
      // g++'s first error is the line to quote; its last is a summary.
      const std::string cause = compile_error(cc.stderr_tail);
      finish(kFailed, cc.exit_code,
             cc.started
                 ? "compiling " + spec_.file + " failed (g++ exit " + std::to_string(cc.exit_code) +
                       ")" + (cause.empty() ? "" : ": " + cause)
                 : "g++ not found on PATH; install g++ to run C++ jobs");
    }
    return {};
  }

  // Runs the job until it succeeds, its retries are spent, or it is stopped.
  void attempts(ChildRunner& runner, const std::vector<std::string>& argv) {
    for (int attempt = 0; attempt <= spec_.retries; ++attempt) {
      st_.attempts = attempt + 1;
      if (attempt > 0) {
        std::error_code ec;
        const bool saved = !fs::is_empty(checkpoints_, ec) && !ec;
        log_.write(
            LogStream::system,
            attempt_line(st_.attempt_history.back(), attempt + 1, spec_.retries + 1, saved) + "\n");
      }
      AttemptRecord record;
      record.attempt = attempt + 1;
      record.started = rfc3339(now_unix());
      const ChildResult r = run_child(runner, argv);
      record.finished = rfc3339(now_unix());
      record.exit_code = r.exit_code;
      record.state = r.exit_code == 0 ? std::string(kSucceeded) : std::string(kFailed);
      if (stop_ != Stop::none) {
        // One of the run's attempts, as the bootstrap records it: the verdict will say how.
        st_.attempt_history.push_back(record);
        break;
      }
      if (r.exit_code == 0) {
        st_.attempt_history.push_back(record);
        finish(kSucceeded, 0, "");
        break;
      }
      std::string why = r.signal ? "killed by " + signal_name(r.signal)
                                 : "exited with code " + std::to_string(r.exit_code);
      if (!r.started) why = "could not start " + argv[0];
      // The job's own last error line says more than its exit code (failure_cause.h).
      const std::string cause = r.started ? failure_cause(r.stderr_tail) : "";
      record.error = cause.empty() ? "job " + why : cause;
      st_.attempt_history.push_back(record);
      finish(kFailed, r.exit_code, record.error);
      if (!r.started) break;
    }
  }

  // A cancel or the deadline decides the verdict, whatever the job's last exit said
  // (backend/stopped_verdict.h), and the stopped attempt's entry says the same.
  void stopped_verdict() {
    if (stop_ == Stop::none) return;
    const StoppedVerdict v = stop_ == Stop::timed_out ? deadline_verdict(spec_)
                             : stop_ == Stop::idle
                                 ? idle_verdict(spec_.serve ? spec_.serve->idle_stop_seconds : 0)
                                 : cancelled_verdict();
    finish(v.state, v.exit_code, v.error);
    if (!st_.attempt_history.empty() && st_.attempt_history.back().attempt == st_.attempts) {
      AttemptRecord& last = st_.attempt_history.back();
      last.state = v.state;
      last.exit_code = v.exit_code;
      last.error = v.error;
    }
  }

  // The bootstrap's upload_outputs: outputs and status.json go to the caller's output
  // directory, even on failure.
  void collect() {
    try {
      if (!spec_.output_dir.empty()) {
        if (fs::exists(output_)) deliver(output_, spec_.output_dir);
        make_dirs(spec_.output_dir, 0755);
        atomic_write(fs::path(spec_.output_dir) / "status.json", to_json(st_).dump(2) + "\n", 0644);
      }
    } catch (const std::exception& e) {
      log_.write(LogStream::system, std::string(e.what()) + "\n");
      if (st_.error.empty()) st_.error = e.what();
    }
  }

  // --hold-on-failure: a job that failed for good (not cancelled, not timed out) stays up for
  // `kinetic exec`: a stand-in process in its working directory with its environment, until
  // the hold ends or `kinetic cancel` (SIGTERM) releases it.
  std::optional<pid_t> hold() {
    if (spec_.hold_on_failure_seconds <= 0 || st_.state != kFailed || !job_started_ ||
        !fs::exists(cwd_))
      return std::nullopt;
    const std::optional<pid_t> holder =
        start_holder(cwd_, envp_, path_var_, spec_.hold_on_failure_seconds);
    if (!holder) return std::nullopt;
    set_process_group(*holder);
    const auto seconds = static_cast<double>(spec_.hold_on_failure_seconds);
    st_.held_until = rfc3339(now_unix() + seconds);
    log_.write(LogStream::system,
               spec_.id + " is held " + format_duration(seconds) + " for `kinetic exec " +
                   spec_.id + " -it -- bash`; `kinetic cancel " + spec_.id + "` ends it sooner\n");
    return holder;
  }

  // --notify: the runner sees every verdict (a cancel is its SIGTERM), so it tells the hooks;
  // one that cannot be reached is a line in the job's log, never the job's failure.
  void notify() {
    auto it = setup_.secrets.find(kNotifyVariable);
    if (it == setup_.secrets.end()) return;
    st_.id = spec_.id;
    const auto payload =
        notify_payload(notify_facts(st_, spec_.price_per_hour, spec_.output_dir + "/"));
    for (const auto& w : post_notifications(split_notify_urls(it->second), payload))
      log_.write(LogStream::system, w + "\n");
  }

  // The work directory and inputs go unless --keep (a held job's, once the hold ends).
  void clean() {
    if (spec_.keep) return;
    remove_all_quiet(work_);
    remove_all_quiet(inputs_);
  }

  const SupervisorSetup& setup_;
  const JobSpec& spec_;
  const fs::path& dir_;
  JobLogWriter log_;
  JobStatus st_;
  const double m0_;
  const fs::path work_, output_, checkpoints_, inputs_;
  const fs::path cwd_;
  const int sigfd_;
  std::vector<std::string> envp_;
  std::string path_var_ = "/usr/local/bin:/usr/bin:/bin";
  bool job_started_ = false;
  Stop stop_ = Stop::none;
};

[[noreturn]] void supervise(const SupervisorSetup& setup, int sigfd) {
  LocalRun(setup, sigfd).run();
}

}  // namespace

pid_t start_supervisor(const SupervisorSetup& setup) {
  // Block the signals the runner handles through its signalfd before forking, so a cancel that
  // arrives right away is queued rather than fatal.
  sigset_t handled, old;
  sigemptyset(&handled);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&handled, s);
  ::sigprocmask(SIG_BLOCK, &handled, &old);
  pid_t pid = ::fork();
  if (pid != 0) {
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0)
      throw Error(Errc::job_start,
                  std::string("cannot start the job runner: ") + std::strerror(errno));
    // Written by the parent, before anyone can ask whether the runner is alive.
    atomic_write(
        supervisor_path(setup.job_dir),
        nlohmann::json(
            {{"pid", pid}, {"start_time", process_start_time(pid)}, {"boot_id", current_boot_id()}})
                .dump() +
            "\n",
        0600, Durability::unsynced);
    return pid;
  }
  ::setsid();
  ::signal(SIGPIPE, SIG_IGN);
  int devnull = ::open("/dev/null", O_RDWR);
  ::dup2(devnull, 0);
  ::dup2(devnull, 1);
  ::dup2(devnull, 2);
  unsigned first_to_close = 3;
  if (setup.notify_fd >= 0) {
    ::dup2(setup.notify_fd, kNotifyFd);
    ::fcntl(kNotifyFd, F_SETFD, FD_CLOEXEC);  // the job itself must not hold it open
    first_to_close = kNotifyFd + 1;
  }
  ::close_range(first_to_close, ~0U, 0);
  int sigfd = ::signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  supervise(setup, sigfd);
}

bool supervisor_alive(const fs::path& job_dir) {
  auto text = read_file(supervisor_path(job_dir));
  if (!text) return false;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return false;
  return is_recorded_process(j.value("pid", 0), j.value("start_time", ""), j.value("boot_id", ""));
}

bool signal_supervisor(const fs::path& job_dir, int sig) {
  if (!supervisor_alive(job_dir)) return false;
  auto j = nlohmann::json::parse(*read_file(supervisor_path(job_dir)));
  return ::kill(j.value("pid", 0), sig) == 0;
}

void stage_function_call(const FunctionCall& call, const fs::path& job_dir) {
  const fs::path to = function_call_path(job_dir);
  std::error_code ec;
  fs::copy_file(call.local_path, to, fs::copy_options::overwrite_existing, ec);
  if (ec)
    throw Error(Errc::internal, "cannot copy the call " + call.local_path + " into " +
                                    job_dir.string() + ": " + ec.message());
  fs::permissions(to, fs::perms::owner_read | fs::perms::owner_write, ec);
  // What runs is what was read: a call file rewritten meanwhile is refused, not half-used.
  if (sha256_file(to) != call.sha256)
    throw Error(Errc::usage, "--function " + call.local_path +
                                 " changed while kinetic read it; write it once and run again");
  atomic_write(function_runner_path(job_dir), std::string(function_runner_source()), 0600,
               Durability::unsynced);
}

void stage_debug_launcher(const fs::path& job_dir) {
  atomic_write(debug_launcher_path(job_dir), std::string(debug_launcher_source()), 0600,
               Durability::unsynced);
}

}  // namespace kinetic
