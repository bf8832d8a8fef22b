#include "run/debug_attach.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>

#include "core/duration.h"
#include "core/error.h"
#include "core/fs.h"

namespace kinetic {

nlohmann::ordered_json launch_configuration(const std::string& job, const std::string& address,
                                            int port, const std::string& local_root,
                                            const std::string& remote_root) {
  return {{"name", "kinetic: " + job},
          {"type", "debugpy"},
          {"request", "attach"},
          {"connect", {{"host", address}, {"port", port}}},
          {"pathMappings", {{{"localRoot", local_root}, {"remoteRoot", remote_root}}}},
          // The job's libraries are where a bug often shows; stepping into them is the point.
          {"justMyCode", false}};
}

std::string attach_instructions(const nlohmann::ordered_json& launch, long wait_seconds) {
  const auto& connect = launch["connect"];
  return "kinetic: debugpy of " + launch["name"].get<std::string>().substr(9) + " at " +
         connect["host"].get<std::string>() + ":" + std::to_string(connect["port"].get<int>()) +
         "; the job waits up to " + format_duration(static_cast<double>(wait_seconds)) +
         " for a debugger. Add this to .vscode/launch.json's \"configurations\", then Run > "
         "Start Debugging (F5):\n" +
         launch.dump(2);
}

std::string local_root_here(const DebugSpec& debug) {
  std::error_code ec;
  if (!debug.local_root.empty() && fs::is_directory(debug.local_root, ec)) return debug.local_root;
  return "${workspaceFolder}";
}

std::unique_ptr<PortForwarder> debug_forwarder(PortDialer& dialer, const std::string& address,
                                               int local, int remote) {
  if (local != 0)
    return std::make_unique<PortForwarder>(dialer, address,
                                           std::vector{PortMapping{local, remote}});
  try {
    return std::make_unique<PortForwarder>(dialer, address,
                                           std::vector{PortMapping{kDebugPort, remote}});
  } catch (const Error& e) {
    if (e.code() != Errc::usage) throw;
    // 5678 is taken (another session, or the job itself on this machine): any free port, which
    // the configuration names.
    return std::make_unique<PortForwarder>(dialer, address, std::vector{PortMapping{0, remote}});
  }
}

DebugForward::DebugForward(Backend& backend, const JobSpec& spec, const IOStreams& io)
    : backend_(backend), own_(backend.for_another_thread()), spec_(spec), io_(io) {
  if (::pipe2(stop_, O_CLOEXEC) != 0) throw Error(Errc::internal, "run --debug: no pipe");
  thread_ = std::thread([this] { forward(); });
}

DebugForward::~DebugForward() {
  const char byte = 1;
  (void)!::write(stop_[1], &byte, 1);
  thread_.join();
  ::close(stop_[0]);
  ::close(stop_[1]);
}

std::unique_ptr<PortDialer> DebugForward::dial_when_running(Backend& backend) {
  // A pod is scheduled in seconds to minutes (a node may have to come up): ask often at first,
  // then every 2 s.
  int delay_ms = 250;
  for (;;) {
    const std::optional<JobStatus> st = backend.get(spec_.id);
    if (st && st->terminal()) return nullptr;
    // The dialer itself asks whether host 0 runs (a slice's record may say pending while its
    // pods run): until it does, it says not found.
    if (st) {
      try {
        return backend.port_dialer(spec_.id, 0);
      } catch (const Error& e) {
        if (e.code() != Errc::not_found) throw;
      }
    }
    pollfd stop{stop_[0], POLLIN, 0};
    if (::poll(&stop, 1, delay_ms) != 0) return nullptr;
    delay_ms = std::min(2000, delay_ms * 2);
  }
}

void DebugForward::forward() {
  Backend& backend = own_ ? *own_ : backend_;
  const DebugSpec& debug = *spec_.debug;
  try {
    const std::unique_ptr<PortDialer> dialer = dial_when_running(backend);
    if (!dialer) return;
    const auto forwarder = debug_forwarder(*dialer, "127.0.0.1", 0, debug.port);
    const int local = forwarder->mappings().front().local;
    // What --debug was asked for: shown with --quiet too, as a warning is.
    io_.warn(attach_instructions(
        launch_configuration(spec_.id, "127.0.0.1", local, debug.local_root, debug.remote_root),
        debug.wait_seconds));
    forwarder->serve(stop_[0], [this](const std::string& line) { io_.warn(line); });
  } catch (const Error& e) {
    io_.warn("cannot forward a port to " + spec_.id + "'s debugger (" + e.what() +
             "); attach with `kinetic debug " + spec_.id + "`");
  }
}

}  // namespace kinetic
