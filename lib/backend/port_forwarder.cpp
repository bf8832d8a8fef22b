// Threads: serve() accepts on its own thread; one thread waits for the job's end
// (PortDialer::wait_for_end); each connection has its thread. Ending is one "quit" pipe written
// once: every poll() that watches it wakes, so no thread needs to be found and told.
#include "backend/port_forwarder.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/socket.h"

namespace kinetic {
namespace {

int parse_port(std::string_view text, std::string_view spec) {
  int port = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || port < 1 ||
      port > 65535)
    throw Error(Errc::usage, "port '" + std::string(spec) +
                                 "': ports are 1 to 65535, as REMOTE, LOCAL:REMOTE or :REMOTE "
                                 "(any free local port), e.g. 8080 or 9000:8080");
  return port;
}

int listen_on(const std::string& address, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const std::string ip = address == "localhost" ? "127.0.0.1" : address;
  if (::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1)
    throw Error(Errc::usage, "--address '" + address +
                                 "': an IPv4 address, e.g. 127.0.0.1 (the default) or 0.0.0.0 "
                                 "(every interface)");
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(Errc::internal, std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(Errc::usage, "cannot listen on " + address + ":" + std::to_string(port) + ": " +
                                 std::strerror(e) +
                                 (e == EADDRINUSE ? "; pick another local port (LOCAL:REMOTE) or "
                                                    ":REMOTE for any free one"
                                                  : ""));
  }
  return fd;
}

int bound_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

}  // namespace

PortMapping parse_port_mapping(std::string_view spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) {
    const int port = parse_port(spec, spec);
    return {port, port};
  }
  const std::string_view local = spec.substr(0, colon);
  return {local.empty() ? 0 : parse_port(local, spec), parse_port(spec.substr(colon + 1), spec)};
}

PortForwarder::PortForwarder(PortDialer& dialer, const std::string& address,
                             std::vector<PortMapping> mappings)
    : dialer_(dialer), address_(address), mappings_(std::move(mappings)) {
  try {
    for (auto& m : mappings_) {
      listeners_.push_back(listen_on(address_, m.local));
      m.local = bound_port(listeners_.back());
    }
  } catch (...) {
    for (int fd : listeners_) ::close(fd);
    throw;
  }
}

PortForwarder::~PortForwarder() {
  for (int fd : listeners_) ::close(fd);
}

void PortForwarder::pump(int local_fd, int remote_port, int quit_fd,
                         const std::function<void(const std::string&)>& report) {
  std::unique_ptr<PortStream> stream;
  try {
    stream = dialer_.dial(remote_port);
  } catch (const std::exception& e) {
    report(e.what());
    return;
  }
  bool local_open = true;
  try {
    for (;;) {
      std::optional<std::string> got;
      while ((got = stream->receive()) && !got->empty())
        if (!send_all(local_fd, *got)) return;
      if (!got) break;  // the job's side ended
      pollfd fds[3] = {{stream->fd(), POLLIN, 0}, {quit_fd, POLLIN, 0}, {local_fd, POLLIN, 0}};
      if (::poll(fds, local_open ? 3 : 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents) return;
      if (local_open && fds[2].revents) {
        char buf[65536];
        ssize_t n = ::recv(local_fd, buf, sizeof buf, 0);
        if (n > 0) {
          stream->send(std::string_view(buf, static_cast<size_t>(n)));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          local_open = false;
          stream->close_write();
        }
      }
    }
  } catch (const std::exception& e) {
    report(e.what());
    return;
  }
  if (!stream->error().empty()) report(stream->error());
}

std::string PortForwarder::serve(int stop_fd,
                                 const std::function<void(const std::string&)>& on_error) {
  int quit[2];
  if (::pipe2(quit, O_CLOEXEC) != 0)
    throw Error(Errc::internal, std::string("pipe: ") + std::strerror(errno));
  int ended[2];
  if (::pipe2(ended, O_CLOEXEC) != 0) {
    ::close(quit[0]);
    ::close(quit[1]);
    throw Error(Errc::internal, std::string("pipe: ") + std::strerror(errno));
  }
  std::mutex mu;
  std::condition_variable idle;
  int running = 0;
  std::string why_ended;
  std::thread watcher([&] {
    std::string why = dialer_.wait_for_end(quit[0]);
    std::lock_guard lock(mu);
    why_ended = std::move(why);
    char c = 1;
    (void)!::write(ended[1], &c, 1);
  });

  for (bool stop = false; !stop;) {
    std::vector<pollfd> fds = {{stop_fd, POLLIN, 0}, {ended[0], POLLIN, 0}};
    for (int fd : listeners_) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    stop = fds[0].revents || fds[1].revents;
    for (size_t i = 0; !stop && i < listeners_.size(); ++i) {
      if (!fds[i + 2].revents) continue;
      int client = ::accept4(listeners_[i], nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      int one = 1;
      ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      const PortMapping m = mappings_[i];
      {
        std::lock_guard lock(mu);
        ++running;
      }
      std::thread([&, client, m] {
        pump(client, m.remote, quit[0], [&](const std::string& message) {
          std::lock_guard lock(mu);
          on_error("an error occurred forwarding " + std::to_string(m.local) + " -> " +
                   std::to_string(m.remote) + ": " + message);
        });
        ::close(client);
        std::lock_guard lock(mu);
        if (--running == 0) idle.notify_all();
      }).detach();
    }
  }
  char c = 1;
  (void)!::write(quit[1], &c, 1);
  watcher.join();
  {
    std::unique_lock lock(mu);
    idle.wait(lock, [&] { return running == 0; });
  }
  for (int fd : {quit[0], quit[1], ended[0], ended[1]}) ::close(fd);
  return why_ended;
}

}  // namespace kinetic
