#include "job/debug_spec.h"

#include "pack/sha256.h"

namespace kinetic {

// lib/job/debug_launcher.py, embedded at build time without its comments
// (cmake/embed_python.cmake).
extern const std::string_view kDebugLauncherSource;

std::string debug_remote_root(const std::string& job_id) {
  return "/tmp/kinetic-debug/" + job_id;
}

std::string_view debug_launcher_source() {
  return kDebugLauncherSource;
}

std::string debug_launcher_sha256() {
  return sha256_hex(kDebugLauncherSource);
}

nlohmann::json to_json(const DebugSpec& d) {
  return {{"port", d.port},
          {"wait_seconds", d.wait_seconds},
          {"remote_root", d.remote_root},
          {"local_root", d.local_root},
          {"launcher_sha256", d.launcher_sha256}};
}

DebugSpec debug_spec_from_json(const nlohmann::json& j) {
  DebugSpec d;
  d.port = j.value("port", kDebugPort);
  d.wait_seconds = j.value("wait_seconds", kDebugWaitSeconds);
  d.remote_root = j.value("remote_root", "");
  d.local_root = j.value("local_root", "");
  d.launcher_sha256 = j.value("launcher_sha256", "");
  return d;
}

}  // namespace kinetic
