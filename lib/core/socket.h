// The two socket chores every forward does, kinetic's (port-forward) and the fakes' (the
// kubelet's side of a forward, the TLS front): a TCP connection to a port of this machine, and
// sending every byte of a buffer.
#pragma once

#include <string_view>

namespace kinetic {

// A connected TCP socket to 127.0.0.1:PORT (close-on-exec, TCP_NODELAY: forwarded requests are
// small and answered at once); -1 with errno set when the connection is refused or fails.
int connect_loopback(int port);

// Sends all of DATA on the socket FD (retrying short sends and EINTR, never raising SIGPIPE);
// false once the peer is gone.
bool send_all(int fd, std::string_view data);

}  // namespace kinetic
