#include "k8s/ws_dial.h"

#include <chrono>
#include <cstdio>
#include <random>

#include "core/checksum.h"
#include "http/trace.h"
#include "k8s/client.h"
#include "k8s/websocket.h"

namespace kinetic::k8s {
namespace {

std::string websocket_key() {
  std::random_device rd;
  std::string nonce(16, '\0');
  for (auto& c : nonce) c = static_cast<char>(rd());
  return base64_encode(nonce);
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace

WebSocketSession dial_websocket(const std::string& server, const std::string& ca_pem,
                                auth::TokenProvider& credentials, const std::string& path,
                                const std::vector<std::string>& protocols, const std::string& what,
                                int verbosity) {
  http::CurlOptions options;
  options.ca_pem = ca_pem;
  const std::string url = server + path;
  for (int attempt = 0;; ++attempt) {
    const std::string key = websocket_key();
    http::Request req;
    req.url = url;
    req.headers = {{"Authorization", "Bearer " + credentials.token()},
                   {"Connection", "Upgrade"},
                   {"Upgrade", "websocket"},
                   {"Sec-WebSocket-Version", "13"},
                   {"Sec-WebSocket-Key", key},
                   {"Sec-WebSocket-Protocol", joined(protocols, ", ")}};
    const auto started = std::chrono::steady_clock::now();
    http::UpgradeResponse r = http::open_upgrade(req, options);
    if (verbosity >= 6) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - started)
                          .count();
      const std::string line = http::redact("GET " + url) + " " + std::to_string(r.status) +
                               " in " + std::to_string(ms) + " ms";
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    if (r.status == 401 && attempt == 0) {
      credentials.invalidate();
      continue;
    }
    if (r.status != 101) throw api_error(r.status, r.body, what);
    if (r.header("Sec-WebSocket-Accept").value_or("") != ws::accept_value(key))
      throw Error(Errc::api, what +
                                 ": the server's WebSocket handshake does not match the "
                                 "request (Sec-WebSocket-Accept); a proxy in the way?");
    const std::string protocol = r.header("Sec-WebSocket-Protocol").value_or("");
    bool offered = false;
    for (const auto& p : protocols) offered = offered || p == protocol;
    if (!offered)
      throw Error(Errc::api, what + ": the API server chose the protocol '" + protocol +
                                 "'; kinetic speaks " + joined(protocols, " and "));
    return {std::move(r.connection), protocol, std::move(r.early_bytes)};
  }
}

}  // namespace kinetic::k8s
