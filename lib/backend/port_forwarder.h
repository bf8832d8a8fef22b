// `kinetic port-forward`'s engine, backend-neutral: local listening sockets, one thread per
// accepted connection pumping its bytes to and from a PortStream the backend's dialer opened, until
// asked to stop or the job ends.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/port_stream.h"

namespace kinetic {

// kubectl's [LOCAL:]REMOTE: "8080" (8080 -> 8080), "9000:8080", ":8080" (any free local port).
struct PortMapping {
  int local = 0;  // 0: any free port, chosen when bound
  int remote = 0;
};

// SPEC parsed; Error(Errc::usage) naming it for anything else (ports are 1 to 65535).
PortMapping parse_port_mapping(std::string_view spec);

class PortForwarder {
 public:
  // Listens on ADDRESS (an IPv4 address or "localhost") at each mapping's local port. Throws
  // Error(Errc::usage) for a bad address or a local port in use, naming it.
  PortForwarder(PortDialer& dialer, const std::string& address, std::vector<PortMapping> mappings);
  ~PortForwarder();
  PortForwarder(const PortForwarder&) = delete;
  PortForwarder& operator=(const PortForwarder&) = delete;

  // The mappings with their local ports as bound.
  const std::vector<PortMapping>& mappings() const { return mappings_; }
  const std::string& address() const { return address_; }
  // Serves connections until STOP_FD is readable (returns "") or the job ends (returns the
  // dialer's line). A connection's failure goes to ON_ERROR (from any thread, one at a time);
  // the forward goes on.
  std::string serve(int stop_fd, const std::function<void(const std::string&)>& on_error);

 private:
  void pump(int local_fd, int remote_port, int quit_fd,
            const std::function<void(const std::string&)>& report);

  PortDialer& dialer_;
  std::string address_;
  std::vector<PortMapping> mappings_;
  std::vector<int> listeners_;
};

}  // namespace kinetic
