// One HTTP interface for every cloud client. Status codes are data (a 404 is a response, not an
// exception); only transport failures throw. Decorators add auth, retry and tracing:
// traced(retried(authed(curl))).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace kinetic::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive lookup of the first header named NAME.
std::optional<std::string> find_header(const Headers& headers, std::string_view name);

struct Request {
  std::string method = "GET";
  std::string url;
  Headers headers;
  // The body: either BODY, or streamed from BODY_SOURCE (which fills the buffer and returns the
  // bytes written, 0 at the end) with BODY_SIZE bytes in all. What BODY_SOURCE throws ends the
  // transfer and is rethrown by send.
  std::string body;
  std::function<size_t(char* buf, size_t size)> body_source;
  std::optional<uint64_t> body_size;
  // When set, the response body is streamed here instead of collected in Response::body;
  // returning false aborts the transfer (a TransportError that is not retryable).
  std::function<bool(std::string_view chunk)> on_body;
  // Whole-request limit; zero means none (watches and log streams run for long).
  std::chrono::milliseconds timeout{0};
  // Whether sending it twice does no harm (GET, PUT with preconditions, DELETE...). Only such
  // requests are retried after a dropped connection or a retryable status.
  bool idempotent = true;
  // Sent on a new connection, never a kept-alive one: when a reused connection dies before any
  // answer, libcurl silently sends the request again on a fresh one, which a request whose
  // retry must be decided by the caller (a resumable upload's chunk) must not allow.
  bool fresh_connection = false;
};

struct Response {
  int status = 0;
  Headers headers;
  std::string body;  // empty when Request::on_body took it
  std::optional<std::string> header(std::string_view name) const {
    return find_header(headers, name);
  }
};

// The connection failed, dropped, or timed out before a complete response.
class TransportError : public Error {
 public:
  TransportError(std::string message, bool retryable)
      : Error(Errc::api, std::move(message)), retryable_(retryable) {}
  bool retryable() const { return retryable_; }

 private:
  bool retryable_;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual Response send(const Request& request) = 0;
};

struct CurlOptions {
  // PEM certificates to trust instead of the system store (a cluster's CA is pinned this way).
  // Verification is never switched off.
  std::string ca_pem;
  std::chrono::milliseconds connect_timeout{10000};
  // A transfer that moves no byte for this long is dropped (and retried if safe).
  std::chrono::milliseconds idle_timeout{60000};
  std::string user_agent = "kinetic/" KINETIC_VERSION;
  // Follow up to 5 redirects (a release download). Off for the cloud APIs: none redirects, and
  // an Authorization header must never follow a redirect to another host.
  bool follow_redirects = false;
};

// The libcurl transport: keeps connections alive between requests of this object.
std::unique_ptr<Transport> make_curl_transport(const CurlOptions& options = {});

// URL without its query or fragment (which may hold signatures or tokens), for messages.
std::string display_url(const std::string& url);

// The name or value of a header line, without the blanks (and CR/LF) around it.
std::string trim_header(std::string_view s);

}  // namespace kinetic::http
