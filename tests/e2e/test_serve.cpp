// kinetic serve on the local backend (issue #31 point 3): examples/serve-http answering through
// the URL `serve` prints, Ctrl-C and `serve stop` leaving nothing, --detach, --from JOB, and
// bad input in one line.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "cli_harness.h"
#include "port_forward_job.h"

namespace kinetic::test {
namespace {

constexpr auto npos = std::string::npos;
const fs::path kServeExample = fs::path(KINETIC_SOURCE_DIR) / "examples" / "serve-http";

class ServeLocal : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(kServeExample, app, fs::copy_options::recursive);
    port = std::to_string(unused_loopback_port());
  }
  // The state directory's jobs: what a stopped server must not leave.
  size_t jobs_in_state() const {
    size_t n = 0;
    std::error_code ec;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(sb.state() / "jobs", ec)) ++n;
    return n;
  }
  nlohmann::json ls() {
    auto r = sb.run({"serve", "ls", "-o", "json"}, app);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["servers"];
  }

  Sandbox sb;
  fs::path app = sb.root() / "serve-http";
  std::string port;
  fs::path out = sb.root() / "serve.out", err = sb.root() / "serve.err";
};

TEST_F(ServeLocal, TheExampleAnswersThroughTheUrlAndCtrlCLeavesNothing) {
  const int pid = sb.spawn({"serve", "server.py", "--port", port, "-o", "json"}, app, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find('\n') != std::string::npos; })) << slurp(err);
  const auto ready = nlohmann::json::parse(first_line(slurp(out)));
  EXPECT_EQ(ready["kind"], "Server");
  EXPECT_EQ(ready["port"], std::stoi(port));
  const int local = ready["local_port"];
  EXPECT_EQ(ready["url"], "http://127.0.0.1:" + std::to_string(local));
  EXPECT_NE(local, std::stoi(port));  // the URL is the forward's, not the server's own port
  const auto hello = nlohmann::json::parse(body_of(http_get(local, "/")));
  EXPECT_EQ(hello["message"], "hello from kinetic serve");
  const std::string id = ready["id"];
  const auto servers = ls();
  ASSERT_EQ(servers.size(), 1u);
  EXPECT_EQ(servers[0]["id"], id);
  EXPECT_EQ(servers[0]["state"], "running");
  EXPECT_EQ(servers[0]["port"], std::stoi(port));
  // The foreground streams the server's log: the request above is in it.
  EXPECT_TRUE(eventually([&] { return slurp(out).find("\"GET / HTTP/1.0\" 200") != npos; }))
      << slurp(out);
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  EXPECT_NE(slurp(err).find(id + " stopped"), npos) << slurp(err);
  EXPECT_TRUE(ls().empty());
  EXPECT_EQ(jobs_in_state(), 0u);
  EXPECT_FALSE(fs::exists(app / "kinetic-out"));
  EXPECT_EQ(http_get(std::stoi(port), "/"), "(connect failed)");
}

TEST_F(ServeLocal, DetachReturnsOnceReadyAndStopRemovesEverything) {
  auto r = sb.run({"serve", "server.py", "-p", port, "-e", "TOKEN=s3cr3t-v4lue", "--detach"}, app);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  EXPECT_EQ(r.out, id + "\n");
  // An --env value reaches the server as run's do: never its record.
  for (const auto& e : fs::recursive_directory_iterator(sb.state() / "jobs" / id))
    if (e.is_regular_file()) {
      EXPECT_EQ(slurp(e.path()).find("s3cr3t-v4lue"), npos) << e.path();
    }
  // Ready means answering: no wait here.
  EXPECT_EQ(nlohmann::json::parse(body_of(http_get(std::stoi(port), "/")))["message"],
            "hello from kinetic serve");
  r = sb.run({"serve", "status", id, "-o", "json"}, app);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto st = nlohmann::json::parse(r.out);
  EXPECT_EQ(st["state"], "running");
  EXPECT_EQ(st["cost_per_hour"], 0.0);  // local: nothing to pay
  r = sb.run({"serve", "logs", id}, app);
  EXPECT_NE(r.out.find("serving on port " + port), npos) << r.out;
  // Among the jobs, `status` says which is a server and its port.
  r = sb.run({"status"}, app);
  EXPECT_NE(r.out.find(id + "\trunning (server :" + port + ")\t"), npos) << r.out;
  r = sb.run({"serve", "stop", id}, app);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, id + " stopped\n");
  EXPECT_EQ(jobs_in_state(), 0u);
  EXPECT_EQ(sb.run({"status", id}, app).exit_code, 1);
  EXPECT_EQ(http_get(std::stoi(port), "/"), "(connect failed)");
}

