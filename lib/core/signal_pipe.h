// Ctrl-C and termination requests (SIGINT, SIGTERM, SIGHUP) turned into a readable pipe while a
// SignalPipe lives, so a wait that polls file descriptors reacts to them: a foreground run
// cancels its job, a port-forward closes its connections. The previous handlers come back when
// it goes. One at a time per process.
#pragma once

#include <signal.h>

namespace kinetic {

class SignalPipe {
 public:
  SignalPipe();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;
  // Readable (a byte per signal) once one of the signals arrived; -1 if no pipe could be made.
  int fd() const;

 private:
  struct sigaction old_[NSIG] {};
};

}  // namespace kinetic
