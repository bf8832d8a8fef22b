// pods/portforward on the fake Kubernetes API (fake_kube_port_forward.cpp): the frames exactly as
// the kubelet's websocket.go writes them, read from a raw handshake (each channel's first
// message the port, 2 bytes little-endian, data on 2i, errors on 2i+1), kinetic's own client
// (k8s/port_forward.h) through it, the refusals of the API server and the kubelet, and RBAC's
// verb on pods/portforward.
#include <gtest/gtest.h>
#include <poll.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "fake_kube_fixture.h"
#include "http/upgrade.h"
#include "k8s/port_forward.h"
#include "k8s/websocket.h"

namespace kinetic::test {
namespace {

using nlohmann::json;
namespace ws = k8s::ws;

const std::string kForwardPods = "/api/v1/namespaces/default/pods";
constexpr int kForwardWait = 20000;

// Echoes each connection's bytes upper-cased, on a port it prints, until the file `finish`.
constexpr const char* kUpperServer =
    "import os, socket, threading, time\n"
    "s = socket.socket()\n"
    "s.bind(('127.0.0.1', 0))\n"
    "s.listen(16)\n"
    "print('port', s.getsockname()[1], flush=True)\n"
    "def serve(c):\n"
    "    while True:\n"
    "        b = c.recv(65536)\n"
    "        if not b:\n"
    "            break\n"
    "        c.sendall(b.upper())\n"
    "    c.close()\n"
    "def accept():\n"
    "    while True:\n"
    "        threading.Thread(target=serve, args=(s.accept()[0],), daemon=True).start()\n"
    "threading.Thread(target=accept, daemon=True).start()\n"
    "while not os.path.exists('finish'):\n"
    "    time.sleep(0.02)\n";

class Token : public auth::TokenProvider {
 public:
  explicit Token(std::string token) : token_(std::move(token)) {}
  std::string token() override { return token_; }
  void invalidate() override {}

 private:
  std::string token_;
};

class FakeKubePortForwardTest : public FakeKubeFixture {
 protected:
  FakeKubePortForwardTest() : FakeKubeFixture("fake-kube-forward-") {}

