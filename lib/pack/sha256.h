// SHA-256 over OpenSSL's EVP interface: the content address of contexts and image tags.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/fs.h"

namespace kinetic {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::string hex_digest();  // finishes the hash

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string sha256_hex(std::string_view data);
std::string sha256_file(const fs::path& path);

}  // namespace kinetic
