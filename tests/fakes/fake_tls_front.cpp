#include "fakes/fake_tls_front.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "core/socket.h"

namespace kinetic::fakes {

namespace {

constexpr size_t kHeadLimit = 64 * 1024;

}  // namespace

std::optional<std::string> TlsConnection::read_some() {
  char buf[16384];
  int n = SSL_read(ssl_, buf, sizeof buf);
  if (n <= 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

bool TlsConnection::write(std::string_view bytes) {
  while (!bytes.empty()) {
    int n = SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()));
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

TlsFront::TlsFront(X509* cert, EVP_PKEY* key, int backend_port, Claim claim)
    : backend_port_(backend_port), claim_(std::move(claim)) {
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (!ctx_ || SSL_CTX_use_certificate(ctx_, cert) != 1 || SSL_CTX_use_PrivateKey(ctx_, key) != 1)
    throw std::runtime_error("TlsFront: TLS setup failed");
  SSL_CTX_set_mode(ctx_, SSL_MODE_AUTO_RETRY);
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 128) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("TlsFront: cannot listen on 127.0.0.1");
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TlsFront::~TlsFront() {
  stop();
  SSL_CTX_free(ctx_);
}

void TlsFront::stop() {
  if (stopping_.exchange(true)) return;
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  std::unique_lock lock(mu_);
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  idle_.wait(lock, [&] { return active_ == 0; });
}

void TlsFront::accept_loop() {
  while (!stopping_) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::lock_guard lock(mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_fds_.insert(fd);
    ++active_;
    std::thread([this, fd] {
      serve(fd);
      std::lock_guard lock(mu_);
      open_fds_.erase(fd);
      ::close(fd);
      if (--active_ == 0) idle_.notify_all();
    }).detach();
  }
}

void TlsFront::serve(int fd) {
  SSL* ssl = SSL_new(ctx_);
  SSL_set_fd(ssl, fd);
  if (SSL_accept(ssl) != 1) {
    SSL_free(ssl);
    return;
  }
  TlsConnection client(ssl, fd);
  std::string in;
  size_t end;
  while ((end = in.find("\r\n\r\n")) == std::string::npos && in.size() < kHeadLimit) {
    auto got = client.read_some();
    if (!got) break;
    in += *got;
  }
  if (end != std::string::npos) {
    std::string head = in.substr(0, end + 4);
    std::string extra = in.substr(end + 4);
    if (claim_(head, extra, client)) {
      SSL_shutdown(ssl);
      SSL_free(ssl);
      return;
    }
  }
  if (!in.empty()) {
    int backend = connect_loopback(backend_port_);
    if (backend >= 0) {
      {
        std::lock_guard lock(mu_);
        open_fds_.insert(backend);
        if (stopping_) ::shutdown(backend, SHUT_RDWR);
      }
      pump(client, backend, in);
      std::lock_guard lock(mu_);
      open_fds_.erase(backend);
      ::close(backend);
    }
  }
  SSL_shutdown(ssl);
  SSL_free(ssl);
}

// Bytes both ways until either side ends; then both end (an HTTP connection has nothing to say
// after its peer hung up, and a response cut by httplib must reach the client as a cut).
void TlsFront::pump(TlsConnection& client, int backend, const std::string& first_bytes) {
  if (!send_all(backend, first_bytes)) return;
  char buf[16384];
  for (;;) {
    if (!client.pending()) {
      pollfd fds[2] = {{client.fd(), POLLIN, 0}, {backend, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = ::recv(backend, buf, sizeof buf, 0);
        if (n <= 0) return;
        if (!client.write(std::string_view(buf, static_cast<size_t>(n)))) return;
        continue;
      }
      if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    }
    auto got = client.read_some();
    if (!got || !send_all(backend, *got)) return;
  }
}

}  // namespace kinetic::fakes
