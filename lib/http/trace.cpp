#include "http/trace.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstring>

#include <nlohmann/json.hpp>

namespace kinetic::http {
namespace {

constexpr std::string_view kRedacted = "REDACTED";
constexpr size_t kBodyLimit = 4096;

constexpr std::array<std::string_view, 7> kSecretFields = {
    "access_token",  "refresh_token", "id_token", "private_key",
    "client_secret", "assertion",     "password"};
// upload_id: a resumable upload's session URI lets whoever holds it write the object.
constexpr std::array<std::string_view, 7> kSecretParams = {
    "token", "key", "sig", "signature", "x-goog-signature", "x-goog-credential", "upload_id"};

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool iequals_at(std::string_view text, size_t pos, std::string_view word) {
  if (pos + word.size() > text.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (lower(text[pos + i]) != lower(word[i])) return false;
  }
  return true;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// "field": "value" -> "field": "REDACTED" (JSON string values only; escapes honoured).
void redact_json_fields(std::string& s) {
  for (std::string_view field : kSecretFields) {
    size_t pos = 0;
    while ((pos = s.find(field, pos)) != std::string::npos) {
      size_t after = pos + field.size();
      bool quoted = pos > 0 && s[pos - 1] == '"' && after < s.size() && s[after] == '"';
      pos = after;
      if (!quoted) continue;
      size_t i = after + 1;
      while (i < s.size() && is_space(s[i])) ++i;
      if (i >= s.size() || s[i] != ':') continue;
      ++i;
      while (i < s.size() && is_space(s[i])) ++i;
      if (i >= s.size() || s[i] != '"') continue;
      size_t begin = i + 1, end = begin;
      while (end < s.size() && s[end] != '"') end += (s[end] == '\\') ? 2 : 1;
      end = std::min(end, s.size());
      s.replace(begin, end - begin, kRedacted);
      pos = begin + kRedacted.size();
    }
  }
}

// name=value in forms and query strings, the name at a boundary.
void redact_params(std::string& s) {
  auto redact_one = [&s](std::string_view name) {
    size_t pos = 0;
    while (pos < s.size()) {
      size_t found = std::string::npos;
      for (size_t i = pos; i + name.size() < s.size(); ++i) {
        if (s[i + name.size()] == '=' && iequals_at(s, i, name)) {
          found = i;
          break;
        }
      }
      if (found == std::string::npos) return;
      size_t eq = found + name.size();
      bool boundary = found == 0 || std::strchr("?&; \t\r\n\"'(", s[found - 1]) != nullptr;
      if (!boundary) {
        pos = eq + 1;
        continue;
      }
      size_t begin = eq + 1, end = begin;
      while (end < s.size() && std::strchr("&# \t\r\n\"'<>)", s[end]) == nullptr) ++end;
      if (end > begin) s.replace(begin, end - begin, kRedacted);
      pos = begin + (end > begin ? kRedacted.size() : 0);
    }
  };
  for (std::string_view f : kSecretFields) redact_one(f);
  for (std::string_view p : kSecretParams) redact_one(p);
}

// "Authorization: Bearer xyz" -> "Authorization: Bearer REDACTED", to the end of the line.
void redact_auth_lines(std::string& s) {
  constexpr std::string_view kName = "authorization:";
  size_t pos = 0;
  while (pos < s.size()) {
    size_t found = std::string::npos;
    for (size_t i = pos; i + kName.size() <= s.size(); ++i) {
      if (iequals_at(s, i, kName)) {
        found = i;
        break;
      }
    }
    if (found == std::string::npos) return;
    size_t begin = found + kName.size();
    while (begin < s.size() && (s[begin] == ' ' || s[begin] == '\t')) ++begin;
    size_t end = begin;
    while (end < s.size() && s[end] != '\r' && s[end] != '\n') ++end;
    std::string_view value(s.data() + begin, end - begin);
    size_t space = value.find(' ');
    if (space != std::string_view::npos && value.substr(space + 1) != kRedacted) begin += space + 1;
    s.replace(begin, end - begin, kRedacted);
    pos = begin + kRedacted.size();
  }
}

// Keeps the scheme word of an Authorization value ("Bearer REDACTED").
std::string redact_value(std::string_view name, std::string_view value) {
  bool auth = name.size() >= 13 && iequals_at(name, name.size() - 13, "authorization");
  size_t space = value.find(' ');
  if (auth && space != std::string_view::npos && space > 0) {
    return std::string(value.substr(0, space + 1)) + std::string(kRedacted);
  }
  return std::string(kRedacted);
}

bool is_secret_header(std::string_view name) {
  for (std::string_view h : {"authorization", "proxy-authorization", "cookie", "set-cookie",
                             "x-goog-iam-authorization-token"}) {
    if (name.size() == h.size() && iequals_at(name, 0, h)) return true;
  }
  return false;
}

std::string kind_of(const nlohmann::json& j) {
  auto it = j.find("kind");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Kubernetes Secrets (a job's --env values): every value under data and stringData of a Secret,
// of the items of a SecretList, and of a watch event's object becomes REDACTED. True when any
// did.
bool redact_secret_data(nlohmann::json& j) {
  if (!j.is_object()) return false;
  bool changed = false;
  auto scrub = [&changed](nlohmann::json& secret) {
    if (!secret.is_object()) return;
    for (const char* field : {"data", "stringData"}) {
      auto it = secret.find(field);
      if (it == secret.end() || !it->is_object()) continue;
      for (auto& [key, value] : it->items()) {
        value = kRedacted;
        changed = true;
      }
    }
  };
  const std::string kind = kind_of(j);
  if (kind == "Secret") scrub(j);
  if (kind == "SecretList" && j.contains("items") && j["items"].is_array())
    for (auto& item : j["items"]) scrub(item);
  if (j.contains("object")) changed = redact_secret_data(j["object"]) || changed;
  return changed;
}

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), is_space);
}

// A body that may carry a Secret, with every Secret value REDACTED. It is one JSON document, or a
// watch stream: one JSON event a line, each parsed and redacted on its own (parsed as one
// document the stream is invalid JSON, and its Secrets would pass through). A line that is not
// JSON (a cut stream, protobuf) is withheld whole: it may be a Secret we cannot see into.
std::string redact_secrets_in(std::string_view body) {
  auto whole = nlohmann::json::parse(body, nullptr, false);
  if (!whole.is_discarded()) return redact_secret_data(whole) ? whole.dump() : std::string(body);
  std::string out;
  for (size_t start = 0; start <= body.size();) {
    size_t end = std::min(body.find('\n', start), body.size());
    std::string_view line = body.substr(start, end - start);
    auto event = nlohmann::json::parse(line, nullptr, false);
    if (blank(line)) {
      out += line;
    } else if (event.is_discarded()) {
      out += "<" + std::to_string(line.size()) + " bytes withheld: not JSON, may hold a Secret>";
    } else {
      out += redact_secret_data(event) ? event.dump() : std::string(line);
    }
    if (end < body.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

std::string body_text(std::string_view body) {
  // A Secret's values, wherever they sit in the body (the whole body is read: a Secret may come
  // after the part that is shown).
  std::string structured;
  if (body.find("Secret") != std::string_view::npos) {
    structured = redact_secrets_in(body);
    body = structured;
  }
  // Redact a generous prefix before cutting, so a secret straddling the cut is still caught.
  std::string text = redact(body.substr(0, std::min(body.size(), kBodyLimit * 16)));
  if (text.size() > kBodyLimit) {
    text.resize(kBodyLimit);
    text += "... (" + std::to_string(body.size()) + " bytes)";
  }
  return text;
}

class TracingTransport final : public Transport {
 public:
  TracingTransport(std::unique_ptr<Transport> inner, int verbosity,
                   std::function<void(std::string_view)> sink)
      : inner_(std::move(inner)), verbosity_(verbosity), sink_(std::move(sink)) {}

  Response send(const Request& request) override {
    bool full = verbosity_ >= 8;
    std::string method_url = request.method + " " + redact(request.url);
    Request traced_request = request;
    uint64_t sent = 0, received = 0;
    if (full) {
      if (request.body_source) {
        traced_request.body_source = [&sent, &request](char* buf, size_t size) {
          size_t n = request.body_source(buf, size);
          sent += n;
          return n;
        };
      }
      emit("> " + method_url);
      for (const auto& [name, value] : redact_headers(request.headers)) {
        emit("> " + name + ": " + value);
      }
      if (!request.body_source && !request.body.empty()) emit("> " + body_text(request.body));
    }
    bool stopped = false;  // the caller had what it wanted from a stream and ended it
    if (request.on_body) {
      traced_request.on_body = [&received, &stopped, &request](std::string_view chunk) {
        received += chunk.size();
        stopped = !request.on_body(chunk);
        return !stopped;
      };
    }
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&start] {
      return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count());
    };
    Response response;
    try {
      response = inner_->send(traced_request);
    } catch (const std::exception& e) {
      if (full && request.body_source) emit("> <streamed " + std::to_string(sent) + " bytes>");
      if (stopped) {
        emit(method_url + " ended by kinetic after " + elapsed() + " ms (" +
             std::to_string(received) + " bytes read)");
      } else {
        emit(method_url + " failed in " + elapsed() + " ms: " + redact(e.what()));
      }
      throw;
    }
    std::string summary =
        method_url + " " + std::to_string(response.status) + " in " + elapsed() + " ms";
    if (full) {
      if (request.body_source) emit("> <streamed " + std::to_string(sent) + " bytes>");
      emit("< " + std::to_string(response.status));
      for (const auto& [name, value] : redact_headers(response.headers)) {
        emit("< " + name + ": " + value);
      }
      if (!response.body.empty()) emit("< " + body_text(response.body));
      if (request.on_body && received > 0)
        emit("< <streamed " + std::to_string(received) + " bytes>");
    }
    emit(summary);
    return response;
  }

 private:
  void emit(const std::string& line) {
    if (sink_) sink_(line);
  }

  std::unique_ptr<Transport> inner_;
  int verbosity_;
  std::function<void(std::string_view)> sink_;
};

}  // namespace

std::string redact(std::string_view text) {
  std::string s(text);
  redact_auth_lines(s);
  redact_json_fields(s);
  redact_params(s);
  return s;
}

Headers redact_headers(const Headers& headers) {
  Headers out;
  out.reserve(headers.size());
  for (const auto& [name, value] : headers) {
    out.emplace_back(name, is_secret_header(name) ? redact_value(name, value) : redact(value));
  }
  return out;
}

std::unique_ptr<Transport> traced(std::unique_ptr<Transport> inner, int verbosity,
                                  std::function<void(std::string_view line)> sink) {
  if (verbosity < 6) return inner;
  return std::make_unique<TracingTransport>(std::move(inner), verbosity, std::move(sink));
}

}  // namespace kinetic::http
