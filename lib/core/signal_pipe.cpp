#include "core/signal_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace kinetic {

namespace {

int g_signal_pipe[2] = {-1, -1};

void write_signal_byte(int) {
  const int saved = errno;
  char c = 1;
  [[maybe_unused]] auto n = ::write(g_signal_pipe[1], &c, 1);
  errno = saved;
}

}  // namespace

SignalPipe::SignalPipe() {
  if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = write_signal_byte;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, &old_[s]);
}

SignalPipe::~SignalPipe() {
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &old_[s], nullptr);
  for (int& fd : g_signal_pipe) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

int SignalPipe::fd() const {
  return g_signal_pipe[0];
}

}  // namespace kinetic
