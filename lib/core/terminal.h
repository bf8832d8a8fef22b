// The local terminal while a remote command has it (`kinetic exec -it`): raw mode, restored on
// every way out, and its size changes as a readable pipe.
#pragma once

#include <optional>
#include <utility>

namespace kinetic {

// Columns and rows of the terminal on FD; nullopt when FD is not one.
std::optional<std::pair<unsigned short, unsigned short>> terminal_size(int fd);

// Puts the terminal on FD in raw mode (no echo, no line editing, no signals from keys: Ctrl-C
// goes to the remote command) until destroyed. A SIGTERM, SIGHUP, SIGINT or SIGQUIT meanwhile
// restores it before the signal does what it would have. One at a time.
class RawTerminal {
 public:
  explicit RawTerminal(int fd);
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  // Whether raw mode is on (false when FD is not a terminal).
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

// A pipe whose read end becomes readable on each SIGWINCH, while this object lives. One at a time.
class ResizeSignal {
 public:
  ResizeSignal();
  ~ResizeSignal();
  ResizeSignal(const ResizeSignal&) = delete;
  ResizeSignal& operator=(const ResizeSignal&) = delete;
  int fd() const;
};

}  // namespace kinetic
