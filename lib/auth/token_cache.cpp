#include "auth/token_cache.h"

namespace kinetic::auth {

TokenCache::TokenCache(std::unique_ptr<CredentialSource> source, Clock now)
    : source_(std::move(source)), now_(std::move(now)) {
  if (!now_) now_ = [] { return std::chrono::system_clock::now(); };
}

void TokenCache::invalidate() {
  std::lock_guard lock(mu_);
  cached_.reset();
}

AccessToken TokenCache::current() {
  std::lock_guard lock(mu_);
  if (cached_ && (!cached_->expiry || now_() < *cached_->expiry - kRefreshMargin)) {
    return *cached_;
  }
  cached_ = source_->fetch();
  return *cached_;
}

}  // namespace kinetic::auth
