// kinetic port-forward JOB on a gke context (issue #31 point 1): each local connection a
// pods/portforward WebSocket through the fake cloud's API server, whose kubelet connects to the
// job's port (the fake's pods share this machine's network). Many connections at once, the end
// of the job ending the forward, Ctrl-C exit 0, and each bad input one line.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <thread>

#include "gke_fixture.h"
#include "port_forward_job.h"

namespace kinetic::test {
namespace {

class GkePortForward : public GkeFixture {
 protected:
  // A detached job serving HTTP; its id, once its log says on which port (PORT).
  std::string start_server(std::string& port) {
    sb.write("proj/serve.py", http_job_script(go.string()));
    auto r = kin({"run", "serve.py", "--detach"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string id = first_line(r.out);
    started.push_back(id);
    EXPECT_TRUE(eventually([&] {
      return !served_port(kin({"logs", id}).out).empty();
    })) << kin({"logs", id}).out;
    port = served_port(kin({"logs", id}).out);
    return id;
  }
  // `kinetic port-forward ID :PORT -o json` in the background; its local port once it listens.
  int forward(const std::string& id, const std::string& port, int& pid) {
    pid = spawn_until_output({"port-forward", id, ":" + port, "-o", "json"}, "\"ports\"");
    return forwarded_port(first_line(slurp(out)));
  }
  void TearDown() override {
    sb.write("go", "");
    for (const auto& id : started) kin({"logs", "-f", id});
  }

  fs::path go = sb.root() / "go";
  std::vector<std::string> started;
};

TEST_F(GkePortForward, ServesTheJobsPortToManyConnectionsAtOnceUntilCtrlC) {
  std::string port;
  const std::string id = start_server(port);
  int pid = -1;
  const int local = forward(id, port, pid);
  ASSERT_GT(local, 0) << slurp(out) << slurp(err);
  EXPECT_EQ(http_get(local, "/one").substr(0, 12), "HTTP/1.0 200");
  // Eight connections open together before any sends: each its own WebSocket, served at once.
  const std::vector<std::string> bodies = bodies_at_once(local, 8);
  for (size_t i = 0; i < bodies.size(); ++i)
    EXPECT_EQ(bodies[i], "hello from the job /c" + std::to_string(i) + "\n");
  EXPECT_GE(cloud_->kube().request_counts()["GET /api/v1/namespaces/{ns}/pods/{name}/portforward"],
            9);
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
}

TEST_F(GkePortForward, TheForwardEndsWithTheJob) {
  std::string port;
  const std::string id = start_server(port);
  int pid = -1;
  ASSERT_GT(forward(id, port, pid), 0) << slurp(err);
  sb.write("go", "");
  EXPECT_EQ(Sandbox::wait(pid), 1);
  EXPECT_NE(slurp(err).find("error: " + id + " ended: its pod "), std::string::npos) << slurp(err);
}

TEST_F(GkePortForward, APortNothingListensOnIsOneLinePerConnection) {
  std::string port;
  const std::string id = start_server(port);
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  const int unused = [&] {  // a port the job does not listen on: bound here, never listened
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    return static_cast<int>(ntohs(a.sin_port));
  }();
  int pid = -1;
  const int local = forward(id, std::to_string(unused), pid);
  ASSERT_GT(local, 0);
  EXPECT_EQ(http_get(local, "/"), "");  // the connection is closed without an answer
  EXPECT_TRUE(eventually([&] {
    return slurp(err).find("connection refused") != std::string::npos;
  })) << slurp(err);
  EXPECT_NE(slurp(err).find("warning: an error occurred forwarding " + std::to_string(local) +
                            " -> " + std::to_string(unused) + ": error forwarding port " +
                            std::to_string(unused) + " to pod "),
            std::string::npos)
      << slurp(err);
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 0);
  ::close(listener);
}

TEST_F(GkePortForward, BadInputIsOneLine) {
  auto r = kin({"port-forward", "job-00000000", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: port '0': ports are 1 to 65535, as REMOTE, LOCAL:REMOTE or :REMOTE (any free "
            "local port), e.g. 8080 or 9000:8080\n");
  r = kin({"port-forward", "job-00000000", "8080:70000"});
  EXPECT_EQ(r.exit_code, 2);
  r = kin({"port-forward", "job-00000000", "8080"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("job-00000000"), std::string::npos) << r.err;

  std::string port;
  const std::string id = start_server(port);
  r = kin({"port-forward", id, "--host", "1", port});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: --host 1: " + id + " runs on 1 host, host 0\n");
  // A local port in use.
  int pid = -1;
  const int local = forward(id, port, pid);
  r = kin({"port-forward", id, std::to_string(local) + ":" + port});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("error: cannot listen on 127.0.0.1:" + std::to_string(local) +
                       ": Address already in use; pick another local port"),
            std::string::npos)
      << r.err;
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 0);
  // A job that ended.
  sb.write("go", "");
  kin({"logs", "-f", id});
  r = kin({"port-forward", id, port});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: " + id +
                       " has ended (succeeded): there is nothing to forward ports to; see "
                       "`kinetic logs " +
                       id + "`\n");
}

// A TPU slice's hosts each serve their own port (on the fake, all on this machine, each its own):
// --host N forwards to host N's pod.
class GkePortForwardSlice : public GkePortForward {
 protected:
  void SetUp() override {
    GkePortForward::SetUp();
    auto r = kin(
        {"up", "--project", "acme-ml", "--zone", "us-central1-a", "--accelerator", "v5litepod-16"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST_F(GkePortForwardSlice, HostPicksThatHostsPod) {
  sb.write("proj/hosts.py",
           "import http.server, os, threading, time\n"
           "host = os.environ.get('JOB_COMPLETION_INDEX', '?')\n"
           "class Hello(http.server.BaseHTTPRequestHandler):\n"
           "    def do_GET(self):\n"
           "        body = ('host ' + host + '\\n').encode()\n"
           "        self.send_response(200)\n"
           "        self.send_header('Content-Length', str(len(body)))\n"
           "        self.end_headers()\n"
           "        self.wfile.write(body)\n"
           "server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Hello)\n"
           "print('host', host, 'serving on', server.server_address[1], flush=True)\n"
           "threading.Thread(target=server.serve_forever, daemon=True).start()\n"
           "while not os.path.exists('" +
               go.string() + "'):\n    time.sleep(0.01)\n");
  auto r = kin({"run", "hosts.py", "--detach", "-a", "v5litepod-16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  started.push_back(id);
  // Host 1's port, from its own line of the slice's log.
  std::string port;
  EXPECT_TRUE(eventually([&] {
    const std::string log = kin({"logs", id, "--all-hosts"}).out;
    const size_t at = log.find("host 1 serving on ");
    if (at == std::string::npos) return false;
    port = log.substr(at + 18, log.find('\n', at) - at - 18);
    return true;
  })) << kin({"logs", id, "--all-hosts"}).out;
  const int pid = spawn_until_output(
      {"port-forward", id, "--host", "1", ":" + port, "-o", "json", "-v", "6"}, "\"ports\"");
  const int local = forwarded_port(first_line(slurp(out)));
  ASSERT_GT(local, 0) << slurp(err);
  EXPECT_EQ(body_of(http_get(local, "/")), "host 1\n");
  // Every pod of the fake reaches every port of this machine: the pod the WebSocket named (its
  // -v 6 trace) is what says which host was chosen.
  const std::string trace = slurp(err);
  const size_t at = trace.find("/portforward?");
  ASSERT_NE(at, std::string::npos) << trace;
  const size_t pod_at = trace.rfind("/pods/", at) + 6;
  const std::string pod = trace.substr(pod_at, at - pod_at);
  const auto object = cloud_->kube().object("/api/v1/namespaces/default/pods/" + pod);
  ASSERT_TRUE(object.has_value()) << pod;
  EXPECT_EQ((*object)["metadata"]["labels"].value("batch.kubernetes.io/job-completion-index", ""),
            "1");
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  auto out_of_range = kin({"port-forward", id, "--host", "4", port});
  EXPECT_EQ(out_of_range.exit_code, 2);
  EXPECT_EQ(out_of_range.err, "error: --host 4: " + id + " runs on 4 hosts, 0 to 3\n");
}

}  // namespace
}  // namespace kinetic::test
