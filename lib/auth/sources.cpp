#include "auth/sources.h"

#include <strings.h>
#include <mutex>

#include "auth/jwt.h"
#include "auth/token_endpoint.h"
#include "core/error.h"

namespace kinetic::auth {

namespace {

Clock or_system(Clock now) {
  if (now) return now;
  return [] { return std::chrono::system_clock::now(); };
}

std::optional<std::string> header_value(const http::Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && ::strncasecmp(k.data(), name.data(), name.size()) == 0) {
      return v;
    }
  }
  return std::nullopt;
}

class FixedTokenSource : public CredentialSource {
 public:
  FixedTokenSource(std::string token, std::string source)
      : token_(std::move(token)), source_(std::move(source)) {}
  AccessToken fetch() override { return {token_, std::nullopt}; }
  SourceInfo describe() override { return {source_, "unknown"}; }

 private:
  std::string token_;
  std::string source_;
};

class ServiceAccountSource : public CredentialSource {
 public:
  ServiceAccountSource(ServiceAccountKey key, fs::path path, std::shared_ptr<http::Transport> http,
                       std::string scope, Clock now)
      : key_(std::move(key)),
        path_(std::move(path)),
        http_(std::move(http)),
        scope_(std::move(scope)),
        now_(or_system(std::move(now))) {}

  AccessToken fetch() override {
    auto now = now_();
    std::string assertion = make_jwt_assertion(key_, scope_, now);
    std::string form = "grant_type=" + form_encode("urn:ietf:params:oauth:grant-type:jwt-bearer") +
                       "&assertion=" + form_encode(assertion);
    return request_token(*http_, key_.token_uri, form, "service account key " + path_.string(),
                         {assertion, key_.private_key}, now);
  }
  SourceInfo describe() override {
    return {"service account key " + path_.string(), key_.client_email};
  }

 private:
  ServiceAccountKey key_;
  fs::path path_;
  std::shared_ptr<http::Transport> http_;
  std::string scope_;
  Clock now_;
};

class AuthorizedUserSource : public CredentialSource {
 public:
  AuthorizedUserSource(AuthorizedUser user, std::string source,
                       std::shared_ptr<http::Transport> http, Clock now)
      : user_(std::move(user)),
        source_(std::move(source)),
        http_(std::move(http)),
        now_(or_system(std::move(now))) {}

  AccessToken fetch() override {
    std::string form = "grant_type=refresh_token&client_id=" + form_encode(user_.client_id) +
                       "&client_secret=" + form_encode(user_.client_secret) +
                       "&refresh_token=" + form_encode(user_.refresh_token);
    return request_token(*http_, user_.token_uri, form, source_,
                         {user_.client_secret, user_.refresh_token}, now_());
  }
  SourceInfo describe() override {
    return {source_, user_.account.empty() ? "unknown" : user_.account};
  }

 private:
  AuthorizedUser user_;
  std::string source_;
  std::shared_ptr<http::Transport> http_;
  Clock now_;
};

class MetadataSource : public CredentialSource {
 public:
  MetadataSource(std::string host, std::shared_ptr<http::Transport> http, Clock now)
      : host_(std::move(host)), http_(std::move(http)), now_(or_system(std::move(now))) {}

  AccessToken fetch() override {
    const std::string url = base() + "/token";
    auto now = now_();
    http::Response r = get(url);
    return parse_token_response(r, url, "metadata server " + host_ + " request", {}, now);
  }

  SourceInfo describe() override {
    std::lock_guard lock(mu_);
    if (!email_) {
      email_ = "unknown";
      try {
        http::Response r = get(base() + "/email");
        if (r.status == 200 && !r.body.empty() && r.body.find('\n') == std::string::npos) {
          email_ = r.body;
        }
      } catch (const std::exception&) {
      }
    }
    return {"metadata server " + host_, *email_};
  }

 private:
  std::string base() const {
    return "http://" + host_ + "/computeMetadata/v1/instance/service-accounts/default";
  }
  http::Response get(const std::string& url) {
    http::Request req;
    req.url = url;
    req.headers = {{"Metadata-Flavor", "Google"}};
    req.timeout = std::chrono::seconds(30);
    return http_->send(req);
  }

  std::string host_;
  std::shared_ptr<http::Transport> http_;
  Clock now_;
  std::mutex mu_;
  std::optional<std::string> email_;
};

}  // namespace

std::unique_ptr<CredentialSource> fixed_token_source(std::string token, std::string source) {
  return std::make_unique<FixedTokenSource>(std::move(token), std::move(source));
}

std::unique_ptr<CredentialSource> service_account_source(ServiceAccountKey key, fs::path path,
                                                         std::shared_ptr<http::Transport> http,
                                                         std::string scope, Clock now) {
  return std::make_unique<ServiceAccountSource>(std::move(key), std::move(path), std::move(http),
                                                std::move(scope), std::move(now));
}

std::unique_ptr<CredentialSource> authorized_user_source(AuthorizedUser user, std::string source,
                                                         std::shared_ptr<http::Transport> http,
                                                         Clock now) {
  return std::make_unique<AuthorizedUserSource>(std::move(user), std::move(source), std::move(http),
                                                std::move(now));
}

std::unique_ptr<CredentialSource> metadata_source(std::string host,
                                                  std::shared_ptr<http::Transport> http,
                                                  Clock now) {
  return std::make_unique<MetadataSource>(std::move(host), std::move(http), std::move(now));
}

bool metadata_server_present(http::Transport& http, const std::string& host,
                             std::chrono::milliseconds timeout) {
  http::Request req;
  req.url = "http://" + host + "/";
  req.headers = {{"Metadata-Flavor", "Google"}};
  req.timeout = timeout;
  // One quick try: marked non-idempotent so that a retried() transport does not turn an absent
  // server into seconds of backoff before "no credentials found".
  req.idempotent = false;
  try {
    http::Response r = http.send(req);
    auto flavor = header_value(r.headers, "Metadata-Flavor");
    return flavor && *flavor == "Google";
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace kinetic::auth
