#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/fs.h"
#include "pack/sha256.h"

namespace kinetic {
namespace {

class Sha256Test : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir(fs::temp_directory_path(), "kinetic-sha-"); }
  void TearDown() override { remove_all_quiet(dir_); }
  fs::path dir_;
};

TEST_F(Sha256Test, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_F(Sha256Test, IncrementalEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 10000; ++i) data += static_cast<char>(i * 7 + 3);
  const std::string want = sha256_hex(data);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, data.size()}) {
    Sha256 h;
    h.update(std::string_view(data).substr(0, cut));
    h.update(nullptr, 0);
    h.update(std::string_view(data).substr(cut));
    EXPECT_EQ(h.hex_digest(), want) << "cut at " << cut;
  }
}

TEST_F(Sha256Test, DigestIsLowerHex64) {
  std::string d = sha256_hex("kinetic");
  ASSERT_EQ(d.size(), 64u);
  for (char c : d) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << d;
}

TEST_F(Sha256Test, FinishingTwiceIsAnError) {
  Sha256 h;
  h.update("x");
  h.hex_digest();
  EXPECT_THROW(h.hex_digest(), Error);
  EXPECT_THROW(h.update("y"), Error);
}

TEST_F(Sha256Test, FileMatchesContentAcrossBlockBoundaries) {
  // Larger than the 256 KiB read block, and not a multiple of it.
  std::string data(1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 2654435761u) >> 13);
  atomic_write(dir_ / "big.bin", data);
  EXPECT_EQ(sha256_file(dir_ / "big.bin"), sha256_hex(data));
  atomic_write(dir_ / "empty", "");
  EXPECT_EQ(sha256_file(dir_ / "empty"), sha256_hex(""));
}

TEST_F(Sha256Test, MissingFileThrowsPackagingErrorNamingIt) {
  try {
    sha256_file(dir_ / "nope.bin");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::packaging);
    EXPECT_NE(std::string(e.what()).find("nope.bin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kinetic
