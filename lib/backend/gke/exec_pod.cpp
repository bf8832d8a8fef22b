#include "backend/gke/exec_pod.h"

#include <algorithm>
#include <cstdlib>

#include "backend/gke/slice_host.h"
#include "core/error.h"

namespace kinetic::gke {
namespace {

using json = nlohmann::json;

// Why a pod that is not running yet waits: its container's waiting reason, else its phase.
std::string waiting_reason(const json& pod) {
  const json status = pod.value("status", json::object());
  for (const auto& c : status.value("containerStatuses", json::array())) {
    const json waiting = c.value("state", json::object()).value("waiting", json::object());
    if (waiting.contains("reason")) return waiting.value("reason", "");
  }
  for (const auto& c : status.value("conditions", json::array()))
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
      return "not scheduled yet";
  return "pending";
}

bool container_running(const json& pod) {
  const json status = pod.value("status", json::object());
  if (status.value("phase", "") != "Running") return false;
  for (const auto& c : status.value("containerStatuses", json::array()))
    if (c.value("name", "") == kJobContainer)
      return c.value("state", json::object()).contains("running");
  return true;  // no container status yet: the API server will say
}

}  // namespace

std::string choose_exec_pod(const std::vector<json>& pods, const std::string& job, int host,
                            int hosts, int per_slice, const std::string& purpose) {
  if (host < 0 || host >= hosts)
    throw Error(Errc::usage, "--host " + std::to_string(host) + ": " + job + " runs on " +
                                 std::to_string(hosts) + (hosts == 1 ? " host" : " hosts") +
                                 (hosts == 1 ? ", host 0" : ", 0 to " + std::to_string(hosts - 1)));
  std::vector<const json*> mine;
  for (const auto& p : pods)
    if (pod_host(p, per_slice > 0 ? per_slice : hosts) == host &&
        !p["metadata"].contains("deletionTimestamp"))
      mine.push_back(&p);
  if (mine.empty())
    throw Error(Errc::not_found, job + " has no pod for host " + std::to_string(host) +
                                     " yet; try again once `kinetic status " + job +
                                     "` says running");
  // The latest attempt: the newest pod (names break ties within one second).
  const json& pod = **std::max_element(mine.begin(), mine.end(), [](const json* a, const json* b) {
    auto key = [](const json* p) {
      return std::make_pair((*p)["metadata"].value("creationTimestamp", ""),
                            (*p)["metadata"].value("name", ""));
    };
    return key(a) < key(b);
  });
  const std::string name = pod["metadata"].value("name", "");
  const std::string phase = pod.value("status", json::object()).value("phase", "Pending");
  if (phase == "Succeeded" || phase == "Failed")
    throw Error(Errc::not_found, job + " has ended (its pod " + name + " " +
                                     (phase == "Succeeded" ? "succeeded" : "failed") +
                                     "): there is nothing to " + purpose + "; see `kinetic logs " +
                                     job + "`");
  if (!container_running(pod))
    throw Error(Errc::not_found, job + " is pending (its pod " + name + ": " + waiting_reason(pod) +
                                     "); try again once `kinetic status " + job + "` says running");
  return name;
}

std::vector<std::string> in_job_context(const std::vector<std::string>& command) {
  static const char* const kScript = R"(import os, sys, tempfile
argv, env = sys.argv[1:], dict(os.environ)
try:
    pid = open(os.path.join(tempfile.gettempdir(), "kinetic-job.pid")).read().strip()
    with open("/proc/%s/environ" % pid, "rb") as f:
        env = dict(e.split("=", 1) for e in f.read().decode("utf-8", "surrogateescape").split("\0")
                   if "=" in e)
    os.chdir(os.readlink("/proc/%s/cwd" % pid))
except (OSError, ValueError):
    pass
try:
    os.execvpe(argv[0], argv, env)
except FileNotFoundError:
    sys.stderr.write("kinetic: exec: %s: not found in the job's PATH\n" % argv[0])
    sys.exit(127)
except OSError as e:
    sys.stderr.write("kinetic: exec: %s: cannot run it (%s)\n" % (argv[0], e.strerror))
    sys.exit(126)
)";
  std::vector<std::string> argv = {"python3", "-c", kScript};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace kinetic::gke