TEST_F(ServeLocal, FromJobShowsTheServerThatJobsOutputs) {
  sb.write("serve-http/train.py",
           "import os\n"
           "open(os.path.join(os.environ['KINETIC_OUTPUT_DIR'], 'weights.bin'), 'w').write('w')\n");
  auto r = sb.run({"run", "train.py"}, app);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string job = job_id_in(r.err);
  r = sb.run({"serve", "server.py", "-p", port, "--from", job, "--detach"}, app);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  const auto files = nlohmann::json::parse(body_of(http_get(std::stoi(port), "/files")));
  EXPECT_NE(std::find(files.begin(), files.end(), job + "/weights.bin"), files.end()) << files;
  EXPECT_EQ(sb.run({"serve", "stop", id}, app).exit_code, 0);
}

TEST_F(ServeLocal, IdleStopStopsAServerNobodyCalls) {
  // 5 s leaves the readiness check (a try every 2 s at most) time to see it answer first.
  auto r = sb.run({"serve", "server.py", "-p", port, "--idle-stop", "5s", "--detach"}, app);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  nlohmann::json st;
  ASSERT_TRUE(eventually([&] {
    st = nlohmann::json::parse(sb.run({"serve", "status", id, "-o", "json"}, app).out);
    return st["state"] != "running";
  }));
  EXPECT_EQ(st["state"], "cancelled");
  r = sb.run({"status", id, "-o", "json"}, app);
  EXPECT_EQ(nlohmann::json::parse(r.out)["error"],
            "stopped after 5.0s without a request (--idle-stop)");
  EXPECT_EQ(sb.run({"serve", "stop", id}, app).exit_code, 0);
  EXPECT_EQ(jobs_in_state(), 0u);
}

TEST_F(ServeLocal, AServerThatEndsBeforeAnsweringIsOneLineAndKeepsItsLog) {
  sb.write("serve-http/broken.py", "raise SystemExit('no model here')\n");
  auto r = sb.run({"serve", "broken.py", "-p", port}, app);
  EXPECT_EQ(r.exit_code, 1);
  const std::string last = r.err.substr(r.err.rfind("error:"));
  EXPECT_EQ(line_count(last), 1u) << r.err;
  EXPECT_NE(last.find("ended (failed) before it answered on port " + port), npos) << last;
  const std::string id = job_id_in(last);
  EXPECT_NE(sb.run({"serve", "logs", id}, app).err.find("no model here"), npos);
  EXPECT_EQ(sb.run({"serve", "stop", id}, app).exit_code, 0);
  EXPECT_EQ(jobs_in_state(), 0u);
}

