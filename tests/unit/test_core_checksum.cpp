#include <gtest/gtest.h>

#include "core/checksum.h"

namespace kinetic {
namespace {

TEST(Checksum, Crc32cKnownVectors) {
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);            // the standard check value
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
}

TEST(Checksum, Crc32cExtendsAcrossChunks) {
  std::string data;
  for (int i = 0; i < 100000; ++i) data += static_cast<char>(i * 7 + i / 13);
  uint32_t whole = crc32c(data);
  for (size_t cut : {1u, 7u, 8u, 9u, 4096u, 99999u}) {
    uint32_t c = crc32c_extend(0, data.data(), cut);
    c = crc32c_extend(c, data.data() + cut, data.size() - cut);
    EXPECT_EQ(c, whole) << cut;
  }
}

// A composite object's CRC32C follows from its parts': every split of a message, the empty part
// on either side, and parts longer than the shift table's first steps.
TEST(Checksum, Crc32cCombineEqualsTheChecksumOfTheConcatenation) {
  std::string data;
  for (int i = 0; i < 70000; ++i) data.push_back(static_cast<char>((i * 7919) ^ (i >> 5)));
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{65537}, data.size()}) {
    const std::string_view a = std::string_view(data).substr(0, split);
    const std::string_view b = std::string_view(data).substr(split);
    EXPECT_EQ(crc32c_combine(crc32c(a), crc32c(b), b.size()), crc32c(data)) << "split " << split;
  }
  EXPECT_EQ(crc32c_combine(crc32c("123456789"), 0, 0), 0xE3069283u);
}

TEST(Checksum, Base64AsCloudStorageShowsThem) {
  EXPECT_EQ(crc32c_base64(crc32c("hello world")), "yZRlqg==");  // GCS docs' example object
  EXPECT_EQ(md5_base64("hello world"), "XrY7u+Ae7tCTyyK7j1rNww==");
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
}

}  // namespace
}  // namespace kinetic
