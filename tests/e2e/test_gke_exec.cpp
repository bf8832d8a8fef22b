// kinetic exec JOB -- CMD on a gke context (issue #13): Kubernetes exec over WebSocket against the
// fake cloud's API server, whose kubelet runs the command as the job's container was started: its
// environment (the image's PATH, the job's --env), its working directory. The exit code is
// kinetic's; stdin only with -i; --host picks a slice's host; a job that ended is one line.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

class GkeExec : public GkeFixture {
 protected:
  // A detached job that says where it runs, marks its directory and waits for `go`, on every
  // host of ACCELERATOR. Returns its id once host 0 is ready (and every host, with --all-hosts).
  std::string start_job(const std::vector<std::string>& extra = {}, int hosts = 1) {
    sb.write("proj/wait.py",
             "import os, time\n"
             "open('marker.txt', 'w').write('made by the job\\n')\n"
             "print('cwd', os.getcwd(), flush=True)\n"
             "print('ready', flush=True)\n"
             "while not os.path.exists('" +
                 go.string() +
                 "'):\n"
                 "    time.sleep(0.01)\n");
    std::vector<std::string> args = {"run", "wait.py", "--detach"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = kin(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string id = first_line(r.out);
    started.push_back(id);
    EXPECT_TRUE(eventually([&] {
      const std::string log = kin({"logs", id, "--all-hosts"}).out;
      size_t ready = 0;
      for (size_t at = log.find("ready"); at != std::string::npos; at = log.find("ready", at + 1))
        ++ready;
      return static_cast<int>(ready) >= hosts;
    })) << kin({"logs", id, "--all-hosts"}).out;
    return id;
  }
  // The job's working directory, from its own first line.
  std::string job_cwd(const std::string& id) {
    const std::string log = kin({"logs", id}).out;
    const size_t at = log.find("cwd ");
    if (at == std::string::npos) return "(no cwd line)";
    return log.substr(at + 4, log.find('\n', at) - at - 4);
  }
  void TearDown() override {
    sb.write("go", "");
    for (const auto& id : started) kin({"logs", "-f", id});
  }

  fs::path go = sb.root() / "go";
  std::vector<std::string> started;
};

TEST_F(GkeExec, RunsInTheJobsContainerWithItsEnvironmentDirectoryAndExitCode) {
  const std::string id = start_job({"--env", "API_TOKEN=tok-123"});
  auto r = kin({"exec", id, "--", "sh", "-c",
                "cat marker.txt; pwd; echo \"token=$API_TOKEN\"; echo to-stderr >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "made by the job\n" + job_cwd(id) + "\ntoken=tok-123\n");
  EXPECT_EQ(r.err, "to-stderr\n");
  // Through the API server's exec route, as a WebSocket GET.
  EXPECT_GE(cloud_->kube().request_counts()["GET /api/v1/namespaces/{ns}/pods/{name}/exec"], 1);
}

TEST_F(GkeExec, VerboseTracesTheUpgradeWithoutTheToken) {
  const std::string id = start_job();
  auto r = kin({"exec", id, "-v", "6", "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("/exec?command=python3&command=-c&"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" 101 in "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(env().at("CLOUDSDK_AUTH_ACCESS_TOKEN")), std::string::npos) << r.err;
}

TEST_F(GkeExec, TheJobsPathNotThisMachines) {
  const std::string id = start_job();
  // This machine has kubectl (kubectl_fidelity uses it); the job's image does not.
  auto r = kin({"exec", id, "--", "kubectl", "version"});
  EXPECT_EQ(r.exit_code, 127) << r.out;
  EXPECT_EQ(r.err, "kinetic: exec: kubectl: not found in the job's PATH\n");
}

TEST_F(GkeExec, StdinReachesTheCommandOnlyWithI) {
  const std::string id = start_job();
  const fs::path input = sb.write("input.txt", "line one\nline two\n");
  // `cat` ends when its stdin does: v5 says so on channel 255.
  auto with = sb.run_with_stdin({"exec", id, "-i", "--", "cat"}, proj, input, env());
  EXPECT_EQ(with.exit_code, 0) << with.err;
  EXPECT_EQ(with.out, "line one\nline two\n");
  auto without = sb.run_with_stdin({"exec", id, "--", "cat"}, proj, input, env());
  EXPECT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out, "");
}

TEST_F(GkeExec, TtyWithoutATerminalIsAWarningAndGoesOn) {
  const std::string id = start_job();
  const fs::path input = sb.write("input.txt", "typed\n");
  auto r = sb.run_with_stdin({"exec", id, "-it", "--", "cat"}, proj, input, env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "typed\n");
  EXPECT_EQ(r.err,
            "warning: Unable to use a TTY - input is not a terminal or the right kind of file\n");
}

// Reads MASTER until TEXT has appeared in all that was read (false at its end or after 30 s).
bool read_until(int master, std::string& seen, const std::string& text) {
  for (int i = 0; i < 3000 && seen.find(text) == std::string::npos; ++i) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0) continue;  // a bound, not a timing: 30 s in all
    char buf[4096];
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) return false;
    seen.append(buf, static_cast<size_t>(n));
  }
  return seen.find(text) != std::string::npos;
}

TEST_F(GkeExec, ATerminalIsRawMeanwhileAndTheCommandSeesItsSizeAndResizes) {
  const std::string id = start_job();
  winsize size{40, 100, 0, 0};
  int master = -1;
  const std::vector<std::string> env_strings = sb.environment(env());
  std::vector<char*> envp;
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  // The image has no stty; its python3 tells the size.
  const std::string size_of =
      "python3 -c 'import os; s = os.get_terminal_size(0); print(s.lines, s.columns)'";
  const std::string script = size_of + "; read line; echo \"got:$line\"; " + size_of + "; exit 7";
  std::vector<std::string> args = {KINETIC_BINARY, "exec", id, "-it", "--", "sh", "-c", script};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::chdir(proj.c_str()) != 0) ::_exit(126);
    ::execve(KINETIC_BINARY, argv.data(), envp.data());
    ::_exit(127);
  }
  // The terminal kinetic has, kept open so that its settings can be read after kinetic exits.
  const int terminal = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(terminal, 0);
  std::string seen;
  EXPECT_TRUE(read_until(master, seen, "40 100")) << seen;
  termios raw{};
  ASSERT_EQ(::tcgetattr(terminal, &raw), 0);
  EXPECT_EQ(raw.c_lflag & (ICANON | ECHO | ISIG), 0u) << "raw while the command runs";
  size = {50, 120, 0, 0};
  ASSERT_EQ(::ioctl(master, TIOCSWINSZ, &size), 0);  // SIGWINCH to kinetic
  ASSERT_EQ(::write(master, "hello\r", 6), 6);
  EXPECT_TRUE(read_until(master, seen, "50 120")) << seen;
  EXPECT_NE(seen.find("got:hello"), std::string::npos) << seen;
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
  termios after{};
  ASSERT_EQ(::tcgetattr(terminal, &after), 0);
  EXPECT_EQ(after.c_lflag & (ICANON | ECHO | ISIG), ICANON | ECHO | ISIG) << "restored";
  ::close(terminal);
  ::close(master);
}

