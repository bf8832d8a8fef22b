// `kinetic serve --idle-stop D` on the local backend (docs/serving.md "Idle stop"): a server's
// activity is the TCP connections established to its port, as the kernel lists them in
// /proc/net/tcp and /proc/net/tcp6, sampled by the job's supervisor about once a second. A
// request whose connection opens and closes between two samples is not seen; a keep-alive
// connection left open counts as activity for as long as it is open.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "backend/stopped_verdict.h"

namespace kinetic {

// What the kernel's TCP table says of a port: whether something listens on it, and how many
// connections it accepted are open (ESTABLISHED with PORT as their local port).
struct PortUse {
  bool listening = false;
  int connections = 0;
};

// PORT's use in TABLE, the text of /proc/net/tcp or tcp6.
PortUse port_use(std::string_view table, int port);

// The same, over this machine's /proc/net/tcp and /proc/net/tcp6.
PortUse port_use(int port);

// Whether a server has gone IDLE_AFTER seconds without a connection to its port. Its quiet
// time counts from when it first listens: a server loading a model for longer than IDLE_AFTER
// is not stopped before it could answer.
class IdleWatch {
 public:
  // USE reads the port's use now.
  IdleWatch(double idle_after_seconds, std::function<PortUse()> use);
  // Samples USE (at most once a second) and says whether, at NOW, the server has listened with
  // no connection seen for IDLE_AFTER seconds.
  bool idle(double now);

 private:
  double idle_after_;
  std::optional<double> last_active_;  // unset until it listens
  double last_sample_ = -1;
  std::function<PortUse()> use_;
};

// The verdict of a server stopped for want of requests: cancelled (exit 130, as `serve stop`
// would leave it), the error saying why.
StoppedVerdict idle_verdict(long idle_after_seconds);

}  // namespace kinetic
