#include "auth/authed.h"

#include <strings.h>

namespace kinetic::auth {

namespace {

bool has_header(const http::Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && ::strncasecmp(k.data(), name.data(), name.size()) == 0) {
      return true;
    }
  }
  return false;
}

class AuthedTransport : public http::Transport {
 public:
  AuthedTransport(std::unique_ptr<http::Transport> inner, std::shared_ptr<TokenProvider> tokens)
      : inner_(std::move(inner)), tokens_(std::move(tokens)) {}

  http::Response send(const http::Request& request) override {
    if (has_header(request.headers, "Authorization")) return inner_->send(request);
    http::Response response = inner_->send(with_token(request));
    if (response.status != 401 || request.body_source) return response;
    tokens_->invalidate();
    return inner_->send(with_token(request));
  }

 private:
  http::Request with_token(const http::Request& request) {
    http::Request r = request;
    r.headers.emplace_back("Authorization", "Bearer " + tokens_->token());
    return r;
  }

  std::unique_ptr<http::Transport> inner_;
  std::shared_ptr<TokenProvider> tokens_;
};

}  // namespace

std::unique_ptr<http::Transport> authed(std::unique_ptr<http::Transport> inner,
                                        std::shared_ptr<TokenProvider> tokens) {
  return std::make_unique<AuthedTransport>(std::move(inner), std::move(tokens));
}

}  // namespace kinetic::auth
