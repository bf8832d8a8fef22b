#include "k8s/websocket.h"

#include "core/checksum.h"

namespace kinetic::k8s::ws {
namespace {

constexpr std::string_view kAcceptGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

uint32_t rotl(uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

bool known_opcode(uint8_t op) {
  return op <= 0x2 || (op >= 0x8 && op <= 0xA);
}

}  // namespace

std::array<uint8_t, 20> sha1(std::string_view data) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string m(data);
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  m.push_back(static_cast<char>(0x80));
  while (m.size() % 64 != 56) m.push_back('\0');
  for (int i = 7; i >= 0; --i) m.push_back(static_cast<char>((bits >> (i * 8)) & 0xFF));
  for (size_t block = 0; block < m.size(); block += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const unsigned char*>(m.data() + block + i * 4);
      w[i] = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20) {
        f = (b & c) | (~b & d);
        k = 0x5A827999;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ED9EBA1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8F1BBCDC;
      } else {
        f = b ^ c ^ d;
        k = 0xCA62C1D6;
      }
      const uint32_t t = rotl(a, 5) + f + e + k + w[i];
      e = d;
      d = c;
      c = rotl(b, 30);
      b = a;
      a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
  }
  std::array<uint8_t, 20> out{};
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) out[i * 4 + j] = static_cast<uint8_t>(h[i] >> (24 - 8 * j));
  return out;
}

std::string accept_value(std::string_view key) {
  const auto digest = sha1(std::string(key) + std::string(kAcceptGuid));
  return base64_encode(std::string_view(reinterpret_cast<const char*>(digest.data()), 20));
}

std::string encode_frame(Opcode opcode, std::string_view payload, bool fin,
                         const std::optional<std::array<uint8_t, 4>>& mask) {
  std::string out;
  out.reserve(payload.size() + 14);
  out.push_back(static_cast<char>((fin ? 0x80 : 0) | static_cast<uint8_t>(opcode)));
  const uint8_t mask_bit = mask ? 0x80 : 0;
  const uint64_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(mask_bit | n));
  } else if (n <= 0xFFFF) {
    out.push_back(static_cast<char>(mask_bit | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xFF));
  } else {
    out.push_back(static_cast<char>(mask_bit | 127));
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((n >> (i * 8)) & 0xFF));
  }
  if (!mask) return out.append(payload);
  for (uint8_t b : *mask) out.push_back(static_cast<char>(b));
  for (size_t i = 0; i < payload.size(); ++i)
    out.push_back(static_cast<char>(static_cast<uint8_t>(payload[i]) ^ (*mask)[i % 4]));
  return out;
}

std::string close_payload(uint16_t code, std::string_view reason) {
  std::string out;
  out.push_back(static_cast<char>(code >> 8));
  out.push_back(static_cast<char>(code & 0xFF));
  return out.append(reason.substr(0, 123));
}

std::optional<Frame> FrameParser::next() {
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  const size_t have = buffer_.size() - offset_;
  if (have < 2) return std::nullopt;
  const uint8_t b0 = p[0], b1 = p[1];
  if (b0 & 0x70) throw ProtocolError("a WebSocket frame with reserved bits set");
  const uint8_t op = b0 & 0x0F;
  if (!known_opcode(op))
    throw ProtocolError("a WebSocket frame with unknown opcode " + std::to_string(op));
  const bool fin = (b0 & 0x80) != 0;
  const bool masked = (b1 & 0x80) != 0;
  if (masked != expect_masked_)
    throw ProtocolError(expect_masked_ ? "an unmasked WebSocket frame from a client"
                                       : "a masked WebSocket frame from the server");
  uint64_t length = b1 & 0x7F;
  size_t header = 2;
  if (length == 126) {
    if (have < 4) return std::nullopt;
    length = (uint64_t{p[2]} << 8) | p[3];
    if (length < 126) throw ProtocolError("a WebSocket frame length not in its shortest form");
    header = 4;
  } else if (length == 127) {
    if (have < 10) return std::nullopt;
    length = 0;
    for (int i = 0; i < 8; ++i) length = (length << 8) | p[2 + i];
    if (length >> 63) throw ProtocolError("a WebSocket frame length with its top bit set");
    if (length <= 0xFFFF) throw ProtocolError("a WebSocket frame length not in its shortest form");
    header = 10;
  }
  const Opcode opcode = static_cast<Opcode>(op);
  if (is_control(opcode) && (!fin || length > 125))
    throw ProtocolError("a WebSocket control frame fragmented or over 125 bytes");
  if (length > kMaxMessage)
    throw ProtocolError("a WebSocket frame of " + std::to_string(length) + " bytes (at most " +
                        std::to_string(kMaxMessage) + ")");
  const size_t mask_at = header;
  if (masked) header += 4;
  if (have < header + length) return std::nullopt;
  Frame f;
  f.fin = fin;
  f.opcode = opcode;
  f.payload.assign(reinterpret_cast<const char*>(p + header), static_cast<size_t>(length));
  if (masked)
    for (size_t i = 0; i < f.payload.size(); ++i)
      f.payload[i] ^= static_cast<char>(p[mask_at + i % 4]);
  offset_ += header + static_cast<size_t>(length);
  // Drop what was consumed once it is worth a copy.
  if (offset_ > 65536 && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return f;
}

std::optional<Message> MessageReader::next() {
  while (auto f = frames_.next()) {
    if (is_control(f->opcode)) return Message{f->opcode, std::move(f->payload)};
    if (f->opcode == Opcode::continuation) {
      if (!partial_)
        throw ProtocolError("a WebSocket continuation frame with no message to continue");
      if (partial_->payload.size() + f->payload.size() > kMaxMessage)
        throw ProtocolError("a WebSocket message over " + std::to_string(kMaxMessage) + " bytes");
      partial_->payload += f->payload;
    } else {
      if (partial_) throw ProtocolError("a new WebSocket message before the last one ended");
      partial_ = Message{f->opcode, std::move(f->payload)};
    }
    if (f->fin) {
      Message m = std::move(*partial_);
      partial_.reset();
      return m;
    }
  }
  return std::nullopt;
}

}  // namespace kinetic::k8s::ws
