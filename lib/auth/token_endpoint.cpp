#include "auth/token_endpoint.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kinetic::auth {

namespace {

// One line, no secret, bounded length: safe to show.
std::string scrub(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& s : secrets) {
    if (s.empty()) continue;
    for (size_t pos = text.find(s); pos != std::string::npos; pos = text.find(s, pos)) {
      text.replace(pos, s.size(), "<redacted>");
    }
  }
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

}  // namespace

std::string form_encode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

AccessToken parse_token_response(const http::Response& response, const std::string& url,
                                 const std::string& what, const std::vector<std::string>& secrets,
                                 std::chrono::system_clock::time_point now) {
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  if (response.status != 200) {
    std::string msg = "token endpoint " + url + " rejected the " + what + " (HTTP " +
                      std::to_string(response.status) + ")";
    if (body.is_object() && body.contains("error")) {
      const auto& e = body["error"];
      std::string code = e.is_string() ? e.get<std::string>()
                         : e.is_object() && e.contains("message") && e["message"].is_string()
                             ? e["message"].get<std::string>()
                             : e.dump();
      msg += ": " + code;
      if (auto d = body.find("error_description"); d != body.end() && d->is_string()) {
        msg += ": " + d->get<std::string>();
      }
      if (code == "invalid_grant" || code == "invalid_rapt") {
        if (what.find("authorized user") != std::string::npos) {
          msg += "; run `gcloud auth application-default login`";
        }
      }
    }
    throw Error(Errc::auth, scrub(msg, secrets));
  }
  if (!body.is_object() || !body.contains("access_token") || !body["access_token"].is_string() ||
      body["access_token"].get_ref<const std::string&>().empty()) {
    throw Error(Errc::auth, scrub("token endpoint " + url + " answered the " + what +
                                      " without an access_token",
                                  secrets));
  }
  AccessToken token;
  token.value = body["access_token"].get<std::string>();
  int64_t expires_in = 3600;
  if (auto it = body.find("expires_in"); it != body.end()) {
    if (it->is_number_integer()) {
      expires_in = it->get<int64_t>();
    } else if (it->is_number()) {
      expires_in = static_cast<int64_t>(it->get<double>());
    } else if (it->is_string()) {
      try {
        expires_in = std::stoll(it->get<std::string>());
      } catch (const std::exception&) {
      }
    }
  }
  token.expiry = now + std::chrono::seconds(expires_in);
  return token;
}

AccessToken request_token(http::Transport& http, const std::string& url, const std::string& form,
                          const std::string& what, const std::vector<std::string>& secrets,
                          std::chrono::system_clock::time_point now) {
  http::Request req;
  req.method = "POST";
  req.url = url;
  req.headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                 {"Accept", "application/json"}};
  req.body = form;
  req.timeout = std::chrono::seconds(60);
  req.idempotent = true;  // a grant can be repeated without harm
  http::Response response = http.send(req);
  return parse_token_response(response, url, what, secrets, now);
}

}  // namespace kinetic::auth