  // The pod serving kUpperServer; its port.
  int start_pod() {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "server"}}},
                {"spec",
                 {{"restartPolicy", "Never"},
                  {"containers",
                   {{{"name", "main"},
                     {"image", "app:1"},
                     {"command", {"python3", "-c", kUpperServer}}}}}}}};
    EXPECT_EQ(call("POST", kForwardPods, pod).status, 201);
    int port = 0;
    EXPECT_TRUE(kube_->wait_for_object(
        kForwardPods + "/server",
        [](const json& p) { return p["status"].value("phase", "") == "Running"; }, kForwardWait));
    // The log, read again until it names the port (a bound against a hang, not a timing).
    for (int i = 0; i < 20000 && port == 0; ++i) {
      auto r = call("GET", kForwardPods + "/server/log");
      const size_t at = r.body.find("port ");
      if (at != std::string::npos) port = std::atoi(r.body.c_str() + at + 5);
    }
    return port;
  }
  std::string refusal(const std::string& pod, int port, const std::string& token = "test-token") {
    Token t(token);
    try {
      k8s::open_port_forward(kube_->url(), kube_->ca_pem(), t, "default", pod, port);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "(no error)";
  }
  // A raw upgrade of QUERY (the part after portforward?) offering PROTOCOLS.
  http::UpgradeResponse upgrade(const std::string& query,
                                const std::string& protocols = "v4.channel.k8s.io",
                                const std::string& token = "test-token") {
    http::Request r;
    r.url = kube_->url() + kForwardPods + "/server/portforward?" + query;
    r.headers = {{"Authorization", "Bearer " + token},
                 {"Connection", "Upgrade"},
                 {"Upgrade", "websocket"},
                 {"Sec-WebSocket-Version", "13"},
                 {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
                 {"Sec-WebSocket-Protocol", protocols}};
    http::CurlOptions o;
    o.ca_pem = kube_->ca_pem();
    return http::open_upgrade(r, o);
  }
  void finish() {
    // The pod's directory is its working directory: `finish` there ends it.
    for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/pods"))
      if (entry.path().filename().string().find("default_server_") == 0)
        std::ofstream(entry.path() / "finish");
    ASSERT_TRUE(kube_->wait_for_object(
        kForwardPods + "/server",
        [](const json& p) { return p["status"].value("phase", "") == "Succeeded"; }, kForwardWait));
  }
};

// The next whole message from the server on RES's connection.
ws::Message next_message(http::UpgradeResponse& res, ws::MessageReader& reader) {
  for (;;) {
    if (auto m = reader.next()) return *m;
    auto got = res.connection->receive();
    if (!got) return {ws::Opcode::close, "(connection ended)"};
    if (got->empty()) {
      pollfd p{res.connection->fd(), POLLIN, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    reader.feed(*got);
  }
}

TEST_F(FakeKubePortForwardTest, ChannelsOpenWithTheirPortLittleEndianThenCarryTheBytes) {
  start();
  const int port = start_pod();
  ASSERT_GT(port, 0);
  auto res = upgrade("ports=" + std::to_string(port));
  ASSERT_EQ(res.status, 101) << res.body;
  EXPECT_EQ(res.header("Sec-WebSocket-Protocol").value_or(""), "v4.channel.k8s.io");
  ws::MessageReader reader(/*expect_masked=*/false);
  reader.feed(res.early_bytes);
  const std::string le = {static_cast<char>(port & 0xFF), static_cast<char>(port >> 8)};
  EXPECT_EQ(next_message(res, reader).payload, std::string(1, '\0') + le);
  EXPECT_EQ(next_message(res, reader).payload, std::string(1, '\1') + le);
  const std::array<uint8_t, 4> mask = {1, 2, 3, 4};
  res.connection->send(
      ws::encode_frame(ws::Opcode::binary, std::string(1, '\0') + "hello", true, mask));
  std::string echoed;
  while (echoed.size() < 5) {
    ws::Message m = next_message(res, reader);
    ASSERT_EQ(m.opcode, ws::Opcode::binary);
    ASSERT_EQ(m.payload[0], '\0');
    echoed += m.payload.substr(1);
  }
  EXPECT_EQ(echoed, "HELLO");
  EXPECT_EQ(kube_->request_counts()["GET /api/v1/namespaces/{ns}/pods/{name}/portforward"], 1);
  // kinetic's client through the same route.
  Token t("test-token");
  auto stream = k8s::open_port_forward(kube_->url(), kube_->ca_pem(), t, "default", "server", port);
  stream->send("abc");
  std::string got;
  while (got.size() < 3) {
    auto bytes = stream->receive();
    ASSERT_TRUE(bytes.has_value());
    got += *bytes;
    if (bytes->empty()) {
      pollfd p{stream->fd(), POLLIN, 0};
      ::poll(&p, 1, -1);
    }
  }
  EXPECT_EQ(got, "ABC");
  finish();
}

TEST_F(FakeKubePortForwardTest, APortNothingListensOnIsTheRuntimesErrorOnItsErrorChannel) {
  start();
  ASSERT_GT(start_pod(), 0);
  Token t("test-token");
  auto stream = k8s::open_port_forward(kube_->url(), kube_->ca_pem(), t, "default", "server", 1);
  for (;;) {
    auto bytes = stream->receive();
    if (!bytes) break;
    pollfd p{stream->fd(), POLLIN, 0};
    if (bytes->empty()) ::poll(&p, 1, -1);
  }
  EXPECT_NE(stream->error().find("error forwarding port 1 to pod server, uid "), std::string::npos)
      << stream->error();
  EXPECT_NE(stream->error().find("connect: connection refused"), std::string::npos);
  finish();
}

TEST_F(FakeKubePortForwardTest, RefusalsAreTheApiServersAndTheKubelets) {
  start();
  const int port = start_pod();
  EXPECT_NE(refusal("nosuch", port).find("pods \"nosuch\" not found"), std::string::npos);
  EXPECT_NE(refusal("server", port, "").find("rejected the credentials"), std::string::npos);
  auto r = upgrade("");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("query parameter \\\"port\\\" is required"), std::string::npos) << r.body;
  r = upgrade("ports=0");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("must be > 0"), std::string::npos) << r.body;
  r = upgrade("ports=70000");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("value out of range"), std::string::npos) << r.body;
  // kubectl 1.30+'s SPDY tunnel is the API server's translation, which the fake lacks: a 400
  // that says so, not a silent failure.
  r = upgrade("ports=" + std::to_string(port), "SPDY/3.1+portforward.k8s.io");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("does not tunnel SPDY"), std::string::npos) << r.body;
  EXPECT_EQ(upgrade("ports=" + std::to_string(port), "chat").status, 403);
  finish();
  // An ended pod's sandbox is gone.
  r = upgrade("ports=" + std::to_string(port));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "sandbox container is not running");
}

