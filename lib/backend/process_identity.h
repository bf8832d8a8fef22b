// Who a recorded process is. A pid or process-group id written to disk names another process
// once the machine restarted or the number was reused, so the local backend never signals one
// without first proving it is still the process it recorded (docs/security.md).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kinetic {

// What /proc/PID/stat says of a process (proc(5)).
struct ProcStat {
  char state = '?';     // R, S, D, Z (zombie), X (dead)...
  long pgrp = 0;        // its process group
  long session = 0;     // its session
  long long start = 0;  // start time, in clock ticks since boot
};

// nullopt when there is no such process.
std::optional<ProcStat> read_proc_stat(pid_t pid);

// This boot's id (/proc/sys/kernel/random/boot_id), "" when unreadable.
std::string current_boot_id();

// The start time of a live (not zombie) process, as a string, "" when gone.
std::string process_start_time(pid_t pid);

// Whether PID is still the process recorded with START_TIME (process_start_time) in the boot
// BOOT_ID: a pid is reused, and after a reboot even at the same start time, so both must match.
bool is_recorded_process(pid_t pid, const std::string& start_time, const std::string& boot_id);

// A job's process group as recorded when its leader started: the leader's pid (= the group
// id), its start time and session, and the boot it ran in.
struct ProcessGroupRecord {
  long pgid = 0;
  long long leader_start = 0;
  // -1 when unknown. 0 is a real session: the one a process is in when everything above it,
  // up to an init that never called setsid(), stayed in the kernel's first session.
  long session = -1;
  std::string boot_id;

  bool empty() const { return pgid <= 0; }
};

// The record for the group PGID just created (its leader's pid) in this session.
ProcessGroupRecord record_process_group(pid_t pgid);

// SIGKILLs the recorded group only when it is provably the job's: this boot, a leader still
// alive started at the recorded tick, and every member is in the recorded session and started
// no earlier than the recorded leader. A group id is reused only once the job's whole group
// ended (the kernel never hands out an id still naming a group), so a stranger holding it has
// a leader that started later, or lives in another session, or at another boot. An incomplete
// record (an older kinetic's) is never acted on. True when a signal was sent.
bool kill_recorded_group(const ProcessGroupRecord& group);

// A pipeline's runner that is a process (pipeline records' `runner`): {pid, start_time,
// boot_id} of this one.
nlohmann::ordered_json this_process_runner();
// Whether RUNNER (as this_process_runner() wrote it) is that process, still running: false for
// one of another boot, or a record that names no process.
bool process_runner_alive(const nlohmann::ordered_json& runner);
// SIGTERM to that process; false when it is gone.
bool wake_process_runner(const nlohmann::ordered_json& runner);

}  // namespace kinetic