TEST_F(GkeExec, AJobThatEndedIsOneLineNamingLogs) {
  auto run = kin({"run", "train.py"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string id = job_id_in(run.err);
  auto r = kin({"exec", id, "--", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: " + id +
                       " has ended (succeeded): there is nothing to exec into; see `kinetic logs " +
                       id + "`\n");
}

class GkeExecSlice : public GkeExec {
 protected:
  void SetUp() override {
    GkeExec::SetUp();
    auto r = kin(
        {"up", "--project", "acme-ml", "--zone", "us-central1-a", "--accelerator", "v5litepod-16"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST_F(GkeExecSlice, HostPicksThePodOfThatHost) {
  const std::string id = start_job({"-a", "v5litepod-16"}, 4);
  auto one = kin({"exec", id, "--host", "1", "--", "sh", "-c", "echo $JOB_COMPLETION_INDEX"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "1\n");
  auto zero = kin({"exec", id, "--", "sh", "-c", "echo $JOB_COMPLETION_INDEX"});
  EXPECT_EQ(zero.out, "0\n") << zero.err;
  auto out_of_range = kin({"exec", id, "--host", "4", "--", "true"});
  EXPECT_EQ(out_of_range.exit_code, 2);
  EXPECT_EQ(out_of_range.err, "error: --host 4: " + id + " runs on 4 hosts, 0 to 3\n");
}

// A slice whose hosts all run is running, as `status` says it (a JobSet has no top-level ready
// count or start time as a Job has: its child Jobs' readiness says it).
TEST_F(GkeExecSlice, StatusSaysASliceWhoseHostsRunIsRunning) {
  const std::string id = start_job({"-a", "v5litepod-16"}, 4);
  std::string state;
  EXPECT_TRUE(eventually([&] {
    state = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out).value("state", "");
    return state == "running";
  })) << state;
}

}  // namespace
}  // namespace kinetic::test
