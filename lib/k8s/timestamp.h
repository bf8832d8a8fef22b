// RFC 3339 times as Kubernetes writes them: "2025-01-02T03:04:05Z" in objects and events,
// "2025-01-02T03:04:05.123456789Z" (RFC 3339 nano, trailing zeros trimmed) in timestamped logs.
// Compared as numbers: ".1Z" is earlier than ".123Z" although it sorts later as text.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kinetic::k8s {

struct Timestamp {
  int64_t seconds = 0;  // since the Unix epoch, UTC
  int32_t nanos = 0;
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

// "YYYY-MM-DDTHH:MM:SS[.F{1,9}](Z|±HH:MM)"; nullopt for anything else.
std::optional<Timestamp> parse_timestamp(std::string_view text);

}  // namespace kinetic::k8s
