// Reaching a debug job's debugger (`run --debug`, `kinetic debug JOB`; docs/serving.md
// "Debugging"): a local port forwarded to debugpy's port on the job's host 0, and the launch
// configuration an editor attaches with.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "backend/port_forwarder.h"
#include "render/output.h"

namespace kinetic {

// VS Code's attach configuration ("type": "debugpy") for JOB's debugger at ADDRESS:PORT, its
// pathMappings mapping the job's remote root to LOCAL_ROOT (the project folder).
nlohmann::ordered_json launch_configuration(const std::string& job, const std::string& address,
                                            int port, const std::string& local_root,
                                            const std::string& remote_root);

// What is printed once the forward listens: where, the configuration to paste into
// .vscode/launch.json, and that the job waits for it.
std::string attach_instructions(const nlohmann::ordered_json& launch, long wait_seconds);

// The project folder to map: the one recorded at submit when it is on this machine, else
// VS Code's ${workspaceFolder} (the job was submitted from elsewhere).
std::string local_root_here(const DebugSpec& debug);

// Listens on ADDRESS at LOCAL (0: debugpy's own port, 5678, which VS Code fills in, when it is
// free, else any free port) for REMOTE on DIALER's host. Throws as PortForwarder does.
std::unique_ptr<PortForwarder> debug_forwarder(PortDialer& dialer, const std::string& address,
                                               int local, int remote);

// `run --debug` in the foreground: from a thread of its own, waits for the submitted job to
// run, forwards a local port to its debugger and prints how to attach (on stderr: stdout is the
// job's), until the job ends or this is destroyed. A forward that cannot start is a warning
// naming `kinetic debug JOB`; the run goes on.
class DebugForward {
 public:
  DebugForward(Backend& backend, const JobSpec& spec, const IOStreams& io);
  ~DebugForward();
  DebugForward(const DebugForward&) = delete;
  DebugForward& operator=(const DebugForward&) = delete;

 private:
  void forward();
  // Host 0's ports once the job runs; null when it ended first, or this is being destroyed.
  std::unique_ptr<PortDialer> dial_when_running(Backend& backend);

  Backend& backend_;
  std::unique_ptr<Backend> own_;  // a backend of this thread's own, where one is needed
  JobSpec spec_;
  const IOStreams& io_;
  int stop_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace kinetic
