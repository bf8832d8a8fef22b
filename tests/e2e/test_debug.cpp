// `run --debug` and `kinetic debug JOB` on the local backend (issue #31 point 2): the job's
// Python waits under (a stand-in for) debugpy until a debugger attached through kinetic's
// forward; the launch configuration kinetic prints maps where the job sees its files.
#include <signal.h>

#include <gtest/gtest.h>

#include "cli_harness.h"
#include "debug_job.h"

namespace kinetic::test {
namespace {

class DebugLocal : public ::testing::Test {
 protected:
  void SetUp() override {
    sb.write("proj/debugpy/__init__.py", debugpy_standin());
    sb.write("proj/train.py", debug_job_script());
  }

  Sandbox sb;
  fs::path proj = sb.project("proj");
  fs::path out = sb.root() / "run.out", err = sb.root() / "run.err";
  int port = unused_loopback_port();
  const std::string nonce = "nonce-" + std::to_string(::getpid());
};

TEST_F(DebugLocal, TheJobRunsOnlyOnceADebuggerAttachedThroughTheForward) {
  const int pid = sb.spawn({"run", "train.py", "--debug", "--debug-port", std::to_string(port)},
                           proj, out, err);
  const nlohmann::json launch = launch_when_listening(err, port);
  ASSERT_TRUE(launch.is_object()) << slurp(err);
  const std::string id = launch["name"].get<std::string>().substr(9);
  EXPECT_EQ(launch["type"], "debugpy");
  EXPECT_EQ(launch["request"], "attach");
  EXPECT_EQ(launch["connect"]["host"], "127.0.0.1");
  EXPECT_EQ(launch["pathMappings"][0]["localRoot"], proj.string());
  EXPECT_EQ(launch["pathMappings"][0]["remoteRoot"], "/tmp/kinetic-debug/" + id);
  const int local = launch["connect"]["port"].get<int>();
  EXPECT_NE(local, port);  // the client reaches the job through kinetic's forward
  // Waiting: the job's code has not run.
  EXPECT_EQ(slurp(out).find("job body ran"), std::string::npos);
  EXPECT_EQ(dap_attach(local, nonce), "");
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  // It ran after the attach (it prints what only the attach carried), from the remote root.
  EXPECT_NE(slurp(out).find("job body ran, attached with " + nonce + " from /tmp/kinetic-debug/" +
                            id + "/train.py"),
            std::string::npos)
      << slurp(out) << slurp(err);
  EXPECT_NE(slurp(err).find("debugger attached; the job runs"), std::string::npos);
}

// --quiet leaves out kinetic's progress lines, not the launch configuration --debug asked for.
TEST_F(DebugLocal, QuietStillPrintsTheLaunchConfiguration) {
  const int pid =
      sb.spawn({"--quiet", "run", "train.py", "--debug", "--debug-port", std::to_string(port)},
               proj, out, err);
  const nlohmann::json launch = launch_when_listening(err, port);
  ASSERT_TRUE(launch.is_object()) << slurp(err);
  EXPECT_EQ(dap_attach(launch["connect"]["port"].get<int>(), nonce), "");
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  EXPECT_NE(slurp(out).find("job body ran, attached with " + nonce), std::string::npos)
      << slurp(out) << slurp(err);
}

TEST_F(DebugLocal, ADetachedDebugJobIsAttachedLaterWithKineticDebug) {
  auto r = sb.run({"run", "train.py", "--debug", "--detach", "--debug-port", std::to_string(port)},
                  proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  EXPECT_NE(r.err.find("`kinetic debug " + id + "`"), std::string::npos) << r.err;
  ASSERT_TRUE(eventually([&] {
    return sb.run({"logs", id}, proj).out.find("debugpy listens") != std::string::npos ||
           sb.run({"logs", id}, proj).err.find("debugpy listens") != std::string::npos;
  }));
  const int pid = sb.spawn({"debug", id, "-o", "json"}, proj, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find('\n') != std::string::npos; })) << slurp(err);
  const auto doc = nlohmann::json::parse(first_line(slurp(out)));
  EXPECT_EQ(doc["job"], id);
  EXPECT_EQ(doc["remote_port"], port);
  EXPECT_EQ(doc["launch"]["type"], "debugpy");
  EXPECT_EQ(doc["launch"]["connect"]["port"], doc["port"]);
  EXPECT_EQ(doc["launch"]["pathMappings"][0]["localRoot"], proj.string());
  EXPECT_EQ(dap_attach(doc["port"].get<int>(), nonce), "");
  r = sb.run({"logs", "-f", id}, proj);
  EXPECT_NE(r.out.find("attached with " + nonce), std::string::npos) << r.out << r.err;
  // The forward ends with the job, as port-forward's.
  EXPECT_EQ(Sandbox::wait(pid), 1);
}

TEST_F(DebugLocal, RefusalsAreOneLine) {
  sb.write("proj/job.sh", "echo hi\n");
  auto r = sb.run({"run", "job.sh", "--debug"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: --debug runs a Python job under debugpy, and job.sh is a shell job; debug its "
            "Python, or run it without --debug (`kinetic exec JOB -it -- bash` gives a shell in "
            "a running job)\n");
  r = sb.run({"run", "train.py", "--debug", "--debug-port", "70000"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  r = sb.run({"debug", "job-00000000"}, proj);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  // A job run without --debug has no debugger to reach.
  sb.write("proj/plain.py", "print('plain')\n");
  r = sb.run({"run", "plain.py"}, proj);
  const std::string plain = job_id_in(r.err);
  ASSERT_FALSE(plain.empty()) << r.err;
  r = sb.run({"debug", plain}, proj);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: " + plain +
                       " was not started with --debug: no debugger waits in it; run it again with "
                       "`kinetic run --debug FILE` (or `kinetic port-forward " +
                       plain + " PORT` for a port of its own)\n");
}

TEST_F(DebugLocal, AJobWithoutDebugpyFailsToStartInOneLine) {
  const fs::path bare = sb.project("bare");
  sb.write("bare/train.py", "print('never')\n");
  auto r = sb.run({"run", "train.py", "--debug", "--debug-port", std::to_string(port)}, bare);
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_NE(r.err.find("error: kinetic --debug: debugpy cannot be imported in the job"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("never"), std::string::npos);
}

}  // namespace
}  // namespace kinetic::test
