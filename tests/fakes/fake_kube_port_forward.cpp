// pods/portforward: the API server's checks (serve_port_forward, through the same
// authentication, RBAC, fault injection and counters as every route) and the kubelet's WebSocket
// session (claim_port_forward), as kubernetes pkg/kubelet/cri/streaming/portforward/websocket.go
// serves it: per port of the query a data channel 2i and an error channel 2i+1, each opened with
// the port as 2 bytes little-endian; a port the pod does not listen on is the runtime's message
// on its error channel. The pod's processes share this machine's network, so the pod's port P is
// 127.0.0.1:P (docs/fakes.md).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/socket.h"
#include "fakes/fake_kube_internal.h"
#include "fakes/fake_latency.h"
#include "k8s/port_forward.h"
#include "k8s/websocket.h"

namespace kinetic::fakes {

namespace kube {

std::string forward_failure(int port, const std::string& pod, const std::string& uid, int error) {
  std::string why = std::strerror(error);  // Go's words are lower-case
  if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
  // containerd's words (sandbox_portforward_linux.go), under the kubelet's.
  return "error forwarding port " + std::to_string(port) + " to pod " + pod + ", uid " + uid +
         ": failed to connect to localhost:" + std::to_string(port) + " inside namespace \"" + uid +
         "\", IPv4: dial tcp4 127.0.0.1:" + std::to_string(port) + ": connect: " + why +
         " IPv6 dial tcp6: address ::1: no suitable address ";
}

}  // namespace kube

namespace {

using json = nlohmann::json;
using kube::ApiError;
namespace ws = k8s::ws;

// The kubelet's protocols (websocket.go): v4.channel.k8s.io, and "" (none offered). The base64
// one is not served (docs/fakes.md).
constexpr const char* kForwardV4 = "v4.channel.k8s.io";
// What kubectl 1.30 and later offer first: SPDY tunnelled in WebSocket, which the API server
// translates (KEP-4006). The fake refuses it; kubectl then upgrades to SPDY/3.1 itself, which the
// fake serves (fake_kube_port_forward_spdy.cpp).
constexpr const char* kSpdyTunnel = "SPDY/3.1+portforward.k8s.io";

// "websocket", "spdy" (kubectl's fallback, SPDY/3.1), or "" for another upgrade.
std::string upgrade_kind(const httplib::Request& req) {
  const std::string upgrade = kube::lower(req.get_header_value("Upgrade"));
  if (upgrade.find("websocket") != std::string::npos) return "websocket";
  return upgrade == "spdy/3.1" ? "spdy" : "";
}

bool is_port_forward_upgrade(const httplib::Request& req) {
  if (upgrade_kind(req).empty()) return false;
  const std::string& p = req.path;
  const std::string tail = "/portforward";
  return p.rfind("/api/v1/namespaces/", 0) == 0 && p.size() > tail.size() &&
         p.compare(p.size() - tail.size(), tail.size(), tail) == 0 &&
         p.find("/pods/") != std::string::npos;
}

// The ports of the query's `ports` values (each may be a comma-separated list), as the API
// server passes them on and the kubelet parses them (NewV4Options); throws its 400s.
std::vector<int> forward_ports(const httplib::Request& req) {
  std::vector<int> ports;
  auto range = req.params.equal_range("ports");
  if (range.first == range.second) throw kube::bad_request("query parameter \"port\" is required");
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.empty()) throw kube::bad_request("query parameter \"port\" cannot be empty");
    size_t start = 0;
    while (start <= it->second.size()) {
      size_t comma = it->second.find(',', start);
      if (comma == std::string::npos) comma = it->second.size();
      const std::string p = it->second.substr(start, comma - start);
      char* end = nullptr;
      errno = 0;
      const unsigned long v = std::strtoul(p.c_str(), &end, 10);
      if (p.empty() || *end != '\0' || p[0] == '-' || p[0] == '+')
        throw kube::bad_request("unable to parse \"" + it->second +
                                "\" as a port: strconv.ParseUint: parsing \"" + p +
                                "\": invalid syntax");
      if (errno == ERANGE || v > 65535)
        throw kube::bad_request("unable to parse \"" + it->second +
                                "\" as a port: strconv.ParseUint: parsing \"" + p +
                                "\": value out of range");
      if (v < 1) throw kube::bad_request("port \"" + it->second + "\" must be > 0");
      ports.push_back(static_cast<int>(v));
      start = comma + 1;
    }
  }
  return ports;
}

// One port of the session: its TCP connection to the pod (-1 once done).
struct ForwardedPort {
  int port = 0;
  int fd = -1;
};

