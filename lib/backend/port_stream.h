// A byte stream to a port of a running job's host, the engine of `kinetic port-forward` (and of
// what reaches into a job later: a debugger, a server): the gke backend opens one as a
// pods/portforward WebSocket (k8s/port_forward.h), the local backend as a TCP connection to
// 127.0.0.1, where the job's process listens.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kinetic {

// One connection to the job's port. Not thread-safe: one thread pumps it.
class PortStream {
 public:
  virtual ~PortStream() = default;
  // Poll it for input.
  virtual int fd() const = 0;
  // All of DATA to the port. Throws Error when the connection is gone.
  virtual void send(std::string_view data) = 0;
  // The port's bytes that came: "" none now (poll fd()), nullopt the connection ended.
  virtual std::optional<std::string> receive() = 0;
  // Nothing more will be sent: TCP half-closes; a WebSocket, which cannot, ends the session.
  virtual void close_write() = 0;
  // Why the connection ended, when the far side said ("connection refused"); else "".
  virtual std::string error() const { return {}; }
};

// Connections to one host of one running job.
class PortDialer {
 public:
  virtual ~PortDialer() = default;
  // A connection to PORT. Called from several threads at once. Throws Error with one line (the
  // job ended, RBAC refused it).
  virtual std::unique_ptr<PortStream> dial(int port) = 0;
  // Blocks until the job's host is gone and returns one line saying so ("job-1 ended
  // (succeeded)"), or returns "" once STOP_FD is readable.
  virtual std::string wait_for_end(int stop_fd) = 0;
  // Where the ports are, for the user: "pod job-1-0-abcde", "the job's process on this machine".
  virtual std::string where() const = 0;
};

}  // namespace kinetic
