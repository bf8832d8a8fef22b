// The TLS side of a fake server whose HTTP library cannot hand over a connection (cpp-httplib 0.11
// has no WebSocket and hides its sockets). The front accepts TLS itself, reads the first request's
// head, and either serves that connection itself (CLAIM: a WebSocket upgrade) or pumps its bytes,
// both ways, to the httplib server listening in plain HTTP on a loopback port of its own, which
// then sees every request the client makes on that connection. The first request of a connection
// decides: an upgrade sent on a connection that carried other requests reaches httplib.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

namespace kinetic::fakes {

// One accepted TLS connection, blocking.
class TlsConnection {
 public:
  TlsConnection(SSL* ssl, int fd) : ssl_(ssl), fd_(fd) {}
  int fd() const { return fd_; }
  // Whether bytes are buffered in TLS already (poll(fd) would not show them).
  bool pending() const { return SSL_pending(ssl_) > 0; }
  // Some bytes; nullopt at the end (or an error).
  std::optional<std::string> read_some();
  // False when the connection is gone.
  bool write(std::string_view bytes);

 private:
  SSL* ssl_;
  int fd_;
};

class TlsFront {
 public:
  // HEAD: the first request's line and headers, through the blank line; EXTRA: bytes after it.
  // Returns true when it served the connection (it has returned, the connection is closed next).
  using Claim = std::function<bool(const std::string& head, std::string& extra, TlsConnection&)>;

  // CERT and KEY: the serving certificate (not taken over). BACKEND_PORT: httplib's, on
  // 127.0.0.1.
  TlsFront(X509* cert, EVP_PKEY* key, int backend_port, Claim claim);
  ~TlsFront();  // stop()
  TlsFront(const TlsFront&) = delete;
  TlsFront& operator=(const TlsFront&) = delete;

  int port() const { return port_; }
  // Ends the accept loop, shuts every open connection down and waits for their threads.
  void stop();

 private:
  void accept_loop();
  void serve(int fd);
  void pump(TlsConnection& client, int backend, const std::string& first_bytes);

  SSL_CTX* ctx_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  int backend_port_;
  Claim claim_;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::set<int> open_fds_;  // client and backend sockets, shut down by stop()
  int active_ = 0;          // connection threads still running
  std::atomic<bool> stopping_{false};
};

}  // namespace kinetic::fakes
