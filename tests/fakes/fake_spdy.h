// SPDY/3.1 as the fake kubelet needs it to serve `kubectl port-forward`'s fallback (a SPDY
// upgrade of pods/portforward, kubernetes pkg/kubelet/cri/streaming/portforward/httpstream.go):
// frames parsed and written (draft 3: control frames SYN_STREAM, SYN_REPLY, RST_STREAM,
// SETTINGS, PING, GOAWAY, WINDOW_UPDATE; DATA), and the name/value header blocks, zlib-compressed
// with the draft's dictionary, one compression context per direction for the whole connection.
// Pure: bytes in, bytes out; the session is fake_kube_port_forward.cpp's.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kinetic::fakes::spdy {

inline constexpr uint16_t kSynStream = 1;
inline constexpr uint16_t kSynReply = 2;
inline constexpr uint16_t kRstStream = 3;
inline constexpr uint16_t kPing = 6;
inline constexpr uint16_t kGoAway = 7;
inline constexpr uint8_t kFlagFin = 0x01;

struct Frame {
  bool control = false;
  uint16_t type = 0;       // control frames
  uint32_t stream_id = 0;  // data frames, and the control frames that name a stream
  uint8_t flags = 0;
  std::string payload;  // after the 8-byte header
};

// Frames out of a byte stream that arrives in pieces.
class FrameReader {
 public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame, or nullopt until more bytes come.
  std::optional<Frame> next();

 private:
  std::string buffer_;
};

// SPDY/3's header-compression dictionary (draft 3 §2.6.10.1).
const std::string& dictionary();

// The header blocks of one direction of one connection.
class HeaderInflater {
 public:
  HeaderInflater();
  ~HeaderInflater();
  HeaderInflater(const HeaderInflater&) = delete;
  HeaderInflater& operator=(const HeaderInflater&) = delete;
  // BLOCK's name/value pairs (names as sent, lower-case); nullopt when it is not a valid block.
  std::optional<std::map<std::string, std::string>> inflate(std::string_view block);

 private:
  z_stream z_{};
};

class HeaderDeflater {
 public:
  HeaderDeflater();
  ~HeaderDeflater();
  HeaderDeflater(const HeaderDeflater&) = delete;
  HeaderDeflater& operator=(const HeaderDeflater&) = delete;
  std::string deflate(const std::map<std::string, std::string>& headers);

 private:
  z_stream z_{};
};

// A control frame of TYPE with FLAGS and PAYLOAD, version 3.
std::string control_frame(uint16_t type, uint8_t flags, std::string_view payload);
// A DATA frame on STREAM (FIN with flags kFlagFin).
std::string data_frame(uint32_t stream, uint8_t flags, std::string_view data);
// SYN_REPLY on STREAM with the compressed BLOCK.
std::string syn_reply(uint32_t stream, std::string_view block);

// The stream id of a SYN_STREAM, SYN_REPLY or RST_STREAM payload, and a SYN_STREAM's header
// block (after its 10 bytes of ids, priority and slot).
uint32_t stream_of(std::string_view payload);
std::string_view syn_stream_block(std::string_view payload);

}  // namespace kinetic::fakes::spdy
