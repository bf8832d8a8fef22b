// kinetic exec JOB -- CMD (issue #13): a command inside a running job, with the job's working
// directory and environment, its exit code kinetic's; stdin only with -i. The local backend
// here; the gke backend (Kubernetes exec over WebSocket, against the fake) in test_gke_exec.cpp.
#include <gtest/gtest.h>

#include "cli_harness.h"

namespace kinetic::test {
namespace {

class ExecLocal : public ::testing::Test {
 protected:
  // A detached job that marks its directory and waits for `go` (or 60 s).
  std::string start_job(const std::vector<std::string>& extra = {}) {
    sb.write("proj/wait.py",
             "import os, time\n"
             "open('marker.txt', 'w').write('made by the job\\n')\n"
             "print('ready', flush=True)\n"
             "for _ in range(6000):\n"
             "    if os.path.exists('" +
                 go.string() +
                 "'):\n"
                 "        break\n"
                 "    time.sleep(0.01)\n");
    std::vector<std::string> args = {"run", "wait.py", "--detach"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = sb.run(args, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string id = first_line(r.out);
    EXPECT_TRUE(eventually([&] {
      return sb.run({"logs", id}, proj).out.find("ready") != std::string::npos;
    }));
    return id;
  }
  void TearDown() override {
    sb.write("go", "");
    for (const auto& id : started) sb.run({"logs", "-f", id}, proj);
  }

  Sandbox sb;
  fs::path proj = sb.project("proj");
  fs::path go = sb.root() / "go";
  std::vector<std::string> started;
};

TEST_F(ExecLocal, RunsInTheJobsDirectoryWithItsEnvironmentAndExitCode) {
  const std::string id = start_job({"--env", "API_TOKEN=tok-123"});
  started.push_back(id);
  auto r = sb.run({"exec", id, "--", "sh", "-c",
                   "cat marker.txt; echo \"token=$API_TOKEN\"; echo to-stderr >&2; exit 3"},
                  proj);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "made by the job\ntoken=tok-123\n");
  EXPECT_EQ(r.err, "to-stderr\n");
}

TEST_F(ExecLocal, StdinReachesTheCommandOnlyWithI) {
  const std::string id = start_job();
  started.push_back(id);
  const fs::path input = sb.write("input.txt", "line one\nline two\n");
  auto with = sb.run_with_stdin({"exec", id, "-i", "--", "cat"}, proj, input);
  EXPECT_EQ(with.exit_code, 0) << with.err;
  EXPECT_EQ(with.out, "line one\nline two\n");
  auto without = sb.run_with_stdin({"exec", id, "--", "cat"}, proj, input);
  EXPECT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out, "");
}

TEST_F(ExecLocal, ACommandNotFoundIs127) {
  const std::string id = start_job();
  started.push_back(id);
  auto r = sb.run({"exec", id, "--", "no-such-command-here"}, proj);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("no-such-command-here: not found in the job's PATH"), std::string::npos)
      << r.err;
}

TEST_F(ExecLocal, BadRequestsAreOneLineErrors) {
  const std::string id = start_job();
  started.push_back(id);
  auto none = sb.run({"exec", id}, proj);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no command to run"), std::string::npos) << none.err;
  auto host = sb.run({"exec", id, "--host", "1", "--", "true"}, proj);
  EXPECT_EQ(host.exit_code, 2);
  EXPECT_NE(host.err.find("runs a job on one host"), std::string::npos) << host.err;
  auto unknown = sb.run({"exec", "job-00000000", "--", "true"}, proj);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(line_count(unknown.err), 1u) << unknown.err;
}

TEST_F(ExecLocal, AJobThatEndedHasNothingToExecInto) {
  sb.write("proj/quick.py", "print('done')\n");
  auto run = sb.run({"run", "quick.py"}, proj);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string id = job_id_in(run.err);
  auto r = sb.run({"exec", id, "--", "true"}, proj);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(id + " is not running (succeeded)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kinetic::test
