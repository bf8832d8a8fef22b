// Durations as users type them: "90", "90s", "5m", "2h", "1d", "1h30m".
#pragma once

#include <string>
#include <string_view>

namespace kinetic {

// Seconds; throws Error(Errc::usage) naming FLAG for anything else.
long parse_duration(std::string_view text, std::string_view flag);
// "1.2s", "3m04s", "2h05m", "3d4h" for display.
std::string format_duration(double seconds);
// Whole seconds waited so far, for progress lines: "42s", "3m5s".
std::string format_elapsed(double seconds);

// RFC 3339 UTC with seconds, from a Unix time in seconds (fractional part kept to ms).
std::string rfc3339(double unix_seconds);
// The Unix time of an RFC 3339 UTC time ("2026-11-27T10:00:00.5Z", as the APIs and rfc3339
// write it); 0 for text that is not one.
double parse_rfc3339(const std::string& text);
// Now, in Unix seconds.
double now_unix();

}  // namespace kinetic
