// The transport decorator that signs requests with a bearer token.
#pragma once

#include <memory>

#include "auth/token.h"
#include "http/transport.h"

namespace kinetic::auth {

// Adds "Authorization: Bearer TOKEN" (unless the request carries its own Authorization). On a
// 401 it invalidates the token and sends the request once more with a fresh one, unless the
// body is streamed (a body_source cannot be replayed): then the 401 is returned as is.
std::unique_ptr<http::Transport> authed(std::unique_ptr<http::Transport> inner,
                                        std::shared_ptr<TokenProvider> tokens);

}  // namespace kinetic::auth
