// Follows a pod's log to its end across cut connections: with timestamps=true each line carries
// its RFC 3339 nano time, so a reconnect asks for sinceTime=<last time> and drops the lines it
// already delivered — no line lost, none repeated (docs/gcp-api.md §7 "Log stream details").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "k8s/client.h"
#include "k8s/timestamp.h"

namespace kinetic::k8s {

struct FollowOptions {
  std::string container = "main";
  // RFC 3339: the first request asks only for the lines from this time on (`logs --since`).
  std::string since_time;
  // Called between reconnects (and while the container has not started yet); returning false
  // stops following. Tests inject a no-op; the CLI sleeps with backoff and checks for Ctrl-C.
  // ATTEMPT counts the reconnects since a line was last delivered, from 1. Null: sleeps
  // min(250 ms * 2^(attempt-1), 5 s) and never gives up.
  std::function<bool(int attempt)> wait;
  // Called when the stream ended cleanly: true when the container has exited, false to
  // reconnect. After true, one plain read from the last position confirms the end (a cleanly
  // cut stream loses nothing). Null: a clean end is the end.
  std::function<bool()> finished;
  // Asked after each delivered line: true when the caller knows the log is complete (kinetic's
  // bootstrap ends it with lines of its own, lib/backend/gke/log_end.h). The follow then ends at
  // once, the stream dropped: no FINISHED check, no confirming read. Null: never.
  std::function<bool()> complete;
};

// One line of a timestamps=true log: "2025-01-02T03:04:05.123456789Z text". Without a valid
// timestamp prefix, TIME is empty and TEXT is the whole line.
struct TimestampedLine {
  std::optional<Timestamp> time;
  std::string_view stamp;  // "2025-01-02T03:04:05.123456789Z"
  std::string_view text;   // after the one space
};
TimestampedLine split_log_timestamp(std::string_view line);

// Delivers each complete line (with its '\n', without the timestamp prefix) to ON_LINE, in
// order, exactly once. Returns when the container has exited and its log is drained, or when
// COMPLETE says so.
void follow_pod_log(Client& client, const std::string& ns, const std::string& pod,
                    const FollowOptions& options,
                    const std::function<void(std::string_view line)>& on_line);

}  // namespace kinetic::k8s
