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
  AuthedTransport(std::unique_ptr<http::Transport> inner, std::shared_ptr<TokenProvider> tokens,
                  std::string unsigned_prefix)
      : inner_(std::move(inner)),
        tokens_(std::move(tokens)),
        unsigned_prefix_(std::move(unsigned_prefix)) {}

  http::Response send(const http::Request& request) override {
    if (has_header(request.headers, "Authorization") || is_unsigned(request.url)) {
      return inner_->send(request);
    }
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

  // Under the prefix: the URL equals it or continues with a path, query or fragment, so
  // "http://h:1" does not cover "http://h:10".
  bool is_unsigned(const std::string& url) const {
    if (unsigned_prefix_.empty() ||
        url.compare(0, unsigned_prefix_.size(), unsigned_prefix_) != 0) {
      return false;
    }
    return url.size() == unsigned_prefix_.size() ||
           std::string_view("/?#").find(url[unsigned_prefix_.size()]) != std::string_view::npos;
  }

  std::unique_ptr<http::Transport> inner_;
  std::shared_ptr<TokenProvider> tokens_;
  std::string unsigned_prefix_;
};

}  // namespace

std::unique_ptr<http::Transport> authed(std::unique_ptr<http::Transport> inner,
                                        std::shared_ptr<TokenProvider> tokens,
                                        std::string unsigned_prefix) {
  return std::make_unique<AuthedTransport>(std::move(inner), std::move(tokens),
                                           std::move(unsigned_prefix));
}

}  // namespace kinetic::auth
