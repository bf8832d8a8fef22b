// Detached jobs seen from new processes: logs, status, cancel, cleanup.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "backend/process_identity.h"
#include "cli_harness.h"
#include "core/strings.h"
#include "integration/stopped_verdict_case.h"
#include "render/output.h"

namespace kinetic::test {
namespace {

class JobsTest : public ::testing::Test {
 protected:
  Sandbox sb;
  fs::path proj = sb.project("proj");

  std::string detach(const std::string& file) {
    auto r = sb.run({"run", file, "--detach"}, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // stdout is the job id alone, so scripts can capture it.
    EXPECT_EQ(line_count(r.out), 1u) << r.out;
    std::string id = first_line(r.out);
    EXPECT_EQ(job_id_in(id), id);
    return id;
  }
  nlohmann::json status(const std::string& id) {
    auto r = sb.run({"status", id, "-o", "json"}, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
};

TEST_F(JobsTest, DetachThenLogsFollowThenStatusJson) {
  // The job waits for a file the test creates, so it is surely running while we look.
  sb.write("proj/slow.sh",
           "echo line-1\necho err-1 >&2\n"
           "while [ ! -f go ]; do sleep 0.05; done\n"
           "echo line-2\necho done > \"$KINETIC_OUTPUT_DIR/result.txt\"\nexit 7\n");
  // The job looks for `go` in its own work dir: the test creates it there once it has seen the
  // first line through `logs -f`.
  std::string id = detach("slow.sh");
  // Submitted; the runner may not have started it yet (pending), and nothing ends it.
  EXPECT_TRUE(eventually([&] { return status(id)["state"] == "running"; }));

  fs::path out = sb.root() / "logs.out", err = sb.root() / "logs.err";
  int follower = sb.spawn({"logs", "-f", id}, proj, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find("line-1") != std::string::npos; }));
  EXPECT_TRUE(process_alive(follower)) << "logs -f returned while the job runs";
  sb.write("state/jobs/" + id + "/work/go", "");
  EXPECT_EQ(Sandbox::wait(follower), 0) << slurp(err);
  EXPECT_EQ(slurp(out), "line-1\nline-2\n");
  EXPECT_EQ(slurp(err), "err-1\n");

  auto st = status(id);
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 7);
  EXPECT_EQ(slurp(proj / "kinetic-out" / id / "result.txt"), "done\n");

  // Logs stay readable after the job, and without -f they do not wait.
  auto logs = sb.run({"logs", id}, proj);
  EXPECT_EQ(logs.exit_code, 0);
  EXPECT_EQ(logs.out, "line-1\nline-2\n");
}

// `logs --since`: a duration back from now or an RFC 3339 time; what came before it is left out
// (the log's time marks, lib/backend/local/job_log.h), and bad input is one line, exit 2.
TEST_F(JobsTest, LogsSinceShowsWhatTheJobWroteFromThen) {
  sb.write("proj/two.py", "import sys\nprint('out')\nprint('err', file=sys.stderr)\n");
  auto r = sb.run({"run", "two.py"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = job_id_in(r.err);
  for (const std::string since : {"1h", "2000-01-01T00:00:00Z"}) {
    auto all = sb.run({"logs", id, "--since", since}, proj);
    EXPECT_EQ(all.exit_code, 0) << all.err;
    EXPECT_EQ(all.out, "out\n") << since;
    EXPECT_NE(all.err.find("err\n"), std::string::npos) << all.err;
  }
  auto later = sb.run({"logs", id, "--since", "2099-01-01T00:00:00Z"}, proj);
  EXPECT_EQ(later.exit_code, 0) << later.err;
  EXPECT_EQ(later.out, "");
  EXPECT_EQ(sb.run({"logs", "-f", id, "--since", "2099-01-01T00:00:00Z"}, proj).out, "");

  auto bad = sb.run({"logs", id, "--since", "2026-13-01T00:00:00Z"}, proj);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "error: --since 2026-13-01T00:00:00Z is not an RFC 3339 UTC time; pass e.g. "
            "2026-11-27T09:30:00Z, or a duration such as 10m or 2h\n");
  EXPECT_EQ(sb.run({"logs", id, "--since", "soon"}, proj).exit_code, 2);
  auto both = sb.run({"logs", id, "--since", "1h", "--tail", "1"}, proj);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.err, "error: --since and --tail each say where the log starts: pass one\n");
}

TEST_F(JobsTest, StatusListsJobsInEveryFormat) {
  sb.write("proj/ok.sh", "true\n");
  sb.write("proj/bad.sh", "exit 4\n");
  ASSERT_EQ(sb.run({"run", "ok.sh"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"run", "bad.sh"}, proj).exit_code, 4);

  auto json = sb.run({"status", "-o", "json"}, proj);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["context"], "local");
  EXPECT_EQ(doc["backend"], "local");
  ASSERT_EQ(doc["jobs"].size(), 2u);
  std::set<std::string> states;
  for (const auto& j : doc["jobs"]) states.insert(j["state"].get<std::string>());
  EXPECT_EQ(states, (std::set<std::string>{"succeeded", "failed"}));

