// pods/exec on the fake Kubernetes API (fake_kube_exec.cpp) through kinetic's own client
// (k8s/exec.h): the command in the container's environment and directory, its exit code,
// stdin and its end, a pty, the API server's refusals (404, 400s, RBAC's 403, a container that is
// not running), and the subprotocol negotiation seen from a raw handshake.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "fake_kube_fixture.h"
#include "http/upgrade.h"
#include "k8s/exec.h"
#include "k8s/websocket.h"

namespace kinetic::test {
namespace {

using nlohmann::json;

const std::string kExecPods = "/api/v1/namespaces/default/pods";
constexpr int kExecWait = 20000;

// The sleeper pod's command: it runs until `finish` names a process, then until that process is
// gone (see finish()).
constexpr const char* kEndsAfterTheFinishingExec =
    "while [ ! -e finish ]; do sleep 0.02; done; "
    "while [ -e /proc/$(cat finish) ]; do sleep 0.02; done";

class StaticToken : public auth::TokenProvider {
 public:
  explicit StaticToken(std::string token) : token_(std::move(token)) {}
  std::string token() override { return token_; }
  void invalidate() override {}

 private:
  std::string token_;
};

// A file the command's output goes to, read back once it is done.
struct Capture {
  std::string path;
  int fd;
  explicit Capture(const std::string& p) : path(p) {
    fd = ::open(p.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  }
  ~Capture() { ::close(fd); }
  std::string text() const {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

class FakeKubeExecTest : public FakeKubeFixture {
 protected:
  FakeKubeExecTest() : FakeKubeFixture("fake-kube-exec-") {}

  // A bare pod that waits for the file `finish` in its directory.
  void start_pod(const std::string& name = "sleeper") {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"containers",
                   {{{"name", "main"},
                     {"image", "app:1"},
                     {"env", {{{"name", "GREETING"}, {"value", "hello-from-the-pod"}}}},
                     {"command", {"sh", "-c", kEndsAfterTheFinishingExec}}}}}}}};
    ASSERT_EQ(call("POST", kExecPods, pod).status, 201);
    ASSERT_TRUE(kube_->wait_for_object(
        kExecPods + "/" + name,
        [](const json& p) { return p["status"].value("phase", "") == "Running"; }, kExecWait));
  }
  int exec(const std::vector<std::string>& command, std::string* out = nullptr,
           std::string* err = nullptr, int in = -1, const std::string& pod = "sleeper",
           const std::string& container = "main", const std::string& token = "test-token") {
    Capture o(dir_ + "/out"), e(dir_ + "/err");
    k8s::ExecParams p;
    p.ns = "default";
    p.pod = pod;
    p.container = container;
    p.command = command;
    p.stdin_open = in >= 0;
    k8s::ExecIo io;
    io.in = in;
    io.out = o.fd;
    io.err = e.fd;
    StaticToken credentials(token);
    int code = k8s::exec_in_pod(kube_->url(), kube_->ca_pem(), credentials, p, io);
    if (out) *out = o.text();
    if (err) *err = e.text();
    return code;
  }
  std::string refusal(const std::string& pod, const std::string& container = "main",
                      const std::string& token = "test-token") {
    try {
      exec({"true"}, nullptr, nullptr, -1, pod, container, token);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "(no error)";
  }
  // A container that ends takes its exec'd processes with it (as a real kubelet's PID namespace
  // does), so a pod that ended as soon as `finish` exists could kill the exec that made it before
  // it exited (exit 137). The exec writes its own pid there and the pod waits for that process to
  // be gone (kEndsAfterTheFinishingExec): the exec always exits 0 first.
  void finish(const std::string& pod = "sleeper") {
    const int code = exec({"sh", "-c", "echo $$ >finish.tmp && mv finish.tmp finish"}, nullptr,
                          nullptr, -1, pod);
    ASSERT_EQ(code, 0) << "the finishing exec";
    ASSERT_TRUE(kube_->wait_for_object(
        kExecPods + "/" + pod,
        [](const json& p) { return p["status"].value("phase", "") == "Succeeded"; }, kExecWait));
  }
};

TEST_F(FakeKubeExecTest, RunsInTheContainersEnvironmentAndDirectoryWithItsExitCode) {
  start();
  start_pod();
  std::string out, err;
  int code = exec({"sh", "-c", "echo \"$GREETING\"; pwd; echo to-stderr >&2; exit 3"}, &out, &err);
  EXPECT_EQ(code, 3);
  const std::string dir = out.substr(out.find('\n') + 1);
  EXPECT_EQ(out.substr(0, out.find('\n')), "hello-from-the-pod");
  EXPECT_NE(dir.find("default_sleeper_"), std::string::npos) << "the pod's own directory: " << dir;
  EXPECT_EQ(err, "to-stderr\n");
  EXPECT_EQ(kube_->request_counts()["GET /api/v1/namespaces/{ns}/pods/{name}/exec"], 1);
  finish();
}

TEST_F(FakeKubeExecTest, EveryArgumentArrivesInOrderRepeatsIncluded) {
  start();
  start_pod();
  std::string out;
  EXPECT_EQ(exec({"sh", "-c", "echo \"$0|$1|$2\"", "-c", "-c", "a b"}, &out), 0);
  EXPECT_EQ(out, "-c|-c|a b\n");
  finish();
}

TEST_F(FakeKubeExecTest, StdinAndItsEndReachTheCommand) {
  start();
  start_pod();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "one\ntwo\n", 8), 8);
  ::close(fds[1]);
  std::string out;
  EXPECT_EQ(exec({"cat"}, &out, nullptr, fds[0]), 0);
  ::close(fds[0]);
  EXPECT_EQ(out, "one\ntwo\n");
  finish();
}