TEST_F(ServeLocal, AServerThatEndsWhileServedEndsServeWithItsVerdict) {
  // Answers the readiness check's connection and one request, then ends.
  sb.write("serve-http/once.py",
           "import os, socket\n"
           "s = socket.create_server(('127.0.0.1', int(os.environ['KINETIC_SERVE_PORT'])))\n"
           "s.accept()[0].close()\n"
           "c = s.accept()[0]\n"
           "c.recv(1024)\n"
           "c.sendall(b'HTTP/1.0 200 OK\\r\\n\\r\\nbye\\n')\n"
           "c.close()\n");
  const int pid = sb.spawn({"serve", "once.py", "-p", port}, app, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find('\n') != std::string::npos; })) << slurp(err);
  const std::string url = first_line(slurp(out));
  ASSERT_EQ(url.rfind("Serving at http://127.0.0.1:", 0), 0u) << url;
  EXPECT_EQ(body_of(http_get(std::stoi(url.substr(url.rfind(':') + 1)), "/")), "bye\n");
  EXPECT_EQ(Sandbox::wait(pid), 1);
  const std::string last = slurp(err).substr(slurp(err).rfind("error:"));
  EXPECT_EQ(line_count(last), 1u) << last;
  const std::string id = job_id_in(last);
  EXPECT_NE(last.find(id + " ended by itself (" + id + " succeeded"), npos) << last;
  // Its record stays for `serve logs` until `serve stop`.
  EXPECT_EQ(sb.run({"serve", "status", id}, app).exit_code, 0);
  EXPECT_EQ(sb.run({"serve", "stop", id}, app).exit_code, 0);
  EXPECT_EQ(jobs_in_state(), 0u);
}

TEST_F(ServeLocal, CtrlCBeforeItAnswersStopsItWith130) {
  sb.write("serve-http/slow.py", "import time\ntime.sleep(3600)\n");
  const int pid = sb.spawn({"serve", "slow.py", "-p", port}, app, out, err);
  ASSERT_TRUE(eventually([&] { return ls().size() == 1 && ls()[0]["state"] == "running"; }));
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 130) << slurp(err);
  EXPECT_NE(slurp(err).find("stopped before it was ready"), npos) << slurp(err);
  EXPECT_EQ(slurp(out), "");
  EXPECT_TRUE(ls().empty());
  EXPECT_EQ(jobs_in_state(), 0u);
}

TEST_F(ServeLocal, ALocalPortInUseStopsTheServerItStarted) {
  const int busy = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(busy, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(busy, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(busy, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string taken = std::to_string(ntohs(a.sin_port));
  auto r = sb.run({"serve", "server.py", "-p", port, "--local-port", taken}, app);
  ::close(busy);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(taken), npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(ls().empty());
  EXPECT_EQ(jobs_in_state(), 0u);
}

TEST_F(ServeLocal, OneNotAnsweringInTimeIsLeftUpAndSaysHowToStopIt) {
  sb.write("serve-http/slow.py", "import time\ntime.sleep(3600)\n");
  auto r = sb.run({"serve", "slow.py", "-p", port, "--ready-timeout", "1s"}, app);
  EXPECT_EQ(r.exit_code, 1);
  const std::string last = r.err.substr(r.err.rfind("error:"));
  const std::string id = job_id_in(last);
  EXPECT_EQ(last, "error: " + id + " did not answer on port " + port +
                      " within 1.0s (--ready-timeout); it is still up: `kinetic serve logs " + id +
                      "`, `kinetic serve stop " + id + "`\n");
  EXPECT_EQ(ls().at(0)["state"], "running");
  EXPECT_EQ(sb.run({"serve", "stop", id}, app).exit_code, 0);
  EXPECT_EQ(jobs_in_state(), 0u);
}

TEST_F(ServeLocal, BadInputIsOneLine) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  sb.write("serve-http/job.py", "print('done')\n");
  auto r = sb.run({"run", "job.py"}, app);
  const std::string job = job_id_in(r.err);
  for (const Case& c : std::vector<Case>{
           {{"serve", "server.py"}, 2, "--port must be the port the server listens on"},
           {{"serve", "--port", "8000"}, 2, "nothing to serve"},
           {{"serve", "server.py", "-p", "70000"}, 2, "1 to 65535"},
           {{"serve", "server.py", "-p", port, "--from", "job-00000000"},
            2,
            "--from job-00000000: no such job"},
           {{"serve", "stop", job}, 2, job + " is a job, not a server"},
           {{"serve", "status", "job-00000000"}, 1, "no job 'job-00000000'"},
       }) {
    r = sb.run(c.args, app);
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(c.says), npos) << r.err;
  }
}

}  // namespace
}  // namespace kinetic::test