  auto names = sb.run({"status", "-o", "name"}, proj);
  EXPECT_EQ(line_count(names.out), 2u);
  for (const auto& j : doc["jobs"])
    EXPECT_NE(names.out.find(j["id"].get<std::string>()), std::string::npos);

  auto yaml = sb.run({"status", "-o", "yaml"}, proj);
  EXPECT_NE(yaml.out.find("backend: local"), std::string::npos) << yaml.out;

  auto table = sb.run({"status"}, proj);
  EXPECT_EQ(table.out.substr(0, 4), "JOB\t") << "tab-separated when piped: " << table.out;
  EXPECT_EQ(line_count(table.out), 3u);

  auto bad = sb.run({"status", "-o", "jsn"}, proj);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("did you mean json?"), std::string::npos) << bad.err;
}

// A job's pod writes its status.json (on gke through the bucket): its error text is shown
// escaped in every table and one-line view, and exact in -o json (issue #28 point 8).
TEST_F(JobsTest, AnErrorTextCannotDriveTheTerminal) {
  sb.write("proj/bad.sh", "exit 4\n");
  auto run = sb.run({"run", "bad.sh", "--detach"}, proj);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string id = first_line(run.out);
  ASSERT_TRUE(eventually([&] { return status(id)["state"] == "failed"; }));
  const std::string hostile =
      "boom\033]0;owned\a\rall fine\xc2\x9b"
      "2J\xe2\x80\xae";
  const fs::path record = sb.state() / "jobs" / id / "status.json";
  auto doc = nlohmann::json::parse(slurp(record));
  doc["error"] = hostile;
  sb.write("state/jobs/" + id + "/status.json", doc.dump());

  for (const auto& args : {std::vector<std::string>{"status", "-o", "wide"},
                           std::vector<std::string>{"status", id, "-o", "wide"},
                           std::vector<std::string>{"collect", id}}) {
    auto r = sb.run(args, proj);
    const std::string shown = r.out + r.err;
    EXPECT_EQ(shown.find_first_of("\033\a\r"), std::string::npos) << args[0] << ": " << shown;
    EXPECT_EQ(shown.find("\xc2\x9b"), std::string::npos) << shown;
    EXPECT_EQ(shown.find("\xe2\x80\xae"), std::string::npos) << shown;
  }
  auto wide = sb.run({"status", "-o", "wide"}, proj);
  EXPECT_NE(wide.out.find("boom\\x1B]0;owned\\x07\\rall fine\\u009B2J\\u202E"), std::string::npos)
      << wide.out;
  EXPECT_EQ(status(id)["error"], hostile) << "-o json stays exact";
}

