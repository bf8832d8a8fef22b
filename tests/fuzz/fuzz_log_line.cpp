// Timestamped pod logs (k8s/log_follower.h, k8s/timestamp.h): arbitrary bytes as a followed log.
// NUL bytes cut it into connections: each but the last is dropped mid-stream and followed again
// from the last line delivered (sinceTime), then the end is confirmed with one more read. Every
// line is also split and its timestamp parsed on its own. Each delivered line ends in its one
// '\n'.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "k8s/log_follower.h"
#include "k8s/timestamp.h"
#include "stream_transport.h"
#include "support.h"

using namespace kinetic;

namespace {

void check_line(std::string_view line) {
  k8s::TimestampedLine split = k8s::split_log_timestamp(line);
  if (!split.time) {
    fuzz::check(split.text == line, "a line without a timestamp is kept whole");
    return;
  }
  fuzz::check(split.time->nanos >= 0 && split.time->nanos < 1'000'000'000, "nanos in range");
  fuzz::check(k8s::parse_timestamp(split.stamp) == split.time, "the stamp parses the same");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view log = fuzz::text(data, size);
  std::vector<fuzz::StreamTransport::Body> bodies;
  for (std::string_view rest = log;;) {
    size_t cut = rest.find('\0');
    bodies.push_back({rest.substr(0, cut), cut != std::string_view::npos});
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + 1);
  }
  for (const auto& body : bodies) {
    for (std::string_view rest = body.bytes; !rest.empty();) {
      size_t nl = rest.find('\n');
      check_line(rest.substr(0, nl));
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
  }
  (void)k8s::parse_timestamp(log);

  fuzz::StreamTransport transport(std::move(bodies));
  k8s::Client client(transport, "https://127.0.0.1:6443");
  k8s::FollowOptions options;
  options.wait = [](int attempt) { return attempt < 100; };
  options.finished = [] { return true; };
  k8s::follow_pod_log(client, "default", "kinetic-job-1-0", options, [](std::string_view line) {
    fuzz::check(!line.empty() && line.find('\n') == line.size() - 1, "one line, one '\\n'");
  });
  return 0;
}
