#include "auth/jwt.h"

#include <memory>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kinetic::auth {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// A callback that refuses passphrase prompts (an encrypted key would otherwise read the tty).
int no_passphrase(char*, int, int, void*) {
  return -1;
}

PkeyPtr read_private_key(std::string_view pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  return PkeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
}

}  // namespace

std::string base64url_encode(std::string_view data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<unsigned char>(data[k]); };
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  size_t rest = data.size() - i;
  if (rest == 1) {
    uint32_t v = byte(i) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (rest == 2) {
    uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

std::string check_private_key(std::string_view pem) {
  if (pem.find("-----BEGIN") == std::string_view::npos) return "is not a PEM private key";
  PkeyPtr key = read_private_key(pem);
  if (!key) return "is not a readable PEM private key";
  if (EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA) return "is not an RSA key";
  return {};
}

std::string make_jwt_assertion(const ServiceAccountKey& key, std::string_view scope,
                               std::chrono::system_clock::time_point now) {
  const int64_t iat =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  nlohmann::ordered_json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!key.private_key_id.empty()) header["kid"] = key.private_key_id;
  nlohmann::ordered_json claims = {{"iss", key.client_email},
                                   {"scope", std::string(scope)},
                                   {"aud", key.token_uri},
                                   {"iat", iat},
                                   {"exp", iat + 3600}};
  std::string input = base64url_encode(header.dump()) + "." + base64url_encode(claims.dump());

  PkeyPtr pkey = read_private_key(key.private_key);
  if (!pkey) {
    throw Error(Errc::auth,
                "the private key of service account " + key.client_email + " cannot be read");
  }
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  size_t sig_len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &sig_len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    throw Error(Errc::auth, "cannot sign with the key of service account " + key.client_email);
  }
  std::string sig(sig_len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &sig_len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    throw Error(Errc::auth, "cannot sign with the key of service account " + key.client_email);
  }
  sig.resize(sig_len);
  return input + "." + base64url_encode(sig);
}

}  // namespace kinetic::auth
