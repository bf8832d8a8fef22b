// What the Python API asks of the CLI (docs/python.md), as a script would use it on the local
// backend: run --function, --label and status -l, collect, logs --tail, cleanup JOB.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "integration/call_file.h"
#include "integration/command_output.h"

namespace kinetic::test {
namespace {

class FunctionJobsTest : public ::testing::Test {
 protected:
  Sandbox sb;
  fs::path proj = sb.project("proj");

  void SetUp() override { sb.write("proj/pyproject.toml", "[project]\nname = 'p'\n"); }

  // A call file as the Python package writes one (integration/call_file.h).
  fs::path call(const std::string& name, const std::string& expression) {
    const fs::path file = sb.root() / (name + ".pkl");
    atomic_write(file, call_file_bytes(sb.root(), name, expression));
    EXPECT_GT(fs::file_size(file), 0u) << "could not make a call file of " << expression;
    return file;
  }
  // A detached job that has started (its work directory holds `started`) and runs until the
  // test writes `go` there; its id.
  std::string held_job() {
    sb.write("proj/hold.py",
             "import os, time\n"
             "open('started', 'w').close()\n"
             "while not os.path.exists('go'):\n"
             "    time.sleep(0.01)\n"
             "print('done')\n");
    auto sub = sb.run({"run", "hold.py", "--detach"}, proj);
    EXPECT_EQ(sub.exit_code, 0) << sub.err;
    const std::string job = first_line(sub.out);
    EXPECT_TRUE(eventually([&] { return fs::exists(work_of(job) / "started"); }));
    return job;
  }
  fs::path work_of(const std::string& job) { return sb.state() / "jobs" / job / "work"; }
  // The runner's result, decoded by python3: "ok value" or "failed ExceptionType".
  std::string result_in(const fs::path& out_dir) {
    return command_output(
               "python3 -c 'import pickle, sys; r = pickle.load(open(sys.argv[1], \"rb\")); "
               "print(r[\"ok\"], r[\"value\"] if r[\"ok\"] else r[\"exception_type\"])' " +
               (out_dir / ".kinetic" / "result.pkl").string())
        .out;
  }
};

TEST_F(FunctionJobsTest, ACallRunsInTheProjectAndItsResultIsInTheOutputs) {
  const fs::path c = call("operator.mul", "(operator.mul, (6, 7), {})");
  auto r = sb.run({"run", "--function", c.string(), "--output", "out"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(result_in(proj / "out"), "True 42\n");
  auto st = nlohmann::json::parse(slurp(proj / "out" / "status.json"));
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_EQ(st["file"], "operator.mul");
  // The call and its runner are part of the job's record, readable by its owner alone.
  const fs::path job = sb.state() / "jobs" / st["id"].get<std::string>();
  EXPECT_EQ(fs::status(job / "function.pkl").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_TRUE(fs::exists(job / "function_runner.py"));
}

TEST_F(FunctionJobsTest, ARaisingCallFailsWithPythonsLastLineAndStillReportsWhy) {
  const fs::path c = call("operator.truediv", "(operator.truediv, (1, 0), {})");
  auto r = sb.run({"run", "--function", c.string(), "--output", "out"}, proj);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("ZeroDivisionError: division by zero"), std::string::npos) << r.err;
  EXPECT_EQ(result_in(proj / "out"), "False ZeroDivisionError\n");
}

TEST_F(FunctionJobsTest, MistakesAreOneLineUsageErrorsAndLeaveNothing) {
  const fs::path c = call("operator.mul", "(operator.mul, (6, 7), {})");
  sb.write("proj/t.py", "print(1)\n");
  const fs::path garbage = sb.write("garbage.pkl", "\x80\x05not a call\n");
  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"run", "--function", garbage.string()}, "not a kinetic call file"},
           {{"run", "--function", (sb.root() / "none.pkl").string()}, "no such file"},
           {{"run", "t.py", "--function", c.string()}, "not both"},
           {{"run", "--function", c.string(), "--", "x"}, "takes no arguments after --"},
           {{"run", "--function", c.string(), "--label", "no-equals"}, "KEY=VALUE"},
           {{"run", "--function", c.string(), "--with", "-e ."}, "is not a requirement"},
           {{"run", "--function", c.string(), "--image", "debian:12", "--with", "tqdm"},
            "--with adds to kinetic's own image"}}) {
    auto r = sb.run(args, proj);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(sb.state() / "jobs"));
  EXPECT_FALSE(fs::exists(proj / "kinetic-out"));
}

