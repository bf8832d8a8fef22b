// An HTTP/1.1 request that may switch protocols (101, a WebSocket), after which the connection is
// the caller's: bytes both ways. Debian 12's libcurl (7.88) has no WebSocket API, so curl only
// connects (CONNECT_ONLY: TCP, TLS with the same verification as the transport's) and the request
// and the response head are written and read here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "http/transport.h"

namespace kinetic::http {

// A connection after its 101 answer. Not thread-safe.
class UpgradedConnection {
 public:
  virtual ~UpgradedConnection() = default;
  // Sends all of BYTES, waiting while the socket is full. Throws TransportError.
  virtual void send(std::string_view bytes) = 0;
  // The bytes that have arrived (at most 64 KiB a call: call again until ""): "" when none now
  // (poll fd() for more), nullopt once the peer closed the connection. Throws TransportError.
  virtual std::optional<std::string> receive() = 0;
  // The socket, to poll for input.
  virtual int fd() const = 0;
};

struct UpgradeResponse {
  int status = 0;
  Headers headers;
  // Not 101: the response's body (at most 64 KiB), to read a Status from.
  std::string body;
  // 101: the connection, and the bytes that came with the response head (already the new
  // protocol's).
  std::unique_ptr<UpgradedConnection> connection;
  std::string early_bytes;
  std::optional<std::string> header(std::string_view name) const {
    return find_header(headers, name);
  }
};

// Sends REQUEST (a GET with its Upgrade headers; REQUEST.url https://HOST[:PORT]/PATH?QUERY) on a
// connection of its own, with OPTIONS' CA and connect timeout, and reads the answer's head.
// Throws TransportError when the connection fails or the answer is not HTTP.
UpgradeResponse open_upgrade(const Request& request, const CurlOptions& options);

}  // namespace kinetic::http
