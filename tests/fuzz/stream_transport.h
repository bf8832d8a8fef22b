// A fake http::Transport for the streaming parsers: each request gets the next of the given
// bodies, handed to Request::on_body in chunks of varying sizes (so lines and events are cut
// anywhere), then either ends cleanly or drops as a cut connection would.
#pragma once

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "http/transport.h"

namespace kinetic::fuzz {

class StreamTransport : public http::Transport {
 public:
  struct Body {
    std::string_view bytes;
    bool dropped = false;  // ends with a retryable TransportError instead of a clean end
  };
  explicit StreamTransport(std::vector<Body> bodies) : bodies_(std::move(bodies)) {}

  http::Response send(const http::Request& request) override {
    Body body = next_ < bodies_.size() ? bodies_[next_++] : Body{};
    std::string_view rest = body.bytes;
    for (size_t k = 0; !rest.empty(); ++k) {
      size_t n = std::min(rest.size(), 1 + (k * 37 + body.bytes.size()) % 61);
      if (!request.on_body(rest.substr(0, n)))
        throw http::TransportError("the transfer was aborted by the callback", false);
      rest.remove_prefix(n);
    }
    if (body.dropped) throw http::TransportError("connection reset by peer", true);
    http::Response r;
    r.status = 200;
    return r;
  }

 private:
  std::vector<Body> bodies_;
  size_t next_ = 0;
};

}  // namespace kinetic::fuzz