// A detached call collected from elsewhere: collect waits for it, brings its outputs where it is
// asked and exits with the job's code; labels select it; cleanup JOB removes its record.
TEST_F(FunctionJobsTest, DetachedLabelledCollectedAndCleanedUp) {
  const fs::path c = call("operator.mul", "(operator.mul, (6, 7), {})");
  auto sub = sb.run({"run", "--function", c.string(), "--detach", "-o", "json", "--label",
                     "kinetic.dev/group=grp-0000abcd", "--label", "kinetic.dev/group-index=3"},
                    proj);
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  const std::string job = nlohmann::json::parse(sub.out)["id"];
  auto got = sb.run({"collect", job, "--output", "elsewhere"}, proj);
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_NE(got.err.find(job + " succeeded"), std::string::npos) << got.err;
  EXPECT_EQ(result_in(proj / "elsewhere"), "True 42\n");
  EXPECT_EQ(sb.run({"collect", job, "--output", "again"}, proj).exit_code, 0);
  EXPECT_EQ(result_in(proj / "again"), "True 42\n");

  const fs::path other = call("operator.add", "(operator.add, (1, 2), {})");
  ASSERT_EQ(sb.run({"run", "--function", other.string()}, proj).exit_code, 0);
  auto selected = sb.run({"status", "-l", "kinetic.dev/group=grp-0000abcd", "-o", "json"}, proj);
  ASSERT_EQ(selected.exit_code, 0) << selected.err;
  auto jobs = nlohmann::json::parse(selected.out)["jobs"];
  ASSERT_EQ(jobs.size(), 1u) << selected.out;
  EXPECT_EQ(jobs[0]["id"], job);
  EXPECT_EQ(jobs[0]["labels"]["kinetic.dev/group-index"], "3");
  EXPECT_EQ(nlohmann::json::parse(sb.run({"status", "-o", "json"}, proj).out)["jobs"].size(), 2u);

  auto cleaned = sb.run({"cleanup", job}, proj);
  ASSERT_EQ(cleaned.exit_code, 0) << cleaned.err;
  EXPECT_FALSE(fs::exists(sb.state() / "jobs" / job));
  EXPECT_EQ(sb.run({"collect", job}, proj).exit_code, 1);
  EXPECT_TRUE(fs::exists(proj / "elsewhere" / "status.json")) << "delivered outputs stay";
}

TEST_F(FunctionJobsTest, CollectWaitsForARunningJobAndNoWaitRefuses) {
  const std::string job = held_job();
  const fs::path work = work_of(job);
  auto refused = sb.run({"collect", job, "--no-wait"}, proj);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("is running"), std::string::npos) << refused.err;
  const int waiting =
      sb.spawn({"collect", job}, proj, sb.root() / "collect.out", sb.root() / "collect.err");
  std::ofstream(work / "go").put('\n');
  EXPECT_EQ(Sandbox::wait(waiting), 0) << slurp(sb.root() / "collect.err");
  EXPECT_TRUE(fs::exists(proj / "kinetic-out" / job / "status.json"));
  EXPECT_EQ(sb.run({"logs", job, "--tail", "1"}, proj).out, "done\n");
}

TEST_F(FunctionJobsTest, CleanupRefusesARunningJob) {
  const std::string job = held_job();
  auto r = sb.run({"cleanup", job}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("kinetic cancel " + job), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(sb.state() / "jobs" / job));
  EXPECT_EQ(sb.run({"cancel", job}, proj).exit_code, 0);
  EXPECT_EQ(sb.run({"cleanup", job}, proj).exit_code, 0);
}

}  // namespace
}  // namespace kinetic::test
