#include "backend/local/local_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/socket.h"

namespace kinetic {
namespace {

// How often the forward looks at the job's status for its end: a status read is a few small
// files, and a forward that outlives its job by this much serves only refused connections.
constexpr int kStatusPollMs = 250;

class TcpPortStream : public PortStream {
 public:
  explicit TcpPortStream(int fd) : fd_(fd) {}
  ~TcpPortStream() override { ::close(fd_); }
  int fd() const override { return fd_; }
  void send(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error(Errc::api, std::string("the job's port: ") + std::strerror(errno));
      data.remove_prefix(static_cast<size_t>(n));
    }
  }
  std::optional<std::string> receive() override {
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) return std::string(buf, static_cast<size_t>(n));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return std::string();
    return std::nullopt;
  }
  void close_write() override { ::shutdown(fd_, SHUT_WR); }

 private:
  int fd_;
};

class LocalPortDialer : public PortDialer {
 public:
  LocalPortDialer(std::string id, std::function<JobStatus()> status)
      : id_(std::move(id)), status_(std::move(status)) {}

  std::unique_ptr<PortStream> dial(int port) override {
    const int fd = connect_loopback(port);
    if (fd < 0)
      throw Error(Errc::api, "connecting to 127.0.0.1:" + std::to_string(port) + " (" + id_ +
                                 "'s port on this machine): " + std::strerror(errno));
    return std::make_unique<TcpPortStream>(fd);
  }

  std::string wait_for_end(int stop_fd) override {
    for (;;) {
      pollfd p{stop_fd, POLLIN, 0};
      if (::poll(&p, 1, kStatusPollMs) > 0) return "";
      JobStatus st;
      try {
        st = status_();
      } catch (const Error& e) {
        // Its record removed meanwhile (`kinetic cleanup JOB`, the Python API's result()): the
        // job is over, and this runs on the forward's own thread, where nothing may escape.
        return id_ + " ended: " + e.what();
      }
      if (st.terminal()) return id_ + " ended (" + st.state + "): nothing left to forward to";
    }
  }

  std::string where() const override { return "the job's process on this machine"; }

 private:
  std::string id_;
  std::function<JobStatus()> status_;
};

}  // namespace

std::unique_ptr<PortDialer> local_port_dialer(std::string id, std::function<JobStatus()> status) {
  return std::make_unique<LocalPortDialer>(std::move(id), std::move(status));
}

}  // namespace kinetic
