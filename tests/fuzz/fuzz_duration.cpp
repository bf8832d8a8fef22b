// Durations (core/duration.h): parse_duration on arbitrary text; what parses is a non-negative
// number of seconds that format_duration, format_elapsed and rfc3339 can show.
#include <cstddef>
#include <cstdint>

#include "core/duration.h"
#include "core/error.h"
#include "support.h"

using namespace kinetic;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  long seconds = 0;
  try {
    seconds = parse_duration(fuzz::text(data, size), "--timeout");
  } catch (const Error& e) {
    fuzz::check(e.code() == Errc::usage, "parse_duration throws only Errc::usage");
    return 0;
  }
  fuzz::check(seconds >= 0, "a duration is not negative");
  (void)format_duration(static_cast<double>(seconds));
  (void)format_elapsed(static_cast<double>(seconds));
  (void)rfc3339(static_cast<double>(seconds));
  return 0;
}
