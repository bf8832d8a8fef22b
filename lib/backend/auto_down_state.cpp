#include "backend/auto_down_state.h"

#include <ctime>

#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

namespace {

// "14:03" in the local time zone; "Nov 24 14:03" when not within the last day.
std::string clock_text(double when, double now) {
  const time_t t = static_cast<time_t>(when);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, now - when < 20 * 3600 ? "%H:%M" : "%b %d %H:%M", &tm);
  return buf;
}

}  // namespace

// "2h", "1h12m", "45m", "1d2h": a period as a person says it.
std::string auto_down_period_text(long seconds) {
  const long minutes = (seconds + 59) / 60;
  const long d = minutes / 1440, h = minutes % 1440 / 60, m = minutes % 60;
  std::string out;
  if (d > 0) out += std::to_string(d) + "d";
  if (h > 0) out += std::to_string(h) + "h";
  if (m > 0 && d == 0) out += std::to_string(m) + "m";
  return out.empty() ? "0m" : out;
}

long parse_auto_down(const std::string& text, const std::string& source) {
  if (to_lower(std::string(trim(text))) == "off") return 0;
  const long seconds = parse_duration(trim(text), source);
  if (seconds < kAutoDownMinSeconds)
    throw Error(Errc::usage, source + " " + text + " is too short: the cluster is checked every " +
                                 "5 minutes, so give at least 10m (or off)");
  return seconds;
}

std::string auto_down_text(const AutoDownState& s, double now) {
  const std::string period = auto_down_period_text(s.idle_seconds);
  std::string text;
  if (s.state == "error") {
    text = "auto-down failed at its last check: " + s.message;
  } else if (s.state == "deleting") {
    text = "auto-down is deleting the cluster" +
           (s.idle_since ? " (idle since " + clock_text(*s.idle_since, now) + ")" : "");
  } else if (s.state == "idle" && s.deletes_at && s.idle_since) {
    const double left = *s.deletes_at - now;
    text = (left > 0 ? "auto-down in " + auto_down_period_text(static_cast<long>(left))
                     : "auto-down due now") +
           " (idle since " + clock_text(*s.idle_since, now) + ")";
  } else if (s.state == "active") {
    text = "auto-down after " + period + " idle (a job is pending or running)";
  } else {
    text = "auto-down after " + period + " idle (first check within 5 minutes)";
  }
  // What its last check could not do besides (an idle-stopped server's Deployment it may not
  // delete, auto_down.py): the decision stands, the line says so.
  if (s.state != "error" && !s.message.empty()) text += "; its last check: " + s.message;
  // A CronJob that stopped running would never delete anything: say so.
  if (s.checked_at && now - *s.checked_at > 15 * 60)
    text +=
        "; last check " + auto_down_period_text(static_cast<long>(now - *s.checked_at)) + " ago";
  return text;
}

}  // namespace kinetic