// kubectl's fallback, a SPDY/3.1 upgrade (POST, verb create): the kubelet's handshake asks for
// portforward.k8s.io among X-Stream-Protocol-Version; the session itself is proved by kubectl
// (tests/kubectl/run_kubectl.sh) and its frames in tests/unit/test_fake_spdy.cpp.
TEST_F(FakeKubePortForwardTest, SpdyUpgradeNegotiatesPortforwardK8sIo) {
  start();
  ASSERT_GT(start_pod(), 0);
  auto spdy = [&](const std::optional<std::string>& version) {
    http::Request r;
    r.method = "POST";
    r.url = kube_->url() + kForwardPods + "/server/portforward";
    r.headers = {
        {"Authorization", "Bearer test-token"}, {"Connection", "Upgrade"}, {"Upgrade", "SPDY/3.1"}};
    if (version) r.headers.push_back({"X-Stream-Protocol-Version", *version});
    http::CurlOptions o;
    o.ca_pem = kube_->ca_pem();
    return http::open_upgrade(r, o);
  };
  auto refused = spdy("v4.channel.k8s.io");
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.body,
            "unable to upgrade: unable to negotiate protocol: client supports [v4.channel.k8s.io], "
            "server supports [portforward.k8s.io]");
  auto accepted = spdy("portforward.k8s.io");
  EXPECT_EQ(accepted.status, 101);
  EXPECT_EQ(accepted.header("Upgrade").value_or(""), "SPDY/3.1");
  EXPECT_EQ(accepted.header("X-Stream-Protocol-Version").value_or(""), "portforward.k8s.io");
  EXPECT_EQ(kube_->request_counts()["POST /api/v1/namespaces/{ns}/pods/{name}/portforward"], 2);
  finish();
}

TEST_F(FakeKubePortForwardTest, RbacAsksGetOnPodsPortforwardForTheWebSocketGet) {
  start();
  const int port = start_pod();
  ASSERT_EQ(call("POST", "/api/v1/namespaces/default/serviceaccounts",
                 {{"metadata", {{"name", "tunnel"}}}})
                .status,
            201);
  auto minted = call("POST", "/api/v1/namespaces/default/serviceaccounts/tunnel/token",
                     {{"apiVersion", "authentication.k8s.io/v1"},
                      {"kind", "TokenRequest"},
                      {"spec", {{"expirationSeconds", 3600}}}});
  ASSERT_EQ(minted.status, 201) << minted.body;
  const std::string token = json::parse(minted.body)["status"]["token"];
  auto role = [&](const std::string& name, const std::string& resource, const std::string& verb) {
    ASSERT_EQ(
        call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
             {{"metadata", {{"name", name}}},
              {"rules", {{{"apiGroups", {""}}, {"resources", {resource}}, {"verbs", {verb}}}}}})
            .status,
        201);
    ASSERT_EQ(call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
                   {{"metadata", {{"name", name}}},
                    {"roleRef",
                     {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}}},
                    {"subjects",
                     {{{"kind", "ServiceAccount"}, {"name", "tunnel"}, {"namespace", "default"}}}}})
                  .status,
              201);
  };
  EXPECT_NE(refusal("server", port, token).find("cannot get resource \"pods/portforward\""),
            std::string::npos)
      << refusal("server", port, token);
  // Reading pods, or `create` (SPDY's POST), is not the WebSocket's GET.
  role("reader", "pods", "get");
  role("spdy", "pods/portforward", "create");
  EXPECT_NE(refusal("server", port, token).find("denied access"), std::string::npos)
      << refusal("server", port, token);
  role("tunnel", "pods/portforward", "get");
  EXPECT_EQ(refusal("server", port, token), "(no error)");
  finish();
}

}  // namespace
}  // namespace kinetic::test
