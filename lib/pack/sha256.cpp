#include "pack/sha256.h"

// The one-shot SHA-256 API: deprecated in OpenSSL 3 in favour of EVP, but EVP's first use loads
// and initialises the provider machinery (about 5 M instructions and 3 MiB, measured in bench/),
// which would cost every `kinetic run` more than all of its own work.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <fcntl.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace kinetic {

struct Sha256::Impl {
  SHA256_CTX ctx;
  bool finished = false;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  if (SHA256_Init(&impl_->ctx) != 1)
    throw Error(Errc::internal, "cannot initialise SHA-256; check the OpenSSL install");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, size_t size) {
  if (impl_->finished) throw Error(Errc::internal, "Sha256::update called after hex_digest");
  if (size == 0) return;
  if (SHA256_Update(&impl_->ctx, data, size) != 1)
    throw Error(Errc::internal, "SHA-256 update failed");
}

std::string Sha256::hex_digest() {
  if (impl_->finished) throw Error(Errc::internal, "Sha256::hex_digest called twice");
  unsigned char md[SHA256_DIGEST_LENGTH];
  const unsigned int len = SHA256_DIGEST_LENGTH;
  if (SHA256_Final(md, &impl_->ctx) != 1) throw Error(Errc::internal, "SHA-256 final failed");
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
