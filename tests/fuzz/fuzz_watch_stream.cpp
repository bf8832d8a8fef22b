// The Kubernetes watch stream (k8s/client.h, Client::watch): arbitrary bytes as the body of a
// watch, cut into chunks anywhere, ending cleanly or (odd sizes) dropped. Events are framed by
// newlines; anything wrong with them is an Error, never another exception.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "k8s/client.h"
#include "stream_transport.h"
#include "support.h"

using namespace kinetic;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::StreamTransport transport({{fuzz::text(data, size), size % 2 == 1}});
  k8s::Client client(transport, "https://127.0.0.1:6443");
  try {
    client.watch(k8s::pods_path("default"), "kinetic.dev/job=job-1", "100", 60,
                 [](const k8s::WatchEvent& event) { return event.type != "DELETED"; });
  } catch (const Error&) {
    // Malformed events, ERROR events and a drop before any byte: all reported as errors.
  }
  return 0;
}
