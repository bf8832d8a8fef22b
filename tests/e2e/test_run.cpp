// `kinetic run` on the local backend, as a user runs it.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "integration/stopped_verdict_case.h"

namespace kinetic::test {
namespace {

class RunTest : public ::testing::Test {
 protected:
  Sandbox sb;
  fs::path proj = sb.project("proj");

  void SetUp() override { sb.write("proj/requirements.txt", "numpy\n"); }

  nlohmann::json status_json(const std::string& job) {
    return nlohmann::json::parse(slurp(proj / "kinetic-out" / job / "status.json"));
  }
  // Nothing of the job left but its record: no work dir, no temp files.
  void expect_clean_state(const std::string& job) {
    EXPECT_FALSE(fs::exists(sb.state() / "jobs" / job / "work"));
    std::error_code ec;
    EXPECT_TRUE(fs::is_empty(sb.state() / "tmp", ec) || !fs::exists(sb.state() / "tmp"));
  }
};

TEST_F(RunTest, HelloExampleSucceedsStreamsAndCollectsOutputs) {
  fs::path example = fs::path(KINETIC_SOURCE_DIR) / "examples" / "hello" / "train.py";
  auto r = sb.run({"run", example.string(), "--", "--epochs", "2"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("epoch 1/2"), std::string::npos);
  EXPECT_NE(r.out.find("epoch 2/2: loss=0.0000"), std::string::npos);
  EXPECT_EQ(r.out.find("saved model"), std::string::npos) << "stderr must not go to stdout";
  EXPECT_NE(r.err.find("saved model"), std::string::npos);
  std::string job = job_id_in(r.err);
  ASSERT_FALSE(job.empty()) << r.err;
  // The last stderr line is the one-line summary: id, state, duration, outputs.
  std::string last = r.err.substr(r.err.rfind("kinetic: "));
  EXPECT_NE(last.find(job + " succeeded in "), std::string::npos) << last;
  EXPECT_NE(last.find("kinetic-out/" + job + "/"), std::string::npos) << last;
  fs::path out = proj / "kinetic-out" / job;
  EXPECT_TRUE(fs::exists(out / "model.json"));
  auto metrics = nlohmann::json::parse(slurp(out / "metrics.json"));
  EXPECT_EQ(metrics["epochs"], 2);
  EXPECT_EQ(metrics["job"], job);
  auto st = status_json(job);
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_EQ(st["exit_code"], 0);
  expect_clean_state(job);
}

TEST_F(RunTest, JobExitCodeIsKineticsExitCode) {
  sb.write("proj/fail.py", "import sys\nprint('about to fail')\nsys.exit(3)\n");
  auto r = sb.run({"run", "fail.py"}, proj);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  std::string job = job_id_in(r.err);
  EXPECT_NE(r.err.find(job + " failed (exit 3) after "), std::string::npos) << r.err;
  auto st = status_json(job);
  EXPECT_EQ(st["state"], "failed");
  EXPECT_EQ(st["exit_code"], 3);
  EXPECT_EQ(st["error"], "job exited with code 3");  // it wrote nothing to stderr
}

// The job's own last error line is the cause kinetic quotes (issue #13), in its last line, in
// status.json and in `status -o json`: a Python exception, a shell's error, C++'s terminate.
TEST_F(RunTest, AFailureQuotesTheJobsOwnLastErrorLine) {
  sb.write("proj/model.py",
           "class Variable:\n    pass\n\ndef fit(w):\n    return w.size\n\n"
           "print('training')\nfit(Variable())\n");
  sb.write("proj/probe.sh", "echo checking\nno-such-tool --version\n");
  sb.write("proj/load.cpp",
           "#include <stdexcept>\nint main() { throw std::runtime_error(\"checkpoint is "
           "corrupt\"); }\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model.py", "AttributeError: 'Variable' object has no attribute 'size'"},
      {"probe.sh", "no-such-tool: command not found"},
      {"load.cpp", "std::runtime_error: checkpoint is corrupt"}};
  for (const auto& [file, cause] : cases) {
    auto r = sb.run({"run", file}, proj);
    EXPECT_NE(r.exit_code, 0) << file;
    const std::string job = job_id_in(r.err);
    const std::string last = r.err.substr(r.err.rfind("kinetic: "));
    EXPECT_EQ(last.rfind("kinetic: " + job + " failed (exit ", 0), 0u) << last;
    EXPECT_NE(last.find(cause + "; outputs in "), std::string::npos) << last;
    EXPECT_NE(status_json(job)["error"].get<std::string>().find(cause), std::string::npos) << file;
    auto listed = nlohmann::json::parse(sb.run({"status", job, "-o", "json"}, proj).out);
    EXPECT_NE(listed["error"].get<std::string>().find(cause), std::string::npos) << listed;
  }
}

TEST_F(RunTest, KilledBySignalIs128PlusSignal) {
  sb.write("proj/die.sh", "kill -SEGV $$\n");
  auto r = sb.run({"run", "die.sh"}, proj);
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.err;
  EXPECT_NE(r.err.find("SIGSEGV"), std::string::npos) << r.err;
}

TEST_F(RunTest, ShellJobGetsArgumentsAfterDoubleDash) {
  sb.write("proj/args.sh", "printf '<%s>' \"$@\"; echo\n");
  auto r = sb.run({"run", "args.sh", "--", "--epochs", "3", "two words", "--"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<--epochs><3><two words><-->\n");
}

// The image flags mean nothing on this machine: each says so in one line and the job still runs.
TEST_F(RunTest, ImageFlagsAreNotedAsUnusedOnTheLocalBackend) {
  sb.write("proj/t.sh", "echo ran\n");
  auto image = sb.run({"run", "t.sh", "--image", "debian:12-slim"}, proj);
  ASSERT_EQ(image.exit_code, 0) << image.err;
  EXPECT_NE(image.err.find("local backend: --image debian:12-slim is not used"), std::string::npos)
      << image.err;
  auto python = sb.run({"run", "t.sh", "--python", "3.12"}, proj);
  ASSERT_EQ(python.exit_code, 0) << python.err;
  EXPECT_NE(python.err.find("local backend: --python 3.12 is not used; the job runs with this "
                            "machine's python3"),
            std::string::npos)
      << python.err;
  EXPECT_EQ(python.out, "ran\n");
}

TEST_F(RunTest, FlagsMayFollowTheFile) {
  sb.write("proj/acc.sh", "echo \"$KINETIC_ACCELERATOR\"\n");
  auto r = sb.run({"run", "acc.sh", "--accelerator", "v5litepod-1", "-q"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v5litepod-1\n");
  EXPECT_EQ(r.err, "") << "--quiet prints nothing but errors";
}

TEST_F(RunTest, CppJobIsCompiledAndRun) {
  sb.write("proj/job.cpp",
           "#include <cstdio>\n#include <fstream>\n#include <cstdlib>\n"
           "int main(int argc, char** argv) {\n"
           "  std::printf(\"hello from c++ with %d args\\n\", argc - 1);\n"
           "  std::ofstream(std::string(std::getenv(\"KINETIC_OUTPUT_DIR\")) + \"/r.txt\") << 42;\n"
           "  return 5;\n}\n");
  auto r = sb.run({"run", "job.cpp", "--", "a", "b"}, proj);
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(r.out, "hello from c++ with 2 args\n");
  EXPECT_EQ(slurp(proj / "kinetic-out" / job_id_in(r.err) / "r.txt"), "42");
}

TEST_F(RunTest, CppCompileErrorIsTheJobsFailureWithCompilerOutput) {
  sb.write("proj/bad.cpp", "int main() { return undefined_thing; }\n");
  auto r = sb.run({"run", "bad.cpp"}, proj);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("undefined_thing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("compiling bad.cpp failed"), std::string::npos) << r.err;
}

TEST_F(RunTest, ExecutableJobRunsDirectly) {
  sb.write("proj/tool", "#!/bin/sh\necho tool ran in $(basename $(pwd))\n", 0755);
  auto r = sb.run({"run", "./tool"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "tool ran in work\n");
}

TEST_F(RunTest, WorkingDirectoryMirrorsTheContext) {
  sb.write("proj/data/in.txt", "payload\n");
  sb.write(
      "proj/src/read.py",
      "import os\nprint(open('../data/in.txt').read().strip(), os.path.basename(os.getcwd()))\n");
  // From proj/src: relative paths resolve as they do locally.
  auto r = sb.run({"run", "read.py"}, proj / "src");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "payload src\n");
}

TEST_F(RunTest, KineticIgnoreAndDefaultsLeaveFilesOut) {
  sb.write("proj/.kineticignore", "secret.txt\n*.bin\n");
  sb.write("proj/secret.txt", "x");
  sb.write("proj/big.bin", "x");
  sb.write("proj/keep.txt", "x");
  sb.write("proj/__pycache__/m.pyc", "x");
  sb.write("proj/ls.sh", "ls -A | sort | tr '\\n' ' '\n");
  auto r = sb.run({"run", "ls.sh"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("secret.txt"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("big.bin"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("__pycache__"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("keep.txt"), std::string::npos) << r.out;
}

TEST_F(RunTest, EnvironmentFlagsReachTheJobButNeverTheSpec) {
  sb.write(
      "proj/env.sh",
      "echo \"A=$A B=$B KAGGLE_USER=$KAGGLE_USER KAGGLE_KEY=$KAGGLE_KEY LEAK=${LEAK:-unset}\"\n");
  auto r =
      sb.run({"run", "env.sh", "--env", "A=1", "--env", "B", "--capture-env", "KAGGLE_*"}, proj,
             {{"B", "from-caller"},
              {"KAGGLE_USER", "me"},
              {"KAGGLE_KEY", "s3cr3t-value"},
              {"LEAK", "should-not-pass"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "A=1 B=from-caller KAGGLE_USER=me KAGGLE_KEY=s3cr3t-value LEAK=unset\n");
  std::string job = job_id_in(r.err);
  std::string spec = slurp(sb.state() / "jobs" / job / "spec.json");
  ASSERT_FALSE(spec.empty());
  EXPECT_EQ(spec.find("s3cr3t-value"), std::string::npos) << spec;
  EXPECT_EQ(spec.find("from-caller"), std::string::npos) << spec;
  EXPECT_NE(spec.find("KAGGLE_KEY"), std::string::npos) << "the spec names the variable";
}

// `ps` shows every process's arguments to every user: an --env K=V value is cleared from
// kinetic's (and its runner's, a fork) once parsed, while the job still gets it (issue #10).
TEST_F(RunTest, EnvValuesOnTheCommandLineAreClearedFromPs) {
  const std::string value = "argv-s3cr3t-v4lue";
  const fs::path go = sb.root() / "go";
  sb.write("proj/wait.py",
           "import os, time\n"
           "print('got', os.environ['API_TOKEN'] == '" +
               value +
               "', flush=True)\n"
               "for _ in range(3000):\n"
               "    if os.path.exists('" +
               go.string() +
               "'):\n"
               "        break\n"
               "    time.sleep(0.01)\n");
  const fs::path out = sb.root() / "o", err = sb.root() / "e";
  // Combined with a flag, as CLI11 reads them too (issue #28 point 7): -qe K=V, -qeK=V.
  int pid = sb.spawn({"run", "wait.py", "--env", "API_TOKEN=" + value, "-e", "OTHER=" + value,
                      "-qe", "THIRD=" + value, "-qeFOURTH=" + value},
                     proj, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find("got True") != std::string::npos; }))
      << slurp(err);
  // While the job runs: no process of this machine shows the value in its arguments.
  std::vector<std::string> showing;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = slurp(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(value) != std::string::npos) showing.push_back(name + ": " + cmdline);
  }
  const std::string own = slurp(fs::path("/proc") / std::to_string(pid) / "cmdline");
  sb.write("go", "");
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  for (const auto& s : showing) ADD_FAILURE() << "the value shows in " << s;
  EXPECT_NE(own.find("API_TOKEN=*****"), std::string::npos) << "the name stays, the value goes";
}

TEST_F(RunTest, EnvFlagNamingAnUnsetVariableIsAUsageError) {
  sb.write("proj/env.sh", "true\n");
  auto r = sb.run({"run", "env.sh", "--env", "NOT_SET_ANYWHERE"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("NOT_SET_ANYWHERE is not set"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(sb.state() / "jobs"));
}

// Flex-start is GKE's capacity (docs/capacity.md): a local context has none to wait for, so
// --flex-start is one line saying so, before anything runs.
TEST_F(RunTest, FlexStartOnThisMachineIsAUsageError) {
  sb.write("proj/ok.sh", "true\n");
  auto r = sb.run({"run", "ok.sh", "-a", "l4", "--flex-start"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--flex-start asks GKE's Dynamic Workload Scheduler"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(sb.state() / "jobs"));
}

TEST_F(RunTest, TimeoutExits124AndKillsTheWholeProcessGroup) {
  sb.write("proj/hang.sh",
           "sleep 1000 & echo $! > \"$KINETIC_OUTPUT_DIR/child.pid\"\necho started\nwait\n");
  // Long enough for a loaded CI machine to start the job and write the pid first.
  auto r = sb.run({"run", "hang.sh", "--timeout", "3s"}, proj);
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  std::string job = job_id_in(r.err);
  int child = std::stoi(slurp(proj / "kinetic-out" / job / "child.pid"));
  EXPECT_TRUE(eventually([&] { return !process_alive(child); }, 10))
      << "the job's background process survived the timeout";
  // The golden's verdict, as the bootstrap records it in a pod.
  EXPECT_EQ(verdict_in(status_json(job)), golden_stopped_verdict("deadline"));
}

TEST_F(RunTest, InterruptCancelsTheJobAndExits130) {
  sb.write("proj/wait.sh",
           "sleep 1000 & echo $! > \"$KINETIC_OUTPUT_DIR/../child.pid\"\necho ready\nwait\n");
  fs::path out = sb.root() / "run.out", err = sb.root() / "run.err";
  int pid = sb.spawn({"run", "wait.sh"}, proj, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find("ready") != std::string::npos; }))
      << slurp(err);
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 130) << slurp(err);
  std::string job = job_id_in(slurp(err));
  ASSERT_FALSE(job.empty());
  int child = std::stoi(slurp(sb.state() / "jobs" / job / "child.pid"));
  EXPECT_TRUE(eventually([&] { return !process_alive(child); }, 10));
  EXPECT_NE(slurp(err).find("cancelled"), std::string::npos) << slurp(err);
  // kinetic passes Ctrl-C on to the runner as a cancel (SIGTERM): the golden's verdict, as the
  // bootstrap records it in a pod, and the stopped attempt's entry says the same.
  const auto st = status_json(job);
  EXPECT_EQ(verdict_in(st), golden_stopped_verdict("SIGTERM")) << st;
  EXPECT_EQ(verdict_in(st["attempt_history"].back()), golden_stopped_verdict("SIGTERM")) << st;
}

TEST_F(RunTest, RetriesRunTheJobAgainWithTheCheckpointDirKept) {
  // Fails on the first attempt, succeeds on the second, using the checkpoint dir as memory.
  sb.write("proj/flaky.sh",
           "f=\"$KINETIC_CHECKPOINT_DIR/attempt\"\n"
           "if [ -f \"$f\" ]; then echo second; exit 0; fi\n"
           "touch \"$f\"; echo first; exit 1\n");
  auto r = sb.run({"run", "flaky.sh", "--retries", "1"}, proj);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "first\nsecond\n");
  // The same attempt line and history as on gke (docs/run-record.md).
  EXPECT_NE(
      r.err.find("kinetic: attempt 2/2: previous attempt exited 1; resuming from the checkpoint\n"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("after 2 attempts"), std::string::npos) << r.err;
  auto st = status_json(job_id_in(r.err));
  EXPECT_EQ(st["attempts"], 2);
  ASSERT_EQ(st["attempt_history"].size(), 2u) << st.dump();
  EXPECT_EQ(st["attempt_history"][0]["exit_code"], 1) << st.dump();
  EXPECT_EQ(st["attempt_history"][1]["state"], "succeeded") << st.dump();
}

TEST_F(RunTest, ConcurrentRunsNeverCollide) {
  sb.write("proj/id.sh", "echo $KINETIC_JOB_ID > \"$KINETIC_OUTPUT_DIR/id\"\n");
  std::vector<int> pids;
  for (int i = 0; i < 4; ++i)
    pids.push_back(sb.spawn({"run", "id.sh"}, proj, sb.root() / ("o" + std::to_string(i)),
                            sb.root() / ("e" + std::to_string(i))));
  std::set<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Sandbox::wait(pids[i]), 0);
    std::string job = job_id_in(slurp(sb.root() / ("e" + std::to_string(i))));
    ids.insert(job);
    EXPECT_EQ(slurp(proj / "kinetic-out" / job / "id"), job + "\n");
  }
  EXPECT_EQ(ids.size(), 4u);
}

TEST_F(RunTest, OutputFlagChoosesWhereOutputsGo) {
  sb.write("proj/w.sh", "echo hi > \"$KINETIC_OUTPUT_DIR/hi.txt\"\n");
  auto r = sb.run({"run", "w.sh", "--output", "results"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(proj / "results" / "hi.txt"), "hi\n");
  EXPECT_TRUE(fs::exists(proj / "results" / "status.json"));
}

TEST_F(RunTest, KeepLeavesTheWorkDirectory) {
  sb.write("proj/k.sh", "echo kept > k.txt\n");
  auto r = sb.run({"run", "k.sh", "--keep"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(sb.state() / "jobs" / job_id_in(r.err) / "work" / "k.txt"), "kept\n");
}

TEST_F(RunTest, UnchangedContextIsStagedOnce) {
  sb.write("proj/n.sh", "true\n");
  ASSERT_EQ(sb.run({"run", "n.sh"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"run", "n.sh"}, proj).exit_code, 0);
  size_t blobs = 0;
  for (const auto& e : fs::directory_iterator(sb.state() / "store" / "contexts")) {
    (void)e;
    ++blobs;
  }
  EXPECT_EQ(blobs, 1u);
}

}  // namespace
}  // namespace kinetic::test

namespace kinetic::test {
namespace {

TEST(OwnFilesTest, StateAndOutputsInsideTheContextAreNeverShipped) {
  Sandbox sb;
  // KINETIC_HOME inside the project, and --output inside it too: neither may be packaged, or
  // every run would ship the previous ones.
  sb.write("proj/.git/HEAD", "ref: refs/heads/main\n");
  sb.write("proj/ls.sh", "find . -path ./.git -prune -o -print | sort | tr '\\n' ' '\n");
  std::map<std::string, std::string> env = {
      {"KINETIC_HOME", (sb.root() / "proj" / "state").string()}};
  auto first = sb.run({"run", "ls.sh", "--output", "results"}, sb.root() / "proj", env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto second = sb.run({"run", "ls.sh", "--output", "results"}, sb.root() / "proj", env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out.find("state"), std::string::npos) << second.out;
  EXPECT_EQ(second.out.find("results"), std::string::npos) << second.out;
  EXPECT_EQ(second.out, first.out);
}

}  // namespace
}  // namespace kinetic::test
