// One end of a socketpair as an upgraded connection, for the tests of the protocols spoken over
// one (exec's channels, port-forward's): the test plays the API server on the other end. With
// OWNED it closes its fd when destroyed (as a real connection's end goes with it).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>

#include "http/upgrade.h"

namespace kinetic::test {

class SocketConnection : public http::UpgradedConnection {
 public:
  explicit SocketConnection(int fd, bool owned = false) : fd_(fd), owned_(owned) {
    ::fcntl(fd_, F_SETFL, O_NONBLOCK);
  }
  ~SocketConnection() override {
    if (owned_) ::close(fd_);
  }
  SocketConnection(const SocketConnection&) = delete;
  SocketConnection& operator=(const SocketConnection&) = delete;
  void send(std::string_view bytes) override {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EAGAIN) {
        pollfd p{fd_, POLLOUT, 0};
        ::poll(&p, 1, -1);
        continue;
      }
      if (n <= 0) throw http::TransportError("send failed", false);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }
  std::optional<std::string> receive() override {
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return std::nullopt;
    if (n < 0) return std::string();
    return std::string(buf, static_cast<size_t>(n));
  }
  int fd() const override { return fd_; }

 private:
  int fd_;
  bool owned_;
};

}  // namespace kinetic::test
