// WebSocket framing (RFC 6455), as pure functions: the handshake's accept value, frames encoded and
// parsed, fragmented messages put back together. kinetic speaks it itself because Debian 12's
// libcurl (7.88) has no WebSocket API; k8s/exec.h carries `kubectl exec`'s channels over it, and
// the fake API server (tests/fakes) serves them with the same parser.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace kinetic::k8s::ws {

enum class Opcode : uint8_t {
  continuation = 0x0,
  text = 0x1,
  binary = 0x2,
  close = 0x8,
  ping = 0x9,
  pong = 0xA,
};

inline bool is_control(Opcode op) {
  return (static_cast<uint8_t>(op) & 0x8) != 0;
}

// The largest message either side accepts (a frame header may claim up to 2^63 bytes); a larger
// one is a protocol error, not an allocation.
inline constexpr uint64_t kMaxMessage = 16u << 20;

// A broken frame or message: the connection cannot go on (close code 1002, or 1009 too big).
class ProtocolError : public Error {
 public:
  explicit ProtocolError(std::string message) : Error(Errc::api, std::move(message)) {}
};

// Sec-WebSocket-Accept for the client's Sec-WebSocket-Key: base64(SHA-1(key + the RFC's GUID)).
std::string accept_value(std::string_view key);
// SHA-1 of DATA (20 bytes): the handshake needs it and nothing else here does.
std::array<uint8_t, 20> sha1(std::string_view data);

// One frame on the wire: FIN, OPCODE, PAYLOAD; masked with MASK (a client's frames must be, a
// server's must not be).
std::string encode_frame(Opcode opcode, std::string_view payload, bool fin = true,
                         const std::optional<std::array<uint8_t, 4>>& mask = std::nullopt);
// A close frame's payload: CODE (1000 normal) and a reason.
std::string close_payload(uint16_t code, std::string_view reason = {});

struct Frame {
  bool fin = true;
  Opcode opcode = Opcode::binary;
  std::string payload;  // unmasked
};

// Frames out of a byte stream that arrives in pieces of any size. EXPECT_MASKED: a server
// requires masked frames (from a client), a client unmasked ones.
class FrameParser {
 public:
  explicit FrameParser(bool expect_masked) : expect_masked_(expect_masked) {}
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame, or nullopt until more bytes come. Throws ProtocolError on reserved
  // bits, an unknown opcode, a wrong mask bit, a control frame fragmented or over 125 bytes, a
  // length not in its shortest form or over kMaxMessage.
  std::optional<Frame> next();
  size_t buffered() const { return buffer_.size() - offset_; }

 private:
  bool expect_masked_;
  std::string buffer_;
  size_t offset_ = 0;  // bytes of buffer_ already consumed
};

struct Message {
  Opcode opcode = Opcode::binary;  // text, binary, or a control opcode
  std::string payload;
};

// Whole messages: a data message's fragments joined (control frames may come between them, and
// are returned at once).
class MessageReader {
 public:
  explicit MessageReader(bool expect_masked) : frames_(expect_masked) {}
  void feed(std::string_view bytes) { frames_.feed(bytes); }
  // Throws ProtocolError for a continuation with no message started, a new message before the
  // last one ended, or a message over kMaxMessage.
  std::optional<Message> next();

 private:
  FrameParser frames_;
  std::optional<Message> partial_;
};

}  // namespace kinetic::k8s::ws
