#include "fakes/fake_oauth.h"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <atomic>
#include <cctype>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "fakes/fake_metadata_flavor.h"

namespace kinetic::fakes {

namespace {

constexpr const char* kCloudPlatform = "https://www.googleapis.com/auth/cloud-platform";
constexpr const char* kJwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer";

std::optional<std::string> base64url_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  };
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = value(c);
    if (v < 0) return std::nullopt;  // padding or a foreign alphabet is an error, as at Google
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string url_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() &&
               std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::map<std::string, std::string> parse_form(std::string_view body) {
  std::map<std::string, std::string> form;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t amp = body.find('&', pos);
    if (amp == std::string_view::npos) amp = body.size();
    std::string_view pair = body.substr(pos, amp - pos);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos) {
        form[url_decode(pair)] = "";
      } else {
        form[url_decode(pair.substr(0, eq))] = url_decode(pair.substr(eq + 1));
      }
    }
    pos = amp + 1;
  }
  return form;
}

bool verify_rs256(const std::string& public_pem, std::string_view input, std::string_view sig) {
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

void json_error(httplib::Response& res, int status, const std::string& error,
                const std::string& description) {
  res.status = status;
  res.set_content(nlohmann::json{{"error", error}, {"error_description", description}}.dump(),
                  "application/json; charset=utf-8");
}

}  // namespace

struct FakeOAuth::Impl {
  httplib::Server server;
  std::thread thread;
  int port = 0;

  mutable std::mutex mu;
  std::map<std::string, std::string> service_accounts;  // email -> public key PEM
  struct User {
    std::string secret, refresh_token;
  };
  std::map<std::string, User> users;  // client_id -> ...
  std::string scope = kCloudPlatform;
  std::function<std::chrono::system_clock::time_point()> now = [] {
    return std::chrono::system_clock::now();
  };
  std::string metadata_email = "default@fake-project.iam.gserviceaccount.com";
  int fail_n = 0;
  int fail_status = 0;
  std::string fail_body;
  int grants = 0;
  int metadata_tokens = 0;
  std::atomic<int> requests{0};
  int next_token = 0;
  std::string last_token;

  std::string token_url() const { return "http://127.0.0.1:" + std::to_string(port) + "/token"; }

  // Under mu.
  bool injected_failure(httplib::Response& res) {
    if (fail_n <= 0) return false;
    --fail_n;
    res.status = fail_status;
    res.set_content(fail_body, "application/json; charset=utf-8");
    return true;
  }

  // Under mu.
  void issue(httplib::Response& res) {
    last_token = "ya29.fake-" + std::to_string(++next_token);
    res.status = 200;
    res.set_content(
        nlohmann::json{{"access_token", last_token}, {"expires_in", 3599}, {"token_type", "Bearer"}}
            .dump(),
        "application/json; charset=utf-8");
  }

  void jwt_grant(const std::map<std::string, std::string>& form, httplib::Response& res) {
    auto it = form.find("assertion");
    if (it == form.end()) return json_error(res, 400, "invalid_request", "Missing assertion.");
    const std::string& jwt = it->second;
    size_t d1 = jwt.find('.');
    size_t d2 = d1 == std::string::npos ? d1 : jwt.find('.', d1 + 1);
    if (d2 == std::string::npos || jwt.find('.', d2 + 1) != std::string::npos) {
      return json_error(res, 400, "invalid_grant",
                        "Invalid JWT: Token must be a short-lived token.");
    }
    auto header_raw = base64url_decode(std::string_view(jwt).substr(0, d1));
    auto claims_raw = base64url_decode(std::string_view(jwt).substr(d1 + 1, d2 - d1 - 1));
    auto sig = base64url_decode(std::string_view(jwt).substr(d2 + 1));
    if (!header_raw || !claims_raw || !sig) {
      return json_error(res, 400, "invalid_grant", "Invalid JWT encoding.");
    }
    auto header = nlohmann::json::parse(*header_raw, nullptr, false);
    auto claims = nlohmann::json::parse(*claims_raw, nullptr, false);
    if (!header.is_object() || !claims.is_object() || header.value("alg", "") != "RS256") {
      return json_error(res, 400, "invalid_grant", "Invalid JWT header or claims.");
    }
    auto str = [&](const char* k) {
      return claims.contains(k) && claims[k].is_string() ? claims[k].get<std::string>() : "";
    };
    auto num = [&](const char* k) -> std::optional<int64_t> {
      if (claims.contains(k) && claims[k].is_number_integer()) return claims[k].get<int64_t>();
      return std::nullopt;
    };
    std::lock_guard lock(mu);
    auto sa = service_accounts.find(str("iss"));
    if (sa == service_accounts.end()) {
      return json_error(res, 400, "invalid_grant", "Invalid grant: account not found");
    }
    if (!verify_rs256(sa->second, std::string_view(jwt).substr(0, d2), *sig)) {
      return json_error(res, 400, "invalid_grant", "Invalid JWT Signature.");
    }
    if (str("aud") != token_url()) {
      return json_error(res, 400, "invalid_grant", "Invalid JWT: aud does not match token_uri.");
    }
    if (str("scope") != scope) {
      return json_error(res, 400, "invalid_scope",
                        "Invalid OAuth scope or ID token audience provided.");
    }
    auto iat = num("iat");
    auto exp = num("exp");
    int64_t t = std::chrono::duration_cast<std::chrono::seconds>(now().time_since_epoch()).count();
    if (!iat || !exp || *exp <= *iat || *exp - *iat > 3600 || *iat > t + 60 || *exp < t) {
      return json_error(res, 400, "invalid_grant",
                        "Invalid JWT: Token must be a short-lived token (60 minutes) and in a "
                        "reasonable timeframe. Check your iat and exp values in the JWT claim.");
    }
    ++grants;
    issue(res);
  }

