#include "fakes/fake_spdy.h"

#include <stdexcept>
#include <vector>

namespace kinetic::fakes::spdy {
namespace {

uint32_t big32(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

void put32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

// The frame header's 8 bytes: FIRST (the control bit and version and type, or the stream id),
// then the flags and a 24-bit length.
std::string frame_header(uint32_t first, uint8_t flags, size_t length) {
  std::string out;
  put32(out, first);
  out.push_back(static_cast<char>(flags));
  out.push_back(static_cast<char>((length >> 16) & 0xFF));
  out.push_back(static_cast<char>((length >> 8) & 0xFF));
  out.push_back(static_cast<char>(length & 0xFF));
  return out;
}

}  // namespace

std::optional<Frame> FrameReader::next() {
  if (buffer_.size() < 8) return std::nullopt;
  const uint32_t first = big32(buffer_, 0);
  const size_t length = (static_cast<size_t>(static_cast<unsigned char>(buffer_[5])) << 16) |
                        (static_cast<size_t>(static_cast<unsigned char>(buffer_[6])) << 8) |
                        static_cast<unsigned char>(buffer_[7]);
  if (buffer_.size() < 8 + length) return std::nullopt;
  Frame f;
  f.control = (first & 0x80000000u) != 0;
  if (f.control)
    f.type = static_cast<uint16_t>(first & 0xFFFF);
  else
    f.stream_id = first & 0x7FFFFFFFu;
  f.flags = static_cast<uint8_t>(buffer_[4]);
  f.payload = buffer_.substr(8, length);
  if (f.control && f.payload.size() >= 4 &&
      (f.type == kSynStream || f.type == kSynReply || f.type == kRstStream))
    f.stream_id = stream_of(f.payload);
  buffer_.erase(0, 8 + length);
  return f;
}

const std::string& dictionary() {
  // Draft 3 §2.6.10.1: these names and values, each after its 32-bit length, then the text.
  static const std::string dict = [] {
    const std::vector<std::string> words = {"options",
                                            "head",
                                            "post",
                                            "put",
                                            "delete",
                                            "trace",
                                            "accept",
                                            "accept-charset",
                                            "accept-encoding",
                                            "accept-language",
                                            "accept-ranges",
                                            "age",
                                            "allow",
                                            "authorization",
                                            "cache-control",
                                            "connection",
                                            "content-base",
                                            "content-encoding",
                                            "content-language",
                                            "content-length",
                                            "content-location",
                                            "content-md5",
                                            "content-range",
                                            "content-type",
                                            "date",
                                            "etag",
                                            "expect",
                                            "expires",
                                            "from",
                                            "host",
                                            "if-match",
                                            "if-modified-since",
                                            "if-none-match",
                                            "if-range",
                                            "if-unmodified-since",
                                            "last-modified",
                                            "location",
                                            "max-forwards",
                                            "pragma",
                                            "proxy-authenticate",
                                            "proxy-authorization",
                                            "range",
                                            "referer",
                                            "retry-after",
                                            "server",
                                            "te",
                                            "trailer",
                                            "transfer-encoding",
                                            "upgrade",
                                            "user-agent",
                                            "vary",
                                            "via",
                                            "warning",
                                            "www-authenticate",
                                            "method",
                                            "get",
                                            "status",
                                            "200 OK",
                                            "version",
                                            "HTTP/1.1",
                                            "url",
                                            "public",
                                            "set-cookie",
                                            "keep-alive",
                                            "origin"};
    std::string d;
    for (const auto& w : words) {
      put32(d, static_cast<uint32_t>(w.size()));
      d += w;
    }
    d += "100101201202205206300302303304305306307402405406407408409410411412413414415416417502"
         "504505203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad "
         "Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not "
         "Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec "
         "00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,"
         "image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,"
         "publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";
    return d;
  }();
  return dict;
}

HeaderInflater::HeaderInflater() {
  if (inflateInit(&z_) != Z_OK) throw std::runtime_error("inflateInit");
}
HeaderInflater::~HeaderInflater() {
  inflateEnd(&z_);
}

std::optional<std::map<std::string, std::string>> HeaderInflater::inflate(std::string_view block) {
  std::string out;
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(block.data()));
  z_.avail_in = static_cast<uInt>(block.size());
  char buf[4096];
  while (z_.avail_in > 0) {
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = sizeof buf;
    int rc = ::inflate(&z_, Z_SYNC_FLUSH);
    if (rc == Z_NEED_DICT) {
      const std::string& d = dictionary();
      if (inflateSetDictionary(&z_, reinterpret_cast<const Bytef*>(d.data()),
                               static_cast<uInt>(d.size())) != Z_OK)
        return std::nullopt;
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) return std::nullopt;
    out.append(buf, sizeof buf - z_.avail_out);
    if (rc == Z_BUF_ERROR && z_.avail_out != 0) break;
  }
  // The name/value block: a count, then each name and value after its 32-bit length.
  std::map<std::string, std::string> headers;
  if (out.size() < 4) return std::nullopt;
  const uint32_t count = big32(out, 0);
  size_t at = 4;
  for (uint32_t i = 0; i < count; ++i) {
    std::string pair[2];
    for (auto& part : pair) {
      if (at + 4 > out.size()) return std::nullopt;
      const uint32_t n = big32(out, at);
      at += 4;
      if (at + n > out.size()) return std::nullopt;
      part = out.substr(at, n);
      at += n;
    }
    headers[pair[0]] = pair[1];
  }
  return headers;
}

HeaderDeflater::HeaderDeflater() {
  if (deflateInit(&z_, Z_DEFAULT_COMPRESSION) != Z_OK) throw std::runtime_error("deflateInit");
  const std::string& d = dictionary();
  deflateSetDictionary(&z_, reinterpret_cast<const Bytef*>(d.data()), static_cast<uInt>(d.size()));
}
HeaderDeflater::~HeaderDeflater() {
  deflateEnd(&z_);
}

std::string HeaderDeflater::deflate(const std::map<std::string, std::string>& headers) {
  std::string plain;
  put32(plain, static_cast<uint32_t>(headers.size()));
  for (const auto& [name, value] : headers) {
    put32(plain, static_cast<uint32_t>(name.size()));
    plain += name;
    put32(plain, static_cast<uint32_t>(value.size()));
    plain += value;
  }
  std::string out;
  z_.next_in = reinterpret_cast<Bytef*>(plain.data());
  z_.avail_in = static_cast<uInt>(plain.size());
  char buf[4096];
  do {
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = sizeof buf;
    ::deflate(&z_, Z_SYNC_FLUSH);
    out.append(buf, sizeof buf - z_.avail_out);
  } while (z_.avail_out == 0);
  return out;
}

std::string control_frame(uint16_t type, uint8_t flags, std::string_view payload) {
  std::string out = frame_header(0x80000000u | (3u << 16) | type, flags, payload.size());
  return out.append(payload);
}

std::string data_frame(uint32_t stream, uint8_t flags, std::string_view data) {
  std::string out = frame_header(stream & 0x7FFFFFFFu, flags, data.size());
  return out.append(data);
}

std::string syn_reply(uint32_t stream, std::string_view block) {
  std::string payload;
  put32(payload, stream & 0x7FFFFFFFu);
  return control_frame(kSynReply, 0, payload.append(block));
}

uint32_t stream_of(std::string_view payload) {
  return big32(payload, 0) & 0x7FFFFFFFu;
}

std::string_view syn_stream_block(std::string_view payload) {
  return payload.size() < 10 ? std::string_view() : payload.substr(10);
}

}  // namespace kinetic::fakes::spdy
