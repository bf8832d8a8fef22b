#include "backend/process_identity.h"

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "core/strings.h"

namespace kinetic {
namespace {

std::optional<std::string> read_quietly(const std::string& path) {
  try {
    return read_file(path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  auto stat = read_quietly("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  // "PID (COMM) STATE PPID PGRP SESSION ...": COMM may hold spaces and parentheses, so the
  // fields start after the last ')'.
  auto close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return std::nullopt;
  auto fields = split(std::string_view(*stat).substr(close + 2), ' ');
  // fields[0] is field 3 (state); field N is fields[N - 3].
  if (fields.size() < 20 || fields[0].empty()) return std::nullopt;
  ProcStat s;
  s.state = fields[0][0];
  if (!parse_number(fields[2], s.pgrp) || !parse_number(fields[3], s.session) ||
      !parse_number(fields[19], s.start)) {
    return std::nullopt;
  }
  return s;
}

std::string current_boot_id() {
  auto id = read_quietly("/proc/sys/kernel/random/boot_id");
  if (!id) return "";
  while (!id->empty() && (id->back() == '\n' || id->back() == ' ')) id->pop_back();
  return *id;
}

std::string process_start_time(pid_t pid) {
  auto s = read_proc_stat(pid);
  if (!s || s->state == 'Z' || s->state == 'X') return "";
  return std::to_string(s->start);
}

bool is_recorded_process(pid_t pid, const std::string& start_time, const std::string& boot_id) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  if (boot_id != current_boot_id()) return false;
  const std::string started = process_start_time(pid);
  return !started.empty() && started == start_time;
}

ProcessGroupRecord record_process_group(pid_t pgid) {
  ProcessGroupRecord r;
  r.pgid = pgid;
  // A leader that already exited is a zombie until reaped, and still tells its start time.
  if (auto s = read_proc_stat(pgid)) {
    r.leader_start = s->start;
    r.session = s->session;
  }
  r.boot_id = current_boot_id();
  return r;
}

bool kill_recorded_group(const ProcessGroupRecord& group) {
  if (group.empty() || group.session < 0 || group.leader_start <= 0 || group.boot_id.empty()) {
    return false;
  }
  if (group.boot_id != current_boot_id()) return false;
  bool any = false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    pid_t pid = 0;
    if (!parse_number(entry.path().filename().string(), pid)) continue;
    auto s = read_proc_stat(pid);
    if (!s || s->pgrp != group.pgid) continue;
    if (s->session != group.session || s->start < group.leader_start) return false;
    if (pid == group.pgid && s->start != group.leader_start) return false;
    any = true;
  }
  return any && ::kill(-static_cast<pid_t>(group.pgid), SIGKILL) == 0;
}

nlohmann::ordered_json this_process_runner() {
  const pid_t pid = ::getpid();
  return {{"pid", pid}, {"start_time", process_start_time(pid)}, {"boot_id", current_boot_id()}};
}

bool process_runner_alive(const nlohmann::ordered_json& runner) {
  if (!runner.is_object() || !runner.contains("pid")) return false;
  return is_recorded_process(runner.value("pid", 0), runner.value("start_time", ""),
                             runner.value("boot_id", ""));
}

bool wake_process_runner(const nlohmann::ordered_json& runner) {
  if (!process_runner_alive(runner)) return false;
  return ::kill(runner.value("pid", 0), SIGTERM) == 0;
}

}  // namespace kinetic