// The kubelet's pump: the client's channel 2i to port i's connection, its bytes back on 2i. A
// port whose connection ended is done; when all are, the kubelet closes the WebSocket, as it
// does when the client closes it.
void pump_forwarded_ports(TlsConnection& conn, const std::string& extra,
                          std::vector<ForwardedPort>& ports) {
  ws::MessageReader reader(/*expect_masked=*/true);
  reader.feed(extra);
  bool client_open = true;
  auto open_ports = [&] {
    size_t n = 0;
    for (const auto& p : ports) n += p.fd >= 0;
    return n;
  };
  char buf[65536];
  while (client_open && open_ports() > 0) {
    try {
      while (auto m = reader.next()) {
        if (m->opcode == ws::Opcode::close) {
          client_open = false;
          break;
        }
        if (m->opcode == ws::Opcode::ping)
          conn.write(ws::encode_frame(ws::Opcode::pong, m->payload));
        if (m->opcode != ws::Opcode::binary || m->payload.empty()) continue;
        const auto channel = static_cast<unsigned char>(m->payload[0]);
        // Data for a port on its data channel; the error channels are the kubelet's to write.
        if (channel % 2 != 0 || channel / 2 >= ports.size()) continue;
        ForwardedPort& p = ports[channel / 2];
        if (p.fd >= 0 && !send_all(p.fd, std::string_view(m->payload).substr(1))) {
          ::close(p.fd);
          p.fd = -1;
        }
      }
    } catch (const ws::ProtocolError&) {
      client_open = false;
    }
    if (!client_open) break;
    if (conn.pending()) {
      auto got = conn.read_some();
      if (!got) break;
      reader.feed(*got);
      continue;
    }
    std::vector<pollfd> fds = {{conn.fd(), POLLIN, 0}};
    for (const auto& p : ports)
      fds.push_back({p.fd, static_cast<short>(p.fd >= 0 ? POLLIN : 0), 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) {
      auto got = conn.read_some();
      if (!got) break;
      reader.feed(*got);
    }
    for (size_t i = 0; i < ports.size(); ++i) {
      if (ports[i].fd < 0 || !fds[i + 1].revents) continue;
      ssize_t n = ::recv(ports[i].fd, buf, sizeof buf, 0);
      if (n > 0) {
        std::string m(1, static_cast<char>(2 * i));
        conn.write(ws::encode_frame(ws::Opcode::binary, m.append(buf, static_cast<size_t>(n))));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(ports[i].fd);
        ports[i].fd = -1;
      }
    }
  }
  for (auto& p : ports)
    if (p.fd >= 0) ::close(p.fd);
  conn.write(ws::encode_frame(ws::Opcode::close, ws::close_payload(1000)));
}

// The kubelet's SPDY handshake (apimachinery httpstream.Handshake): the client's
// X-Stream-Protocol-Version list must hold portforward.k8s.io, else a 403 saying so.
bool accepts_spdy_port_forward(const httplib::Request& req, httplib::Response& res) {
  std::string offered;
  auto range = req.headers.equal_range("X-Stream-Protocol-Version");
  for (auto it = range.first; it != range.second; ++it) {
    offered += (offered.empty() ? "" : " ") + it->second;
    size_t start = 0;
    while (start <= it->second.size()) {
      size_t comma = it->second.find(',', start);
      if (comma == std::string::npos) comma = it->second.size();
      if (kube::trim_exec(it->second.substr(start, comma - start)) == kube::kSpdyForwardProtocol)
        return true;
      start = comma + 1;
    }
  }
  res.status = 403;
  res.set_content("unable to upgrade: unable to negotiate protocol: client supports [" + offered +
                      "], server supports [" + kube::kSpdyForwardProtocol + "]",
                  "text/plain; charset=utf-8");
  return false;
}

}  // namespace

