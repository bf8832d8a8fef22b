#include "backend/backend.h"

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
  st.backend = spec.backend;
  st.created = spec.created;
  st.output_dir = spec.output_dir;
  return st;
}

nlohmann::json to_json(const JobStatus& s) {
  nlohmann::json j = {
      {"id", s.id},
      {"state", s.state},
      {"exit_code", s.exit_code ? nlohmann::json(*s.exit_code) : nlohmann::json(nullptr)},
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
  if (s.pgid != 0) j["pgid"] = s.pgid;
  return j;
}

JobStatus job_status_from_json(const nlohmann::json& j) {
  JobStatus s;
  s.id = j.value("id", "");
  s.state = j.value("state", std::string(kPending));
  if (j.contains("exit_code") && j["exit_code"].is_number_integer())
    s.exit_code = j["exit_code"].get<int>();
  s.error = j.value("error", "");
  s.file = j.value("file", "");
  s.args = j.value("args", std::vector<std::string>{});
  s.accelerator = j.value("accelerator", "");
  s.backend = j.value("backend", "");
  s.created = j.value("created", "");
  s.started = j.value("started", "");
  s.finished = j.value("finished", "");
  s.duration_seconds = j.value("duration_seconds", 0.0);
  s.attempts = j.value("attempts", 0);
  s.output_dir = j.value("output_dir", "");
  s.pgid = j.value("pgid", 0L);
  return s;
}

}  // namespace kinetic
