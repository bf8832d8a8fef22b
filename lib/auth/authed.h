// The transport decorator that signs requests with a bearer token.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "auth/token.h"
#include "http/transport.h"

namespace kinetic::auth {

// Adds "Authorization: Bearer TOKEN" (unless the request carries its own Authorization). On a
// 401 it invalidates the token and sends the request once more with a fresh one, unless the
// body is streamed (a body_source cannot be replayed): then the 401 is returned as is.
// UNSIGNED_PREFIX, when not empty, names a base URL that never gets the token (the storage
// emulator, gcp/endpoints.h): requests under it go out as they are.
std::unique_ptr<http::Transport> authed(std::unique_ptr<http::Transport> inner,
                                        std::shared_ptr<TokenProvider> tokens,
                                        std::string unsigned_prefix = {});

}  // namespace kinetic::auth