TEST_F(JobsTest, CancelStopsADetachedJobAndItsProcesses) {
  sb.write("proj/forever.sh",
           "sleep 1000 & echo $! > \"$KINETIC_CHECKPOINT_DIR/child.pid\"\necho up\nwait\n");
  std::string id = detach("forever.sh");
  fs::path pidfile = sb.state() / "jobs" / id / "checkpoints" / "child.pid";
  ASSERT_TRUE(eventually([&] { return slurp(pidfile).find('\n') != std::string::npos; }));
  int child = std::stoi(slurp(pidfile));
  auto r = sb.run({"cancel", id}, proj);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(id + " cancelled"), std::string::npos) << r.err;
  EXPECT_TRUE(eventually([&] { return !process_alive(child); }, 10));
  // The golden's verdict, as the bootstrap records it in a pod.
  EXPECT_EQ(verdict_in(status(id)), golden_stopped_verdict("SIGTERM"));
  // Cancelling again is harmless and says so.
  auto again = sb.run({"cancel", id}, proj);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.err.find("already cancelled"), std::string::npos) << again.err;
}

// A job that ignores the cancel's SIGTERM is still running when its deadline passes (SIGKILL
// comes only after the grace): the deadline decides the verdict, as in the bootstrap, whose
// timer stops a job a signal has not (docs/decisions.md "One runner's phases").
TEST_F(JobsTest, TheDeadlineDecidesOverACancelTheJobOutlived) {
  sb.write("proj/stubborn.sh", "trap '' TERM\necho up\nsleep 60\n");
  auto d = sb.run({"run", "stubborn.sh", "--detach", "--timeout", "3s"}, proj);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string id = first_line(d.out);
  ASSERT_TRUE(eventually([&] { return sb.run({"logs", id}, proj).out == "up\n"; }));
  // Before the deadline on any machine that runs the job within 3 s; after it, the deadline
  // decides anyway.
  auto c = sb.run({"cancel", id}, proj);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(verdict_in(status(id)), golden_stopped_verdict("deadline"));
}

TEST_F(JobsTest, UnknownJobIsAOneLineErrorWithSuggestions) {
  sb.write("proj/ok.sh", "true\n");
  auto run = sb.run({"run", "ok.sh"}, proj);
  std::string id = job_id_in(run.err);
  std::string typo = id;
  typo[5] = typo[5] == 'a' ? 'b' : 'a';
  for (const auto& cmd : {"logs", "status", "cancel"}) {
    auto r = sb.run({cmd, typo}, proj);
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("did you mean " + id), std::string::npos) << r.err;
  }
}

TEST_F(JobsTest, CleanupDryRunListsThenCleanupRemoves) {
  sb.write("proj/ok.sh", "true\n");
  std::string id = job_id_in(sb.run({"run", "ok.sh"}, proj).err);
  ASSERT_TRUE(fs::exists(sb.state() / "jobs" / id));

  // By default a job's record stays for 7 days after it finished.
  auto kept = sb.run({"cleanup", "--dry-run", "-o", "json"}, proj);
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(kept.out.find(id), std::string::npos) << kept.out;

  auto dry = sb.run({"cleanup", "--older-than", "0s", "--dry-run", "-o", "json"}, proj);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  auto items = nlohmann::json::parse(dry.out)["items"];
  std::set<std::string> kinds;
  for (const auto& i : items) kinds.insert(i["kind"].get<std::string>());
  EXPECT_TRUE(kinds.count("job") && kinds.count("context")) << dry.out;
  EXPECT_TRUE(fs::exists(sb.state() / "jobs" / id)) << "--dry-run removed something";

  auto young = sb.run({"cleanup", "--older-than", "1d"}, proj);
  EXPECT_EQ(young.exit_code, 0);
  EXPECT_TRUE(fs::exists(sb.state() / "jobs" / id)) << "a fresh job is not older than 1d";

  auto real = sb.run({"cleanup", "--older-than", "0s"}, proj);
  EXPECT_EQ(real.exit_code, 0) << real.err;
  EXPECT_FALSE(fs::exists(sb.state() / "jobs" / id));
  EXPECT_TRUE(fs::is_empty(sb.state() / "store" / "contexts"));
  // The outputs the user was given are never touched.
  EXPECT_TRUE(fs::exists(proj / "kinetic-out" / id / "status.json"));
  auto status = sb.run({"status", "-o", "name"}, proj);
  EXPECT_EQ(status.out, "");
}

