#include "core/duration.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/error.h"

namespace kinetic {

long parse_duration(std::string_view text, std::string_view flag) {
  auto bad = [&]() -> Error {
    return Error(Errc::usage, "invalid duration '" + std::string(text) + "' for " +
                                  std::string(flag) + "; use e.g. 90s, 30m, 2h or 1d");
  };
  if (text.empty()) throw bad();
  long total = 0;
  size_t i = 0;
  bool any_unit = false;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) throw bad();
    long n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      n = n * 10 + (text[i] - '0');
      if (n > 100L * 365 * 86400) throw bad();
      ++i;
    }
    long unit = 1;
    if (i < text.size()) {
      switch (text[i]) {
        case 's':
          unit = 1;
          break;
        case 'm':
          unit = 60;
          break;
        case 'h':
          unit = 3600;
          break;
        case 'd':
          unit = 86400;
          break;
        default:
          throw bad();
      }
      ++i;
      any_unit = true;
    } else if (any_unit) {
      throw bad();  // "1h30" is ambiguous
    }
    total += n * unit;
  }
  return total;
}

std::string format_elapsed(double seconds) {
  long s = static_cast<long>(seconds);
  return s < 60 ? std::to_string(s) + "s"
                : std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
}

std::string format_duration(double seconds) {
  char buf[32];
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  } else if (seconds < 3600) {
    long s = std::lround(seconds);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else if (seconds < 86400) {
    long m = std::lround(seconds / 60);
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", m / 60, m % 60);
  } else {
    long h = std::lround(seconds / 3600);
    std::snprintf(buf, sizeof buf, "%ldd%ldh", h / 24, h % 24);
  }
  return buf;
}

std::string rfc3339(double unix_seconds) {
  time_t secs = static_cast<time_t>(std::floor(unix_seconds));
  int ms = static_cast<int>((unix_seconds - static_cast<double>(secs)) * 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, ms);
  return out;
}

double parse_rfc3339(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return 0;
  double frac = 0;
  if (*rest == '.') {
    double scale = 0.1;
    for (++rest; *rest >= '0' && *rest <= '9'; ++rest, scale /= 10) frac += (*rest - '0') * scale;
  }
  return static_cast<double>(timegm(&tm)) + frac;
}

double now_unix() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace kinetic
