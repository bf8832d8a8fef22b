#include "job/spec.h"

#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>

#include "core/error.h"
#include "core/schema.h"
#include "core/strings.h"

namespace kinetic {

std::string_view job_kind_name(JobKind k) {
  switch (k) {
    case JobKind::python:
      return "python";
    case JobKind::shell:
      return "shell";
    case JobKind::cpp:
      return "cpp";
    case JobKind::executable:
      return "executable";
    case JobKind::function:
      return "function";
  }
  return "executable";
}

JobKind job_kind_for(const std::string& file_name) {
  std::string f = to_lower(file_name);
  if (ends_with(f, ".py")) return JobKind::python;
  if (ends_with(f, ".sh")) return JobKind::shell;
  if (ends_with(f, ".cpp") || ends_with(f, ".cc") || ends_with(f, ".cxx")) return JobKind::cpp;
  return JobKind::executable;
}

static JobKind kind_from_name(const std::string& s) {
  if (s == "python") return JobKind::python;
  if (s == "shell") return JobKind::shell;
  if (s == "cpp") return JobKind::cpp;
  if (s == "function") return JobKind::function;
  return JobKind::executable;
}

nlohmann::json to_json(const JobSpec& s) {
  nlohmann::json env = nlohmann::json::array();
  for (const auto& [k, v] : s.env) env.push_back({{"name", k}, {"value", v}});
  nlohmann::json data = nlohmann::json::array();
  for (const auto& m : s.data) data.push_back(to_json(m));
  nlohmann::json j = {
      {"schema_version", kSchemaVersion},
      {"id", s.id},
      {"file", s.file},
      {"kind", job_kind_name(s.kind)},
      {"args", s.args},
      {"workdir", s.workdir},
      {"accelerator", s.accelerator},
      {"backend", s.backend},
      {"context_sha256", s.context_sha256},
      {"context_uri", s.context_uri},
      {"image", s.image},
      {"env", env},
      {"secret_env", s.secret_env},
      {"data", data},
      {"price_per_hour", s.price_per_hour},
      {"hold_on_failure_seconds", s.hold_on_failure_seconds},
      {"retries", s.retries},
      {"max_preemptions", s.max_preemptions},
      {"checkpoint_sync_seconds", s.checkpoint_sync_seconds},
      {"log_upload_seconds", s.log_upload_seconds},
      {"follower_timeout_seconds", s.follower_timeout_seconds},
      {"keep", s.keep},
      {"detached", s.detached},
      {"output_dir", s.output_dir},
      {"created", s.created},
  };
  j["timeout_seconds"] = s.timeout_seconds ? nlohmann::json(*s.timeout_seconds) : nullptr;
  j["max_cost_usd"] = s.max_cost_usd ? nlohmann::json(*s.max_cost_usd) : nullptr;
  j["budget_seconds"] = s.budget_seconds ? nlohmann::json(*s.budget_seconds) : nullptr;
  // Only a pipeline step has inputs: a plain job's record keeps its shape.
  if (!s.inputs.empty()) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& [name, location] : s.inputs)
      inputs.push_back({{"name", name}, {"location", location}});
    j["inputs"] = inputs;
  }
  if (s.function) {
    j["function"] = {{"name", s.function->name},
                     {"sha256", s.function->sha256},
                     {"bytes", s.function->bytes},
                     {"runner_sha256", s.function->runner_sha256}};
  }
  if (!s.labels.empty()) j["labels"] = labels_json(s.labels);
  if (s.debug) j["debug"] = to_json(*s.debug);
  // Only a multislice run has slices: a one-slice record keeps its shape.
  if (s.slices > 1) j["slices"] = s.slices;
  if (!s.priority.empty()) j["priority"] = s.priority;
  if (!s.timeout_from.empty()) j["timeout_from"] = s.timeout_from;
  // Only a server has it: every other job's record keeps its shape.
  if (s.serve)
    j["serve"] = {{"port", s.serve->port}, {"idle_stop_seconds", s.serve->idle_stop_seconds}};
  return j;
}

std::string spec_document(const JobSpec& s) {
  return to_json(s).dump();
}

