// Caches a source's token until shortly before it expires; thread-safe.
#pragma once

#include <memory>
#include <mutex>

#include "auth/token.h"

namespace kinetic::auth {

// Refresh this long before expiry (google-auth uses 3m45s; a job submit may take a few minutes).
inline constexpr std::chrono::minutes kRefreshMargin{5};

class TokenCache : public TokenProvider {
 public:
  explicit TokenCache(std::unique_ptr<CredentialSource> source, Clock now = {});

  std::string token() override { return current().value; }
  void invalidate() override;
  // The cached token, fetched anew when missing, invalidated or within kRefreshMargin of expiry.
  AccessToken current();
  CredentialSource& source() { return *source_; }

 private:
  std::unique_ptr<CredentialSource> source_;
  Clock now_;
  std::mutex mu_;
  std::optional<AccessToken> cached_;
};

}  // namespace kinetic::auth
