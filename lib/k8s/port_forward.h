// `kubectl port-forward` to a pod, over the API server's WebSocket (pods/portforward), as the
// kubelet's streaming server speaks it (kubernetes pkg/kubelet/cri/streaming/portforward/
// websocket.go): the ports are the query's `ports=P` (several: P1,P2 or repeated), the protocol
// v4.channel.k8s.io, and each port has two channels, data 2i and error 2i+1. Each binary message
// is one channel byte and its data; the kubelet's first message on each of a port's two channels
// is the port as 2 bytes little-endian, the rest of the error channel a failure's text (the pod's
// port refused the connection). v4 cannot say "no more data" for one direction: the session ends
// when either side closes the WebSocket.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/token_cache.h"
#include "http/upgrade.h"
#include "k8s/websocket.h"

namespace kinetic::k8s {

inline constexpr const char* kPortForwardProtocol = "v4.channel.k8s.io";

// "/api/v1/namespaces/NS/pods/POD/portforward?ports=P1,P2".
std::string port_forward_path(const std::string& ns, const std::string& pod,
                              const std::vector<int>& ports);

// The 2-byte little-endian port the kubelet puts first on each channel.
std::string port_prefix(uint16_t port);
// Client data for the port at INDEX of the query (channel 2*INDEX).
std::string port_data_message(size_t index, std::string_view data);

// What one of the kubelet's messages says, for the ports of the query.
struct PortForwardEvent {
  enum Kind { data, error, nothing } kind = nothing;
  size_t index = 0;   // which port of the query
  std::string bytes;  // data: the pod's bytes; error: the kubelet's message
};

// The kubelet's messages, channel by channel: the port prefix checked and dropped. Throws
// ProtocolError for a channel beyond the ports asked for, or a prefix naming another port.
class PortForwardDecoder {
 public:
  explicit PortForwardDecoder(std::vector<int> ports);
  PortForwardEvent decode(std::string_view message);

 private:
  std::vector<int> ports_;
  std::vector<std::string> prefix_left_;  // per channel: prefix bytes still to come
};

// One forwarded connection to a pod's port: a WebSocket of its own. Not thread-safe.
class PortForwardStream {
 public:
  PortForwardStream(std::unique_ptr<http::UpgradedConnection> connection, std::string early,
                    int port);
  int fd() const { return connection_->fd(); }
  // All of DATA to the pod's port.
  void send(std::string_view data);
  // The pod's bytes that came: "" none now (poll fd()), nullopt the stream ended (error() says
  // why when the kubelet gave a reason). Answers pings.
  std::optional<std::string> receive();
  // Ends the session (a close frame): v4 has no half-close.
  void close();
  const std::string& error() const { return error_; }

 private:
  // The data of the whole messages received; handles pings, the close and error text.
  std::string take_messages();
  void send_frame(ws::Opcode op, std::string_view payload);

  std::unique_ptr<http::UpgradedConnection> connection_;
  ws::MessageReader reader_{/*expect_masked=*/false};
  PortForwardDecoder decoder_;
  std::string error_;
  bool ended_ = false;
  bool close_sent_ = false;
};

// Opens a port-forward WebSocket to PORT of POD in NS through the API server at SERVER (its CA
// pinned), as the holder of CREDENTIALS' token (a 401 refreshes it once). A refused request (the
// pod is missing or not running, RBAC) throws ApiError with the Status's message. Thread-safe
// (each call is its own connection). VERBOSITY >= 6 traces the request, token-free.
std::unique_ptr<PortForwardStream> open_port_forward(const std::string& server,
                                                     const std::string& ca_pem,
                                                     auth::TokenProvider& credentials,
                                                     const std::string& ns, const std::string& pod,
                                                     int port, int verbosity = 0);

}  // namespace kinetic::k8s