JobSpec job_spec_from_json(const nlohmann::json& j) {
  JobSpec s;
  s.id = j.value("id", "");
  s.file = j.value("file", "");
  s.kind = kind_from_name(j.value("kind", "executable"));
  s.args = j.value("args", std::vector<std::string>{});
  s.workdir = j.value("workdir", "");
  s.accelerator = j.value("accelerator", "cpu");
  s.backend = j.value("backend", "local");
  s.context_sha256 = j.value("context_sha256", "");
  s.context_uri = j.value("context_uri", "");
  s.image = j.value("image", "");
  if (j.contains("env"))
    for (const auto& e : j["env"]) s.env.emplace_back(e.value("name", ""), e.value("value", ""));
  s.secret_env = j.value("secret_env", std::vector<std::string>{});
  if (j.contains("data") && j["data"].is_array())
    for (const auto& m : j["data"]) s.data.push_back(data_mount_from_json(m));
  if (j.contains("timeout_seconds") && j["timeout_seconds"].is_number())
    s.timeout_seconds = j["timeout_seconds"].get<long>();
  s.timeout_from = j.value("timeout_from", "");
  if (j.contains("max_cost_usd") && j["max_cost_usd"].is_number())
    s.max_cost_usd = j["max_cost_usd"].get<double>();
  if (j.contains("budget_seconds") && j["budget_seconds"].is_number())
    s.budget_seconds = j["budget_seconds"].get<long>();
  s.price_per_hour = j.value("price_per_hour", 0.0);
  s.hold_on_failure_seconds = j.value("hold_on_failure_seconds", 0L);
  s.retries = j.value("retries", 0);
  s.slices = j.value("slices", 1);
  s.priority = j.value("priority", "");
  s.max_preemptions = j.value("max_preemptions", 10);
  s.checkpoint_sync_seconds = j.value("checkpoint_sync_seconds", 10.0);
  s.log_upload_seconds = j.value("log_upload_seconds", 5.0);
  s.follower_timeout_seconds = j.value("follower_timeout_seconds", 0.0);
  s.keep = j.value("keep", false);
  s.detached = j.value("detached", false);
  s.output_dir = j.value("output_dir", "");
  s.created = j.value("created", "");
  if (j.contains("inputs") && j["inputs"].is_array())
    for (const auto& in : j["inputs"])
      s.inputs.emplace_back(in.value("name", ""), in.value("location", ""));
  if (j.contains("function") && j["function"].is_object()) {
    const auto& f = j["function"];
    s.function = FunctionCall{.name = f.value("name", ""),
                              .sha256 = f.value("sha256", ""),
                              .bytes = f.value("bytes", 0LL),
                              .runner_sha256 = f.value("runner_sha256", ""),
                              .local_path = ""};
  }
  s.labels = labels_from_json(j.value("labels", nlohmann::json::object()));
  if (j.contains("debug") && j["debug"].is_object()) s.debug = debug_spec_from_json(j["debug"]);
  if (j.contains("serve") && j["serve"].is_object())
    s.serve = ServeSpec{.port = j["serve"].value("port", 0),
                        .idle_stop_seconds = j["serve"].value("idle_stop_seconds", 0L)};
  return s;
}

nlohmann::json labels_json(const std::vector<std::pair<std::string, std::string>>& labels) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

std::vector<std::pair<std::string, std::string>> labels_from_json(const nlohmann::json& j) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items())
    if (v.is_string()) out.emplace_back(k, v.get<std::string>());
  return out;
}

std::pair<std::string, std::string> parse_label(std::string_view value, std::string_view flag) {
  const std::string given = std::string(flag) + " '" + std::string(value) + "'";
  const size_t eq = value.find('=');
  if (eq == std::string_view::npos)
    throw Error(Errc::usage,
                given + ": expected KEY=VALUE, e.g. " + std::string(flag) + " team=vision");
  const std::string key(value.substr(0, eq));
  const std::string val(value.substr(eq + 1));
  auto key_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' ||
           c == '-';
  };
  if (key.empty() || key.size() > 63 || !std::isalnum(static_cast<unsigned char>(key[0])) ||
      !std::all_of(key.begin(), key.end(), key_char))
    throw Error(Errc::usage, given +
                                 ": the key must be 1-63 letters, digits, '.', '_', '/' or '-', "
                                 "starting with a letter or digit");
  const bool control = std::any_of(val.begin(), val.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (val.size() > 256 || control || !is_utf8(val))
    throw Error(Errc::usage,
                given + ": the value must be at most 256 characters of text, on one line");
  return {key, val};
}

std::string new_job_id() {
  unsigned char bytes[4];
  if (::getrandom(bytes, sizeof bytes, 0) != sizeof bytes) {
    auto t = std::chrono::steady_clock::now().time_since_epoch().count();
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<unsigned char>(t >> (8 * i));
  }
  static const char* hex = "0123456789abcdef";
  std::string id = "job-";
  for (unsigned char b : bytes) {
    id += hex[b >> 4];
    id += hex[b & 15];
  }
  return id;
}

void require_job_id(const std::string& id) {
  if (looks_like_job_id(id)) return;
  std::string message = "'" + id + "' is not a job id; ids look like job-1a2b3c4d";
  if (looks_like_job_id("job-" + to_lower(id)))
    message += " (did you mean job-" + to_lower(id) + "?)";
  throw Error(Errc::usage, message + "; run `kinetic status` to list jobs");
}

bool looks_like_id(std::string_view s, std::string_view prefix) {
  if (s.size() != prefix.size() + 8 || !starts_with(s, prefix)) return false;
  for (size_t i = prefix.size(); i < s.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i])) || std::isupper(s[i])) return false;
  return true;
}

bool looks_like_job_id(const std::string& s) {
  return looks_like_id(s, "job-");
}

}  // namespace kinetic
