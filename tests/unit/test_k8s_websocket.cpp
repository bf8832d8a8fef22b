// WebSocket framing (k8s/websocket.h): the RFC's handshake example, frames of each length form
// masked and not, byte-at-a-time parsing, fragmented messages with control frames between them,
// and every protocol error the parser must refuse.
#include <gtest/gtest.h>

#include <string>

#include "k8s/websocket.h"

namespace kinetic::k8s::ws {
namespace {

std::string hex(const std::array<uint8_t, 20>& d) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

TEST(WebSocket, Sha1MatchesKnownDigests) {
  EXPECT_EQ(hex(sha1("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(hex(sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  // 56 bytes: the padding spills into a second block.
  EXPECT_EQ(hex(sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

TEST(WebSocket, AcceptValueIsTheRfcExample) {
  EXPECT_EQ(accept_value("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocket, ShortFrameFromTheServerIsUnmasked) {
  EXPECT_EQ(encode_frame(Opcode::text, "Hello"), std::string("\x81\x05Hello"));
}

TEST(WebSocket, MaskedFrameIsTheRfcExample) {
  const std::string frame = encode_frame(Opcode::text, "Hello", true, {{0x37, 0xfa, 0x21, 0x3d}});
  EXPECT_EQ(frame, std::string("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11));
  FrameParser p(/*expect_masked=*/true);
  p.feed(frame);
  auto f = p.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->payload, "Hello");
  EXPECT_EQ(f->opcode, Opcode::text);
}

TEST(WebSocket, EachLengthFormRoundTripsByteByByte) {
  for (size_t n : {0u, 125u, 126u, 65535u, 65536u, 70000u}) {
    std::string payload(n, 'x');
    for (size_t i = 0; i < n; ++i) payload[i] = static_cast<char>(i * 7);
    for (bool masked : {false, true}) {
      std::optional<std::array<uint8_t, 4>> mask;
      if (masked) mask = std::array<uint8_t, 4>{1, 2, 3, 4};
      const std::string frame = encode_frame(Opcode::binary, payload, true, mask);
      // The length field: 7 bits, 16 bits after 126, 64 bits after 127.
      const size_t header = (n < 126 ? 2 : n <= 65535 ? 4 : 10) + (masked ? 4 : 0);
      EXPECT_EQ(frame.size(), header + n);
      FrameParser p(masked);
      std::optional<Frame> f;
      for (size_t i = 0; i < frame.size(); ++i) {
        ASSERT_FALSE(f) << "a frame before its last byte, n=" << n;
        p.feed(frame.substr(i, 1));
        f = p.next();
      }
      ASSERT_TRUE(f) << n;
      EXPECT_EQ(f->payload, payload) << n;
      EXPECT_EQ(p.buffered(), 0u);
    }
  }
}

TEST(WebSocket, FragmentsJoinWithControlFramesBetween) {
  MessageReader r(/*expect_masked=*/false);
  r.feed(encode_frame(Opcode::binary, "\x01hel", false));
  r.feed(encode_frame(Opcode::ping, "p"));
  r.feed(encode_frame(Opcode::continuation, "lo ", false));
  r.feed(encode_frame(Opcode::continuation, "world", true));
  r.feed(encode_frame(Opcode::close, close_payload(1000)));
  auto ping = r.next();
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->opcode, Opcode::ping);
  EXPECT_EQ(ping->payload, "p");
  auto m = r.next();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->opcode, Opcode::binary);
  EXPECT_EQ(m->payload, "\x01hello world");
  auto close = r.next();
  ASSERT_TRUE(close);
  EXPECT_EQ(close->opcode, Opcode::close);
  EXPECT_EQ(close->payload, std::string("\x03\xe8", 2));
  EXPECT_FALSE(r.next());
}

void expect_refused(const std::string& bytes, bool expect_masked, const char* why) {
  MessageReader r(expect_masked);
  r.feed(bytes);
  EXPECT_THROW(
      {
        while (r.next()) {
        }
      },
      ProtocolError)
      << why;
}

TEST(WebSocket, ProtocolErrorsAreRefused) {
  expect_refused(std::string("\xc2\x00", 2), false, "reserved bit RSV1");
  expect_refused(std::string("\x83\x00", 2), false, "opcode 3");
  expect_refused(encode_frame(Opcode::binary, "x", true, {{1, 2, 3, 4}}), false,
                 "a masked frame to a client");
  expect_refused(encode_frame(Opcode::binary, "x"), true, "an unmasked frame to a server");
  expect_refused(encode_frame(Opcode::ping, "x", false), false, "a fragmented ping");
  expect_refused(encode_frame(Opcode::ping, std::string(126, 'x')), false, "a 126-byte ping");
  expect_refused(std::string("\x82\x7e\x00\x05hello", 9), false, "5 in the 16-bit form");
  expect_refused(std::string("\x82\x7f\x00\x00\x00\x00\x00\x00\x01\x00", 10), false,
                 "256 in the 64-bit form");
  expect_refused(std::string("\x82\x7f\x80\x00\x00\x00\x00\x00\x00\x00", 10), false,
                 "the 64-bit length's top bit");
  expect_refused(std::string("\x82\x7f\x00\x00\x00\x01\x00\x00\x00\x00", 10), false,
                 "4 GiB, over kMaxMessage, refused before any allocation");
  expect_refused(encode_frame(Opcode::continuation, "x"), false, "a continuation of nothing");
  expect_refused(encode_frame(Opcode::text, "a", false) + encode_frame(Opcode::text, "b"), false,
                 "a new message inside a fragmented one");
}

}  // namespace
}  // namespace kinetic::k8s::ws