// --keep-last N keeps the N latest finished records whatever their age; with --older-than, what
// finished within it stays too. "Latest" is when the record last changed (status.json).
TEST_F(JobsTest, CleanupKeepLastKeepsTheLatestRecords) {
  sb.write("proj/ok.sh", "true\n");
  std::vector<std::string> ids;  // oldest first
  const auto now = fs::file_time_type::clock::now();
  for (int hours : {72, 48, 1}) {
    ids.push_back(job_id_in(sb.run({"run", "ok.sh"}, proj).err));
    fs::last_write_time(sb.state() / "jobs" / ids.back() / "status.json",
                        now - std::chrono::hours(hours));
  }
  auto names = [&](const std::vector<std::string>& args) {
    auto r = sb.run(args, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> jobs;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    for (const auto& item : doc["items"])
      if (item["kind"] == "job") jobs.insert(item["name"].get<std::string>());
    return jobs;
  };
  EXPECT_EQ(names({"cleanup", "--keep-last", "1", "--dry-run", "-o", "json"}),
            (std::set<std::string>{ids[0], ids[1]}));
  EXPECT_EQ(
      names({"cleanup", "--keep-last", "1", "--older-than", "60h", "--dry-run", "-o", "json"}),
      (std::set<std::string>{ids[0]}));
  EXPECT_EQ(names({"cleanup", "--keep-last", "2", "-o", "json"}), (std::set<std::string>{ids[0]}));
  EXPECT_FALSE(fs::exists(sb.state() / "jobs" / ids[0]));
  EXPECT_TRUE(fs::exists(sb.state() / "jobs" / ids[1]) && fs::exists(sb.state() / "jobs" / ids[2]));

  auto both = sb.run({"cleanup", ids[1], "--keep-last", "1"}, proj);
  EXPECT_EQ(both.exit_code, 2) << both.err;
  auto negative = sb.run({"cleanup", "--keep-last", "-1"}, proj);
  EXPECT_EQ(negative.exit_code, 2) << negative.err;
}

TEST_F(JobsTest, CleanupKeepsWhatARunningJobUses) {
  sb.write("proj/wait.sh", "while [ ! -f go ]; do sleep 0.05; done\n");
  std::string id = detach("wait.sh");
  auto r = sb.run({"cleanup", "--older-than", "0s"}, proj);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(fs::exists(sb.state() / "jobs" / id));
  EXPECT_FALSE(fs::is_empty(sb.state() / "store" / "contexts"));
  ASSERT_EQ(sb.run({"cancel", id}, proj).exit_code, 0);
}

TEST_F(JobsTest, AKilledRunnerShowsAsLostAndItsJobIsStopped) {
  sb.write("proj/forever.sh",
           "sleep 1000 & echo $! > \"$KINETIC_CHECKPOINT_DIR/child.pid\"\nwait\n");
  std::string id = detach("forever.sh");
  fs::path pidfile = sb.state() / "jobs" / id / "checkpoints" / "child.pid";
  ASSERT_TRUE(eventually([&] { return slurp(pidfile).find('\n') != std::string::npos; }));
  auto sup = nlohmann::json::parse(slurp(sb.state() / "jobs" / id / "supervisor.json"));
  ::kill(sup["pid"].get<int>(), SIGKILL);
  int child = std::stoi(slurp(pidfile));
  ASSERT_TRUE(eventually([&] { return !process_alive(sup["pid"].get<int>()); }));
  auto st = status(id);
  EXPECT_EQ(st["state"], "lost");
  EXPECT_TRUE(eventually([&] { return !process_alive(child); }, 10));
}

// A stranger's process group: a `sleep` leading its own group in this test's session, with
// the default signal dispositions whatever this test inherited (an ignored or blocked SIGTERM
// would outlive exec and keep the stranger from ending when told).
pid_t start_stranger_group() {
  pid_t pid = ::fork();
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGTERM, SIG_DFL);
    ::setpgid(0, 0);
    ::execlp("sleep", "sleep", "1000", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

// How PID ended (its wait status), or nullopt when it had not ended within the limit; then it
// is SIGKILLed and reaped, so a failing test never hangs nor leaves it behind.
std::optional<int> wait_for_exit(pid_t pid, double limit_seconds = 30) {
  int wstatus = 0;
  bool ended = eventually([&] { return ::waitpid(pid, &wstatus, WNOHANG) == pid; }, limit_seconds);
  if (ended) return wstatus;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &wstatus, 0);
  return std::nullopt;
}

// The session and start time of PID (fields 6 and 22 of /proc/PID/stat), once it runs `sleep`.
std::pair<long, long long> session_and_start(pid_t pid) {
  EXPECT_TRUE(
      eventually([&] { return slurp("/proc/" + std::to_string(pid) + "/comm") == "sleep\n"; }));
  auto stat = read_proc_stat(pid);
  if (!stat) return {0, 0};
  return {stat->session, stat->start};
}

// A record outlives its processes. After a reboot, or once the job's group id is reused, the
// recorded pgid names a stranger's group, which `status` must never kill; the job still shows
// as lost (issue #10 point 4).
TEST_F(JobsTest, AStaleProcessGroupIsNeverKilled) {
  sb.write("proj/forever.sh", "sleep 1000\n");
  std::string id = detach("forever.sh");
  fs::path dir = sb.state() / "jobs" / id;
  ASSERT_TRUE(eventually([&] { return status(id).value("pgid", 0L) > 0; }));
  auto recorded = nlohmann::json::parse(slurp(dir / "status.json"));
  auto sup = nlohmann::json::parse(slurp(dir / "supervisor.json"));
  // The job's runner and its group end (as at a reboot): nothing of the job is left.
  ::kill(sup["pid"].get<int>(), SIGKILL);
  ::kill(-recorded["pgid"].get<int>(), SIGKILL);
  ASSERT_TRUE(eventually([&] { return !process_alive(sup["pid"].get<int>()); }));

  // Each case: a stranger's group takes the recorded id; `status` says lost and leaves it be.
  auto survives = [&](const std::function<void(nlohmann::json&, pid_t, long, long long)>& make) {
    pid_t stranger = start_stranger_group();
    ASSERT_GT(stranger, 0);
    auto [session, started] = session_and_start(stranger);
    auto record = recorded;
    record["state"] = "running";
    make(record, stranger, session, started);
    sb.write("state/jobs/" + id + "/status.json", record.dump());
    EXPECT_EQ(status(id)["state"], "lost");
    // Ended by this test's SIGTERM, not by a SIGKILL from kinetic.
    ::kill(stranger, SIGTERM);
    auto wstatus = wait_for_exit(stranger);
    ASSERT_TRUE(wstatus) << "the stranger did not end on SIGTERM";
    ASSERT_TRUE(WIFSIGNALED(*wstatus));
    EXPECT_EQ(WTERMSIG(*wstatus), SIGTERM) << "kinetic killed a stranger's process group";
  };
  // The pid was reused: the stranger now holds the job's group id.
  survives([](nlohmann::json& r, pid_t pid, long, long long) { r["pgid"] = pid; });
  // The machine restarted: the same pid, session and start tick, at another boot.
  survives([](nlohmann::json& r, pid_t pid, long session, long long started) {
    r["pgid"] = pid;
    r["pgid_session"] = session;
    r["pgid_start"] = started;
    r["boot_id"] = "00000000-0000-0000-0000-000000000000";
  });
  // And the same record at this boot is the job's own group: that one is stopped.
  pid_t own = start_stranger_group();
  auto [session, started] = session_and_start(own);
  auto record = recorded;
  record["state"] = "running";
  record["pgid"] = own;
  record["pgid_session"] = session;
  record["pgid_start"] = started;
  sb.write("state/jobs/" + id + "/status.json", record.dump());
  EXPECT_EQ(status(id)["state"], "lost");
  auto wstatus = wait_for_exit(own, 10);
  ASSERT_TRUE(wstatus) << "the job's own group (session " << session
                       << ") was not stopped: " << record.dump();
  EXPECT_TRUE(WIFSIGNALED(*wstatus) && WTERMSIG(*wstatus) == SIGKILL);
}

}  // namespace
}  // namespace kinetic::test
