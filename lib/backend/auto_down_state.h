// Idle auto-down as the commands read and show it (docs/cost.md): the period `up --auto-down` and
// the auto-down setting take, and what the in-cluster check recorded, as `status` says it. The
// check itself and its objects are GKE's: backend/gke/auto_down.h.
#pragma once

#include <optional>
#include <string>

namespace kinetic {

// The shortest period accepted: less would delete a cluster between a job's end and the next.
inline constexpr long kAutoDownMinSeconds = 10 * 60;

// What the script recorded, for `status`.
struct AutoDownState {
  long idle_seconds = 0;
  std::string state;  // "", "active", "idle", "deleting", "error"
  int active = 0;
  std::optional<double> idle_since, deletes_at, checked_at;  // Unix seconds
  std::string message;
};
// `--auto-down` / the context's auto-down setting: "off" (0) or a duration of at least
// kAutoDownMinSeconds; throws Error(Errc::usage) naming SOURCE otherwise.
long parse_auto_down(const std::string& text, const std::string& source);

// "2h", "1h12m", "45m", "1d2h": a period as a person says it.
std::string auto_down_period_text(long seconds);
// "auto-down in 1h12m (idle since 14:03)", "auto-down after 2h idle (1 job active)", ... NOW
// in Unix seconds; times shown in the local time zone.
std::string auto_down_text(const AutoDownState& state, double now);

}  // namespace kinetic
