#include "backend/local/port_activity.h"

#include <cstdlib>
#include <string>

#include "core/duration.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/strings.h"

namespace kinetic {

namespace {

// The state column's values (the kernel's include/net/tcp_states.h, in hex): TCP_ESTABLISHED
// and TCP_LISTEN.
constexpr std::string_view kEstablished = "01";
constexpr std::string_view kListen = "0A";

// The whitespace-separated fields of one line of a /proc/net/tcp table.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

PortUse port_use(std::string_view table, int port) {
  PortUse use;
  size_t at = 0;
  while (at < table.size()) {
    size_t end = table.find('\n', at);
    if (end == std::string_view::npos) end = table.size();
    const std::vector<std::string_view> f = fields_of(table.substr(at, end - at));
    at = end + 1;
    // "sl local_address rem_address st ...": local_address is ADDRESS:PORT in hex.
    if (f.size() < 4) continue;
    const size_t colon = f[1].rfind(':');
    if (colon == std::string_view::npos) continue;
    const std::string hex(f[1].substr(colon + 1));
    if (std::strtol(hex.c_str(), nullptr, 16) != port) continue;
    if (f[3] == kListen) use.listening = true;
    if (f[3] == kEstablished) ++use.connections;
  }
  return use;
}

PortUse port_use(int port) {
  PortUse use;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::optional<std::string> text;
    try {
      text = read_file(table);
    } catch (const Error&) {
      continue;  // unreadable: nothing learned from it
    }
    if (!text) continue;  // no IPv6 on this machine: its table is absent
    const PortUse in_table = port_use(*text, port);
    use.listening = use.listening || in_table.listening;
    use.connections += in_table.connections;
  }
  return use;
}

IdleWatch::IdleWatch(double idle_after_seconds, std::function<PortUse()> use)
    : idle_after_(idle_after_seconds), use_(std::move(use)) {}

bool IdleWatch::idle(double now) {
  if (last_sample_ < 0 || now - last_sample_ >= 1.0) {
    last_sample_ = now;
    const PortUse use = use_();
    if ((use.listening && !last_active_) || use.connections > 0) last_active_ = now;
  }
  return last_active_ && now - *last_active_ >= idle_after_;
}

StoppedVerdict idle_verdict(long idle_after_seconds) {
  StoppedVerdict v = cancelled_verdict();
  v.error = "stopped after " + format_duration(static_cast<double>(idle_after_seconds)) +
            " without a request (--idle-stop)";
  return v;
}

}  // namespace kinetic