TEST_F(FakeKubeExecTest, AMissingCommandIsTheRuntimesErrorAnd127) {
  start();
  start_pod();
  std::string err;
  EXPECT_EQ(exec({"no-such-program"}, nullptr, &err), 127);
  EXPECT_NE(err.find("exec: \"no-such-program\": executable file not found in $PATH: unknown"),
            std::string::npos)
      << err;
  finish();
}

TEST_F(FakeKubeExecTest, RefusalsAreTheApiServersStatus) {
  start();
  start_pod();
  EXPECT_NE(refusal("nosuch").find("pods \"nosuch\" not found"), std::string::npos)
      << refusal("nosuch");
  EXPECT_NE(refusal("sleeper", "nope").find("container nope is not valid for pod sleeper"),
            std::string::npos);
  EXPECT_NE(refusal("sleeper", "main", "").find("rejected the credentials"), std::string::npos);
  finish();
  // The kubelet finds running containers only; v5's translator says so on channel 3.
  EXPECT_NE(refusal("sleeper").find(
                "Internal error occurred: unable to upgrade connection: container not found "
                "(\"main\")"),
            std::string::npos)
      << refusal("sleeper");
}

TEST_F(FakeKubeExecTest, RbacAsksGetOnPodsExecForTheWebSocketGet) {
  start();
  start_pod();
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/serviceaccounts",
                 {{"metadata", {{"name", "debugger"}}}})
                .status,
            201);
  auto minted = call("POST", "/api/v1/namespaces/default/serviceaccounts/debugger/token",
                     {{"apiVersion", "authentication.k8s.io/v1"},
                      {"kind", "TokenRequest"},
                      {"spec", {{"expirationSeconds", 3600}}}});
  ASSERT_EQ(minted.status, 201) << minted.body;
  const std::string token = json::parse(minted.body)["status"]["token"];
  EXPECT_NE(refusal("sleeper", "main", token).find("denied access"), std::string::npos)
      << refusal("sleeper", "main", token);
  ASSERT_EQ(
      call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
           {{"metadata", {{"name", "exec"}}},
            {"rules", {{{"apiGroups", {""}}, {"resources", {"pods/exec"}}, {"verbs", {"get"}}}}}})
          .status,
      201);
  ASSERT_EQ(call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
                 {{"metadata", {{"name", "exec"}}},
                  {"roleRef",
                   {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "exec"}}},
                  {"subjects",
                   {{{"kind", "ServiceAccount"}, {"name", "debugger"}, {"namespace", "default"}}}}})
                .status,
            201);
  EXPECT_EQ(refusal("sleeper", "main", token), "(no error)");
  finish();
}

// The handshake by hand: what the server answers to each Sec-WebSocket-Protocol.
struct Handshake {
  int status;
  std::string protocol;
  std::string accept;
};
Handshake handshake(const fakes::FakeKube& kube, const std::optional<std::string>& protocols) {
  http::Request r;
  r.url = kube.url() + "/api/v1/namespaces/default/pods/sleeper/exec?command=true&stdout=true";
  r.headers = {{"Authorization", "Bearer test-token"},
               {"Connection", "Upgrade"},
               {"Upgrade", "websocket"},
               {"Sec-WebSocket-Version", "13"},
               {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}};
  if (protocols) r.headers.push_back({"Sec-WebSocket-Protocol", *protocols});
  http::CurlOptions o;
  o.ca_pem = kube.ca_pem();
  auto res = http::open_upgrade(r, o);
  return {res.status, res.header("Sec-WebSocket-Protocol").value_or(""),
          res.header("Sec-WebSocket-Accept").value_or("")};
}

TEST_F(FakeKubeExecTest, TheFirstProtocolOfTheClientsListTheKubeletSpeaks) {
  start();
  start_pod();
  auto v5 = handshake(*kube_, "v5.channel.k8s.io, v4.channel.k8s.io");
  EXPECT_EQ(v5.status, 101);
  EXPECT_EQ(v5.protocol, "v5.channel.k8s.io");
  EXPECT_EQ(v5.accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_EQ(handshake(*kube_, "v4.channel.k8s.io, v5.channel.k8s.io").protocol,
            "v4.channel.k8s.io");
  EXPECT_EQ(handshake(*kube_, "base64.channel.k8s.io, v4.channel.k8s.io").protocol,
            "v4.channel.k8s.io");
  auto none = handshake(*kube_, std::nullopt);
  EXPECT_EQ(none.status, 101);
  EXPECT_EQ(none.protocol, "");
  EXPECT_EQ(handshake(*kube_, "chat").status, 403);
  finish();
}

}  // namespace
}  // namespace kinetic::test
