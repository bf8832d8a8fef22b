#include "core/terminal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace kinetic {
namespace {

// What the signal handlers need, in plain statics: they may only make async-signal-safe calls.
int raw_fd = -1;
termios saved{};
constexpr int kRestoringSignals[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};
struct sigaction previous[sizeof kRestoringSignals / sizeof kRestoringSignals[0]];

void restore_then_reraise(int sig) {
  if (raw_fd >= 0) ::tcsetattr(raw_fd, TCSAFLUSH, &saved);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

int resize_pipe[2] = {-1, -1};
struct sigaction previous_winch {};

void on_winch(int) {
  const int saved_errno = errno;
  (void)!::write(resize_pipe[1], "w", 1);
  errno = saved_errno;
}

}  // namespace

std::optional<std::pair<unsigned short, unsigned short>> terminal_size(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0) return std::nullopt;
  return std::make_pair(ws.ws_col, ws.ws_row);
}

RawTerminal::RawTerminal(int fd) {
  termios t{};
  if (!::isatty(fd) || ::tcgetattr(fd, &t) != 0) return;
  saved = t;
  raw_fd = fd;
  struct sigaction sa {};
  sa.sa_handler = restore_then_reraise;
  ::sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kRestoringSignals); ++i)
    ::sigaction(kRestoringSignals[i], &sa, &previous[i]);
  ::cfmakeraw(&t);
  if (::tcsetattr(fd, TCSAFLUSH, &t) != 0) {
    for (size_t i = 0; i < std::size(kRestoringSignals); ++i)
      ::sigaction(kRestoringSignals[i], &previous[i], nullptr);
    raw_fd = -1;
    return;
  }
  active_ = true;
}

RawTerminal::~RawTerminal() {
  if (!active_) return;
  ::tcsetattr(raw_fd, TCSAFLUSH, &saved);
  for (size_t i = 0; i < std::size(kRestoringSignals); ++i)
    ::sigaction(kRestoringSignals[i], &previous[i], nullptr);
  raw_fd = -1;
}

ResizeSignal::ResizeSignal() {
  if (::pipe2(resize_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw Error(Errc::internal, std::string("pipe: ") + std::strerror(errno));
  struct sigaction sa {};
  sa.sa_handler = on_winch;
  sa.sa_flags = SA_RESTART;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGWINCH, &sa, &previous_winch);
}

ResizeSignal::~ResizeSignal() {
  ::sigaction(SIGWINCH, &previous_winch, nullptr);
  ::close(resize_pipe[0]);
  ::close(resize_pipe[1]);
  resize_pipe[0] = resize_pipe[1] = -1;
}

int ResizeSignal::fd() const {
  return resize_pipe[0];
}

}  // namespace kinetic
