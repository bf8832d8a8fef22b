// The checksums Cloud Storage reports: CRC32C (Castagnoli) and MD5, both base64 of the
// big-endian digest as in x-goog-hash and the object resource.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kinetic {

// Continues CRC32C over DATA from CRC (0 to start).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);
inline uint32_t crc32c(std::string_view data) {
  return crc32c_extend(0, data.data(), data.size());
}
// The CRC32C of A followed by B, from CRC_A, CRC_B and B's length: how a composite object's
// checksum follows from its components' without reading them again.
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

std::string base64_encode(std::string_view bytes);
// Decodes standard or URL-safe base64, skipping whitespace and stopping at '=' padding; nullopt
// when TEXT holds any other character.
std::optional<std::string> base64_decode(std::string_view text);
// The 4 big-endian bytes of CRC, base64 ("yZRlqg==" style).
std::string crc32c_base64(uint32_t crc);
// MD5 of DATA, base64.
std::string md5_base64(std::string_view data);

}  // namespace kinetic
