#include "pack/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace kinetic {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
  bool finished = false;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  if (impl_->ctx == nullptr || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(impl_->ctx);
    throw Error(Errc::internal,
                "cannot initialise SHA-256 (OpenSSL EVP); check the OpenSSL install");
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(impl_->ctx);
}

void Sha256::update(const void* data, size_t size) {
  if (impl_->finished) throw Error(Errc::internal, "Sha256::update called after hex_digest");
  if (size == 0) return;
  if (EVP_DigestUpdate(impl_->ctx, data, size) != 1)
    throw Error(Errc::internal, "SHA-256 update failed (OpenSSL EVP)");
}

std::string Sha256::hex_digest() {
  if (impl_->finished) throw Error(Errc::internal, "Sha256::hex_digest called twice");
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(impl_->ctx, md, &len) != 1)
    throw Error(Errc::internal, "SHA-256 final failed (OpenSSL EVP)");
  impl_->finished = true;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 0xf];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

std::string sha256_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw Error(Errc::packaging, "cannot read " + path.string() + ": " + std::strerror(errno));
  }
  Sha256 h;
  std::vector<char> buf(256 * 1024);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw Error(Errc::packaging, "cannot read " + path.string() + ": " + std::strerror(err));
    }
    if (n == 0) break;
    h.update(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return h.hex_digest();
}

}  // namespace kinetic
