#include "backend/backend.h"

#include <algorithm>

#include "core/error.h"
#include "core/schema.h"

namespace kinetic {

bool is_terminal_state(std::string_view s) {
  return s == kSucceeded || s == kFailed || s == kTimedOut || s == kCancelled || s == kLost;
}

JobStatus initial_status(const JobSpec& spec) {
  JobStatus st;
  st.id = spec.id;
  st.file = spec.file;
  st.args = spec.args;
  st.accelerator = spec.accelerator;
  st.slices = spec.slices;
  st.backend = spec.backend;
  st.created = spec.created;
  st.output_dir = spec.output_dir;
  st.labels = spec.labels;
  return st;
}

void require_ended_for_removal(const JobStatus& st) {
  if (st.terminal() && !is_held(st, rfc3339(now_unix()))) return;
  throw Error(Errc::usage, st.id + " is " + (st.terminal() ? "held" : st.state) +
                               "; stop it first with `kinetic cancel " + st.id + "`");
}

bool has_labels(const JobStatus& st,
                const std::vector<std::pair<std::string, std::string>>& selector) {
  for (const auto& want : selector)
    if (std::find(st.labels.begin(), st.labels.end(), want) == st.labels.end()) return false;
  return true;
}

namespace {

nlohmann::json optional_int(const std::optional<int>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<int> int_or_null(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && j[key].is_number_integer()) return j[key].get<int>();
  return std::nullopt;
}

}  // namespace

std::string attempt_line(const AttemptRecord& previous, int next, int max_attempts,
                         bool has_checkpoint) {
  const std::string resume =
      has_checkpoint ? "resuming from the checkpoint" : "starting again (no checkpoint saved)";
  if (previous.preempted && previous.error == kEvictedError)
    return "preempted by a higher-priority job; attempt " + std::to_string(next) +
           " now that the queue admitted it again, " + resume;
  if (previous.preempted)
    return "preempted: node reclaimed; attempt " + std::to_string(next) + " on a new node, " +
           resume;
  std::string why = previous.exit_code ? "exited " + std::to_string(*previous.exit_code)
                                       : "ended without an exit code";
  return "attempt " + std::to_string(next) + "/" + std::to_string(max_attempts) +
         ": previous attempt " + why + "; " + resume;
}

nlohmann::json to_json(const AttemptRecord& a) {
  nlohmann::json j = {
      {"attempt", a.attempt},  {"state", a.state},         {"exit_code", optional_int(a.exit_code)},
      {"error", a.error},      {"preempted", a.preempted}, {"started", a.started},
      {"finished", a.finished}};
  if (!a.pod.empty()) j["pod"] = a.pod;
  return j;
}

AttemptRecord attempt_record_from_json(const nlohmann::json& j) {
  AttemptRecord a;
  if (!j.is_object()) return a;
  a.attempt = j.value("attempt", 0);
  a.state = j.value("state", "");
  a.exit_code = int_or_null(j, "exit_code");
  a.error = j.value("error", "");
  a.preempted = j.value("preempted", false);
  a.started = j.value("started", "");
  a.finished = j.value("finished", "");
  a.pod = j.value("pod", "");
  return a;
}

nlohmann::json to_json(const JobStatus& s) {
  nlohmann::json j = {
      {"schema_version", kSchemaVersion},
      {"id", s.id},
      {"state", s.state},
      {"exit_code", optional_int(s.exit_code)},
      {"error", s.error},
      {"file", s.file},
      {"args", s.args},
      {"accelerator", s.accelerator},
      {"backend", s.backend},
      {"created", s.created},
      {"started", s.started},
      {"finished", s.finished},
      {"duration_seconds", s.duration_seconds},
      {"attempts", s.attempts},
      {"output_dir", s.output_dir},
  };
  if (!s.attempt_history.empty()) {
    auto& h = j["attempt_history"] = nlohmann::json::array();
    for (const auto& a : s.attempt_history) h.push_back(to_json(a));
  }
  if (!s.held_until.empty()) j["held_until"] = s.held_until;
  if (!s.queued.empty()) j["queued"] = s.queued;
  if (s.final) j["final"] = true;
  if (!s.labels.empty()) j["labels"] = labels_json(s.labels);
  if (s.slices > 1) j["slices"] = s.slices;
  if (s.pgid != 0) {
    j["pgid"] = s.pgid;
    j["pgid_start"] = s.pgid_start;
    j["pgid_session"] = s.pgid_session;
    j["boot_id"] = s.boot_id;
  }
  return j;
}

bool is_held(const JobStatus& st, const std::string& now) {
  return st.terminal() && !st.held_until.empty() && st.held_until > now;
}

JobStatus job_status_from_json(const nlohmann::json& j) {
  JobStatus s;
  s.id = j.value("id", "");
  s.state = j.value("state", std::string(kPending));
  s.exit_code = int_or_null(j, "exit_code");
  s.error = j.value("error", "");
  s.file = j.value("file", "");
  s.args = j.value("args", std::vector<std::string>{});
  s.accelerator = j.value("accelerator", "");
  s.slices = j.value("slices", 1);
  s.backend = j.value("backend", "");
  s.created = j.value("created", "");
  s.started = j.value("started", "");
  s.finished = j.value("finished", "");
  s.duration_seconds = j.value("duration_seconds", 0.0);
  s.attempts = j.value("attempts", 0);
  if (j.contains("attempt_history") && j["attempt_history"].is_array())
    for (const auto& a : j["attempt_history"])
      s.attempt_history.push_back(attempt_record_from_json(a));
  s.output_dir = j.value("output_dir", "");
  s.held_until = j.value("held_until", "");
  s.queued = j.value("queued", "");
  s.final = j.value("final", false);
  s.labels = labels_from_json(j.value("labels", nlohmann::json::object()));
  s.pgid = j.value("pgid", 0L);
  s.pgid_start = j.value("pgid_start", 0LL);
  s.pgid_session = j.value("pgid_session", -1L);
  s.boot_id = j.value("boot_id", "");
  return s;
}

}  // namespace kinetic