  void refresh_grant(const std::map<std::string, std::string>& form, httplib::Response& res) {
    auto get = [&](const char* k) {
      auto it = form.find(k);
      return it == form.end() ? std::string() : it->second;
    };
    std::lock_guard lock(mu);
    auto u = users.find(get("client_id"));
    if (u == users.end() || u->second.secret != get("client_secret")) {
      return json_error(res, 401, "invalid_client", "The OAuth client was not found.");
    }
    if (u->second.refresh_token != get("refresh_token")) {
      return json_error(res, 400, "invalid_grant", "Bad Request");
    }
    ++grants;
    issue(res);
  }

  void routes() {
    server.set_pre_routing_handler([this](const httplib::Request&, httplib::Response&) {
      ++requests;
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server.Post("/token", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mu);
        if (injected_failure(res)) return;
      }
      if (req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) != 0) {
        return json_error(res, 400, "invalid_request", "Invalid Content-Type.");
      }
      auto form = parse_form(req.body);
      const std::string grant = form.count("grant_type") ? form["grant_type"] : "";
      if (grant == kJwtBearer) return jwt_grant(form, res);
      if (grant == "refresh_token") return refresh_grant(form, res);
      json_error(res, 400, "unsupported_grant_type", "Invalid grant_type: " + grant);
    });
    server.Get("/", [](const httplib::Request& req, httplib::Response& res) {
      if (!metadata_flavor(req, res)) return;
      res.set_content("computeMetadata/\n", "application/text");
    });
    const std::string sa = "/computeMetadata/v1/instance/service-accounts/default";
    server.Get(sa + "/token", [this](const httplib::Request& req, httplib::Response& res) {
      if (!metadata_flavor(req, res)) return;
      std::lock_guard lock(mu);
      if (injected_failure(res)) return;
      ++metadata_tokens;
      issue(res);
    });
    server.Get(sa + "/email", [this](const httplib::Request& req, httplib::Response& res) {
      if (!metadata_flavor(req, res)) return;
      std::lock_guard lock(mu);
      res.set_content(metadata_email, "application/text");
    });
  }
};

FakeOAuth::FakeOAuth() : impl_(std::make_unique<Impl>()) {
  impl_->routes();
  impl_->server.set_tcp_nodelay(true);
  impl_->port = impl_->server.bind_to_any_port("127.0.0.1");
  impl_->thread = std::thread([impl = impl_.get()] { impl->server.listen_after_bind(); });
  while (!impl_->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeOAuth::~FakeOAuth() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int FakeOAuth::port() const {
  return impl_->port;
}
std::string FakeOAuth::host() const {
  return "127.0.0.1:" + std::to_string(impl_->port);
}
std::string FakeOAuth::token_url() const {
  return impl_->token_url();
}

void FakeOAuth::add_service_account(const std::string& client_email,
                                    const std::string& public_key_pem) {
  std::lock_guard lock(impl_->mu);
  impl_->service_accounts[client_email] = public_key_pem;
}

void FakeOAuth::add_authorized_user(const std::string& client_id, const std::string& client_secret,
                                    const std::string& refresh_token) {
  std::lock_guard lock(impl_->mu);
  impl_->users[client_id] = {client_secret, refresh_token};
}

void FakeOAuth::set_expected_scope(std::string scope) {
  std::lock_guard lock(impl_->mu);
  impl_->scope = std::move(scope);
}

void FakeOAuth::set_clock(std::function<std::chrono::system_clock::time_point()> now) {
  std::lock_guard lock(impl_->mu);
  impl_->now = std::move(now);
}

void FakeOAuth::set_metadata_email(std::string email) {
  std::lock_guard lock(impl_->mu);
  impl_->metadata_email = std::move(email);
}

void FakeOAuth::fail_next(int n, int status, std::string body) {
  std::lock_guard lock(impl_->mu);
  impl_->fail_n = n;
  impl_->fail_status = status;
  impl_->fail_body = std::move(body);
}

int FakeOAuth::grants() const {
  std::lock_guard lock(impl_->mu);
  return impl_->grants;
}
int FakeOAuth::metadata_tokens() const {
  std::lock_guard lock(impl_->mu);
  return impl_->metadata_tokens;
}
int FakeOAuth::requests() const {
  return impl_->requests.load();
}
std::string FakeOAuth::last_access_token() const {
  std::lock_guard lock(impl_->mu);
  return impl_->last_token;
}

}  // namespace kinetic::fakes
