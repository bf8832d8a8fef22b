#include "auth/key_file.h"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "auth/jwt.h"
#include "core/error.h"

namespace kinetic::auth {

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw Error(Errc::auth, "credential file " + path.string() + ": " + what);
}

std::string field(const nlohmann::json& j, const char* name, const fs::path& path, const char* kind,
                  bool required) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    if (required) fail(path, std::string(kind) + " lacks \"" + name + "\"");
    return {};
  }
  if (!it->is_string()) fail(path, std::string("\"") + name + "\" is not a string");
  if (required && it->get_ref<const std::string&>().empty()) {
    fail(path, std::string(kind) + " has an empty \"" + name + "\"");
  }
  return it->get<std::string>();
}

}  // namespace

CredentialFile parse_credential_file(std::string_view text, const fs::path& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // The parser's message quotes no content beyond a byte offset, but keep only the position.
    fail(path, "not valid JSON (at byte " + std::to_string(e.byte) + ")");
  }
  if (!j.is_object()) fail(path, "not a JSON object");
  auto type_it = j.find("type");
  if (type_it == j.end() || !type_it->is_string()) fail(path, "lacks a \"type\" field");
  const std::string type = type_it->get<std::string>();
  if (type == "service_account") {
    ServiceAccountKey k;
    k.client_email = field(j, "client_email", path, "service account key", true);
    k.private_key = field(j, "private_key", path, "service account key", true);
    k.token_uri = field(j, "token_uri", path, "service account key", true);
    k.private_key_id = field(j, "private_key_id", path, "service account key", false);
    k.project_id = field(j, "project_id", path, "service account key", false);
    if (std::string why = check_private_key(k.private_key); !why.empty()) {
      fail(path, "\"private_key\" " + why);
    }
    return k;
  }
  if (type == "authorized_user") {
    AuthorizedUser u;
    u.client_id = field(j, "client_id", path, "authorized user file", true);
    u.client_secret = field(j, "client_secret", path, "authorized user file", true);
    u.refresh_token = field(j, "refresh_token", path, "authorized user file", true);
    if (auto t = field(j, "token_uri", path, "authorized user file", false); !t.empty()) {
      u.token_uri = t;
    }
    u.account = field(j, "account", path, "authorized user file", false);
    return u;
  }
  fail(path, "credential type \"" + type +
                 "\" is not supported (kinetic supports service_account and authorized_user)");
}

CredentialFile load_credential_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail(path, "does not exist");
  if (fs::is_directory(path, ec)) fail(path, "is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be read (" + std::generic_category().message(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail(path, "cannot be read");
  return parse_credential_file(ss.str(), path);
}

}  // namespace kinetic::auth
