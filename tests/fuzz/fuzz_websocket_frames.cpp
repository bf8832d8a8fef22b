// WebSocket frames (k8s/websocket.h), as `kinetic exec` reads the API server's and the fake reads
// a client's: arbitrary bytes, cut at the first byte's value, go to a frame parser and a message
// reader, masked and not. Only ProtocolError may escape; every frame parsed re-encodes to bytes
// that parse to the same frame; no message exceeds kMaxMessage.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "k8s/websocket.h"
#include "support.h"

using namespace kinetic::k8s;

namespace {

void frames(std::string_view bytes, bool masked, size_t cut) {
  ws::FrameParser parser(masked);
  try {
    parser.feed(bytes.substr(0, cut));
    for (size_t fed = cut;;) {
      auto f = parser.next();
      if (!f) {
        if (fed >= bytes.size()) break;
        parser.feed(bytes.substr(fed));
        fed = bytes.size();
        continue;
      }
      std::optional<std::array<uint8_t, 4>> mask;
      if (masked) mask = std::array<uint8_t, 4>{9, 8, 7, 6};
      ws::FrameParser again(masked);
      again.feed(ws::encode_frame(f->opcode, f->payload, f->fin, mask));
      auto g = again.next();
      kinetic::fuzz::check(g && g->payload == f->payload && g->opcode == f->opcode &&
                               g->fin == f->fin && again.buffered() == 0,
                           "a parsed frame re-encodes to itself");
    }
  } catch (const ws::ProtocolError&) {
  }
}

void messages(std::string_view bytes, bool masked) {
  ws::MessageReader reader(masked);
  try {
    reader.feed(bytes);
    while (auto m = reader.next())
      kinetic::fuzz::check(m->payload.size() <= ws::kMaxMessage, "a message within kMaxMessage");
  } catch (const ws::ProtocolError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t cut = size ? data[0] % (size + 1) : 0;
  for (bool masked : {false, true}) {
    frames(bytes, masked, cut);
    messages(bytes, masked);
  }
  return 0;
}
