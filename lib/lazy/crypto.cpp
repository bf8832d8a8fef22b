// libcrypto's functions kinetic calls (SHA-256, MD5 for GCS, the service-account JWT's RSA
// signature), forwarded to libcrypto.so.3 loaded on first use (lazy_library.h says why). A function
// kinetic starts to use must be added here, or the kinetic binary fails to link.
#define OPENSSL_SUPPRESS_DEPRECATED  // SHA256_Init & co., as the code that calls them
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include "lazy/lazy_library.h"

// OpenSSL 3.x has the soname libcrypto.so.3.
static_assert(OPENSSL_VERSION_MAJOR == 3);

namespace {
kinetic::lazy::LazyLibrary crypto_library("libcrypto.so.3", "libssl3");
}  // namespace

KINETIC_LAZY_FUNCTION(crypto_library, int, SHA256_Init, (SHA256_CTX * c), (c))
KINETIC_LAZY_FUNCTION(crypto_library, int, SHA256_Update,
                      (SHA256_CTX * c, const void* data, size_t len), (c, data, len))
KINETIC_LAZY_FUNCTION(crypto_library, int, SHA256_Final, (unsigned char* md, SHA256_CTX* c),
                      (md, c))
KINETIC_LAZY_FUNCTION(crypto_library, unsigned char*, SHA256,
                      (const unsigned char* d, size_t n, unsigned char* md), (d, n, md))
KINETIC_LAZY_FUNCTION(crypto_library, unsigned char*, MD5,
                      (const unsigned char* d, size_t n, unsigned char* md), (d, n, md))
KINETIC_LAZY_FUNCTION(crypto_library, BIO*, BIO_new_mem_buf, (const void* buf, int len), (buf, len))
KINETIC_LAZY_FUNCTION(crypto_library, int, BIO_free, (BIO * a), (a))
KINETIC_LAZY_FUNCTION(crypto_library, EVP_PKEY*, PEM_read_bio_PrivateKey,
                      (BIO * bp, EVP_PKEY** x, pem_password_cb* cb, void* u), (bp, x, cb, u))
KINETIC_LAZY_FUNCTION(crypto_library, void, EVP_PKEY_free, (EVP_PKEY * pkey), (pkey))
KINETIC_LAZY_FUNCTION(crypto_library, int, EVP_PKEY_get_base_id, (const EVP_PKEY* pkey), (pkey))
KINETIC_LAZY_FUNCTION(crypto_library, EVP_MD_CTX*, EVP_MD_CTX_new, (void), ())
KINETIC_LAZY_FUNCTION(crypto_library, void, EVP_MD_CTX_free, (EVP_MD_CTX * ctx), (ctx))
KINETIC_LAZY_FUNCTION(crypto_library, const EVP_MD*, EVP_sha256, (void), ())
KINETIC_LAZY_FUNCTION(crypto_library, int, EVP_DigestSignInit,
                      (EVP_MD_CTX * ctx, EVP_PKEY_CTX** pctx, const EVP_MD* type, ENGINE* e,
                       EVP_PKEY* pkey),
                      (ctx, pctx, type, e, pkey))
KINETIC_LAZY_FUNCTION(crypto_library, int, EVP_DigestSign,
                      (EVP_MD_CTX * ctx, unsigned char* sigret, size_t* siglen,
                       const unsigned char* tbs, size_t tbslen),
                      (ctx, sigret, siglen, tbs, tbslen))
KINETIC_LAZY_FUNCTION(crypto_library, int, EVP_EncodeBlock,
                      (unsigned char* t, const unsigned char* f, int n), (t, f, n))