void FakeKube::Impl::serve_port_forward(const httplib::Request& req, httplib::Response& res,
                                        const std::string& ns, const std::string& name) {
  if (req.method != "GET" && req.method != "POST") throw kube::method_not_allowed();
  const std::string kind = res.get_header_value(kube::kForwardUpgrade);
  res.headers.erase(kube::kForwardUpgrade);
  std::lock_guard lock(mu);
  json* pod = find(*kube::find_type("", "v1", "pods"), ns, name);
  if (!pod) throw kube::not_found(*kube::find_type("", "v1", "pods"), name);
  if ((*pod)["spec"].value("nodeName", "").empty())
    throw kube::bad_request("pod " + name + " does not have a host assigned");
  // The uid of the pod whose container runs, else containerd's answer for a pod whose sandbox is
  // not ready, passed on as text.
  auto running_uid = [&]() -> std::string {
    auto it = pods.find((*pod)["metadata"].value("uid", ""));
    if (it != pods.end() && it->second->running) return it->first;
    res.status = 500;
    res.set_content("sandbox container is not running", "text/plain; charset=utf-8");
    return "";
  };
  if (kind == "spdy") {
    if (!accepts_spdy_port_forward(req, res)) return;
    const std::string uid = running_uid();
    if (uid.empty()) return;
    res.status = 101;
    res.set_header(kube::kExecPodUid, uid);
    res.set_header(kube::kExecProtocol, kube::kSpdyForwardProtocol);
    return;
  }
  if (kind != "websocket") {
    if (req.get_header_value("Upgrade").empty())
      throw kube::bad_request("Upgrade request required");
    throw kube::bad_request(
        "the fake API server serves pods/portforward over WebSocket (v4.channel.k8s.io) and "
        "SPDY/3.1 only, not " +
        req.get_header_value("Upgrade"));
  }
  // SPDY tunnelled in the WebSocket is the API server's translation, which the fake lacks.
  const std::vector<std::string> offered = kube::offered_protocols(req);
  std::optional<std::string> protocol;
  if (offered.empty()) protocol = "";
  for (const auto& p : offered)
    if (!protocol && p == kForwardV4) protocol = p;
  if (!protocol) {
    for (const auto& p : offered)
      if (p == kSpdyTunnel)
        throw kube::bad_request(
            "the fake API server does not tunnel SPDY in WebSocket (" + std::string(kSpdyTunnel) +
            "); it serves pods/portforward as the kubelet does, v4.channel.k8s.io, and SPDY/3.1 "
            "upgrades");
    res.status = 403;  // golang.org/x/net/websocket's refused handshake: no body
    return;
  }
  const std::vector<int> ports = forward_ports(req);
  const std::string uid = running_uid();
  if (uid.empty()) return;
  std::string list;
  for (int p : ports) list += (list.empty() ? "" : ",") + std::to_string(p);
  res.status = 101;
  res.set_header(kube::kForwardPorts, list);
  res.set_header(kube::kExecPodUid, uid);
  res.set_header(kube::kExecProtocol, *protocol);
}

bool FakeKube::Impl::claim_port_forward(const std::string& head, std::string& extra,
                                        TlsConnection& conn) {
  httplib::Request req;
  if (!kube::parse_head(head, req) || !is_port_forward_upgrade(req)) return false;
  if (int ms = round_trip_ms(); ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  httplib::Response res;
  res.set_header(kube::kForwardUpgrade, upgrade_kind(req));
  handle(req, res, "");
  if (res.status != 101) {
    kube::write_refusal(res, conn);
    return true;
  }
  const std::string protocol = res.get_header_value(kube::kExecProtocol);
  const std::string pod = req.path.substr(0, req.path.rfind('/'));
  const std::string pod_name = pod.substr(pod.rfind('/') + 1);
  const std::string uid = res.get_header_value(kube::kExecPodUid);
  if (protocol == kube::kSpdyForwardProtocol) {
    if (conn.write(
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
            "X-Stream-Protocol-Version: " +
            std::string(kube::kSpdyForwardProtocol) + "\r\n\r\n"))
      kube::serve_spdy_port_forward(conn, extra, pod_name, uid);
    return true;
  }
  std::string response =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
      "Connection: Upgrade\r\nSec-WebSocket-Accept: " +
      ws::accept_value(req.get_header_value("Sec-WebSocket-Key")) + "\r\n";
  if (!protocol.empty()) response += "Sec-WebSocket-Protocol: " + protocol + "\r\n";
  if (!conn.write(response + "\r\n")) return true;
  auto send = [&](size_t channel, std::string_view data) {
    std::string m(1, static_cast<char>(channel));
    return conn.write(ws::encode_frame(ws::Opcode::binary, m.append(data)));
  };

  std::vector<ForwardedPort> ports;
  const std::string list = res.get_header_value(kube::kForwardPorts);
  for (size_t start = 0; start < list.size();) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    ports.push_back({std::atoi(list.substr(start, comma - start).c_str()), -1});
    start = comma + 1;
  }
  // Every channel opens with its port (websocket.go), data then error, port by port.
  for (size_t i = 0; i < ports.size(); ++i) {
    const std::string prefix = k8s::port_prefix(static_cast<uint16_t>(ports[i].port));
    send(2 * i, prefix);
    send(2 * i + 1, prefix);
  }
  for (size_t i = 0; i < ports.size(); ++i) {
    ports[i].fd = connect_loopback(ports[i].port);
    if (ports[i].fd >= 0) continue;
    send(2 * i + 1, kube::forward_failure(ports[i].port, pod_name, uid, errno));
  }
  pump_forwarded_ports(conn, extra, ports);
  return true;
}

}  // namespace kinetic::fakes
