// The fake kubelet's SPDY/3.1 (tests/fakes/fake_spdy.h), which kubectl port-forward speaks to it:
// the header dictionary is the draft's to the byte (zlib checks its Adler-32 on both sides), the
// frames' layout, and header blocks through one compression context per direction.
#include <gtest/gtest.h>
#include <zlib.h>

#include "fakes/fake_spdy.h"

namespace kinetic::fakes::spdy {
namespace {

TEST(FakeSpdy, DictionaryIsDraftThreesByItsSizeAndChecksum) {
  const std::string& d = dictionary();
  EXPECT_EQ(d.size(), 1423u);
  EXPECT_EQ(adler32(1, reinterpret_cast<const Bytef*>(d.data()), static_cast<uInt>(d.size())),
            0xe3c6a7c2u);
}

TEST(FakeSpdy, FramesLayoutAndReadingInPieces) {
  EXPECT_EQ(data_frame(5, kFlagFin, "ab"), std::string("\0\0\0\x05\x01\0\0\x02"
                                                       "ab",
                                                       10));
  EXPECT_EQ(control_frame(kPing, 0, std::string("\0\0\0\x01", 4)),
            std::string("\x80\x03\0\x06\0\0\0\x04\0\0\0\x01", 12));
  FrameReader reader;
  const std::string bytes = data_frame(3, 0, "hello") + syn_reply(7, "block");
  for (char c : bytes.substr(0, 9)) reader.feed(std::string(1, c));
  EXPECT_FALSE(reader.next().has_value());
  reader.feed(bytes.substr(9));
  auto data = reader.next();
  ASSERT_TRUE(data.has_value());
  EXPECT_FALSE(data->control);
  EXPECT_EQ(data->stream_id, 3u);
  EXPECT_EQ(data->payload, "hello");
  auto reply = reader.next();
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(reply->control);
  EXPECT_EQ(reply->type, kSynReply);
  EXPECT_EQ(reply->stream_id, 7u);
}

TEST(FakeSpdy, HeaderBlocksShareOneContextPerDirection) {
  HeaderDeflater out;
  HeaderInflater in;
  const std::map<std::string, std::string> error = {
      {"streamtype", "error"}, {"port", "8080"}, {"requestid", "0"}};
  const std::map<std::string, std::string> data = {
      {"streamtype", "data"}, {"port", "8080"}, {"requestid", "0"}};
  EXPECT_EQ(in.inflate(out.deflate(error)), error);
  // The second block is compressed against the first: only the same context reads it.
  const std::string second = out.deflate(data);
  EXPECT_EQ(in.inflate(second), data);
  HeaderInflater fresh;
  EXPECT_NE(fresh.inflate(second), data);
}

}  // namespace
}  // namespace kinetic::fakes::spdy
