// `run --debug` (docs/serving.md "Debugging"): the job's Python starts under debugpy, which
// listens in the job and waits for a debugger before the job's code runs. What the spec records
// of it, and the launcher that does it in the job (lib/job/debug_launcher.py, embedded).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kinetic {

// debugpy's own default, and what VS Code fills in for an attach configuration.
inline constexpr int kDebugPort = 5678;
// How long the job waits for a debugger before it runs without one: a detached job nobody
// attaches to does not hold its node for ever (the Keras team's Kinetic waits as long).
inline constexpr long kDebugWaitSeconds = 600;
// What --debug adds to kinetic's own image when the project's requirements name no debugpy.
inline constexpr std::string_view kDebugpyRequirement = "debugpy==1.8.22";

struct DebugSpec {
  int port = kDebugPort;  // where debugpy listens in the job (host 0's)
  long wait_seconds = kDebugWaitSeconds;
  // Where the job sees its context (a link to where it was unpacked), so that a launch
  // configuration written before the job ran can map it: debug_remote_root(id).
  std::string remote_root;
  // The project folder on the machine that submitted the job: the launch configuration's
  // localRoot (`kinetic debug` on another machine uses ${workspaceFolder}).
  std::string local_root;
  std::string launcher_sha256;  // of the launcher's source the job runs it with
};

// The fixed path a debug job's context is linked at in the job: /tmp/kinetic-debug/JOB.
std::string debug_remote_root(const std::string& job_id);

// The launcher (lib/job/debug_launcher.py) as the job runs it, and its sha256.
std::string_view debug_launcher_source();
std::string debug_launcher_sha256();

nlohmann::json to_json(const DebugSpec& d);
DebugSpec debug_spec_from_json(const nlohmann::json& j);

}  // namespace kinetic
