// The API server's WebSocket upgrade, as pods/exec and pods/portforward share it: a GET with the
// upgrade headers and the Bearer token (a 401 refreshes it once), the handshake's accept value
// checked, the subprotocol the server chose one of those offered.
#pragma once

#include <string>
#include <vector>

#include "auth/token_cache.h"
#include "http/upgrade.h"

namespace kinetic::k8s {

struct WebSocketSession {
  std::unique_ptr<http::UpgradedConnection> connection;
  std::string protocol;     // one of those offered
  std::string early_bytes;  // already the WebSocket's
};

// Upgrades a GET of PATH on SERVER (CA_PEM pinned) to a WebSocket speaking one of PROTOCOLS (in
// order of preference). A refusal throws ApiError from its Status (WHAT names the request: "exec
// in pod P"); a handshake that does not match, or a protocol not offered, Error(Errc::api).
// VERBOSITY >= 6 traces the URL and the answer to stderr, token-free. Thread-safe.
WebSocketSession dial_websocket(const std::string& server, const std::string& ca_pem,
                                auth::TokenProvider& credentials, const std::string& path,
                                const std::vector<std::string>& protocols, const std::string& what,
                                int verbosity);

}  // namespace kinetic::k8s
