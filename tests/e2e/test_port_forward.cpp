// kinetic port-forward JOB on the local backend (issue #31 point 1): the job is a process of this
// machine, so each connection is a TCP connection to 127.0.0.1:REMOTE, with the same command
// line, output and errors as on gke (test_gke_port_forward.cpp).
#include <signal.h>

#include <gtest/gtest.h>

#include <thread>

#include "cli_harness.h"
#include "port_forward_job.h"

namespace kinetic::test {
namespace {

class PortForwardLocal : public ::testing::Test {
 protected:
  std::string start_server(std::string& port) {
    sb.write("proj/serve.py", http_job_script(go.string()));
    auto r = sb.run({"run", "serve.py", "--detach"}, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string id = first_line(r.out);
    started.push_back(id);
    EXPECT_TRUE(eventually([&] { return !served_port(sb.run({"logs", id}, proj).out).empty(); }));
    port = served_port(sb.run({"logs", id}, proj).out);
    return id;
  }
  int forward(const std::vector<std::string>& args, int& pid) {
    pid = sb.spawn(args, proj, out, err);
    if (!eventually([&] { return slurp(out).find('\n') != std::string::npos; })) return 0;
    return forwarded_port(first_line(slurp(out)));
  }
  void TearDown() override {
    sb.write("go", "");
    for (const auto& id : started) sb.run({"logs", "-f", id}, proj);
  }

  Sandbox sb;
  fs::path proj = sb.project("proj");
  fs::path go = sb.root() / "go";
  fs::path out = sb.root() / "pf.out", err = sb.root() / "pf.err";
  std::vector<std::string> started;
};

TEST_F(PortForwardLocal, ServesTheJobsPortToManyConnectionsThenEndsWithTheJob) {
  std::string port;
  const std::string id = start_server(port);
  int pid = -1;
  const int local = forward({"port-forward", id, ":" + port, "-o", "json"}, pid);
  ASSERT_GT(local, 0) << slurp(out) << slurp(err);
  EXPECT_NE(local, std::stoi(port));
  const std::vector<std::string> bodies = bodies_at_once(local, 8);
  for (size_t i = 0; i < bodies.size(); ++i)
    EXPECT_EQ(bodies[i], "hello from the job /c" + std::to_string(i) + "\n");
  sb.write("go", "");
  EXPECT_EQ(Sandbox::wait(pid), 1);
  EXPECT_EQ(slurp(err).substr(slurp(err).find("error:")),
            "error: " + id + " ended (succeeded): nothing left to forward to\n");
}

TEST_F(PortForwardLocal, PrintsKubectlsLinesAndEndsAtCtrlCWithZero) {
  std::string port;
  const std::string id = start_server(port);
  int pid = -1;
  pid = sb.spawn({"port-forward", id, "0:" + port}, proj, out, err);
  // 0:REMOTE is a usage error, as kubectl's ports start at 1.
  EXPECT_EQ(Sandbox::wait(pid), 2);
  pid = sb.spawn({"port-forward", id, ":" + port}, proj, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find('\n') != std::string::npos; }));
  const std::string line = first_line(slurp(out));
  ASSERT_EQ(line.rfind("Forwarding from 127.0.0.1:", 0), 0u) << line;
  EXPECT_EQ(line.substr(line.find(" -> ")), " -> " + port);
  const int local = std::stoi(line.substr(26, line.find(' ', 26) - 26));
  EXPECT_EQ(body_of(http_get(local, "/x")), "hello from the job /x\n");
  EXPECT_NE(slurp(err).find("the job's process on this machine"), std::string::npos);
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
}

TEST_F(PortForwardLocal, BadInputIsOneLine) {
  auto r = sb.run({"port-forward", "job-00000000", "70000"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  r = sb.run({"port-forward", "job-00000000", "8080"}, proj);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  std::string port;
  const std::string id = start_server(port);
  r = sb.run({"port-forward", id, "--host", "2", port}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: --host 2: the local backend runs a job on one host, host 0\n");
  r = sb.run({"port-forward", id, "--address", "nowhere", port}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--address 'nowhere'"), std::string::npos) << r.err;
  sb.write("go", "");
  sb.run({"logs", "-f", id}, proj);
  r = sb.run({"port-forward", id, port}, proj);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: " + id +
                       " is not running (succeeded): port-forward needs a running job; see "
                       "`kinetic logs " +
                       id + "`\n");
}

}  // namespace
}  // namespace kinetic::test
