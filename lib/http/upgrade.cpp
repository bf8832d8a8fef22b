// The upgraded connection over libcurl (with curl_transport.cpp, the only files that include curl).
// The response head is parsed here, by hand, because curl never sees it: CONNECT_ONLY hands over
// the connection right after the TLS handshake.
#include "http/upgrade.h"

#include <curl/curl.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include "http/response_head.h"

namespace kinetic::http {
namespace {

constexpr size_t kHeadLimit = 64 * 1024;
constexpr size_t kUpgradeBodyLimit = 64 * 1024;

class CurlConnection final : public UpgradedConnection {
 public:
  // Owns HANDLE (cleaned up with this object); connected() once curl has connected it.
  CurlConnection(CURL* handle, std::string url) : handle_(handle), url_(std::move(url)) {}
  void connected() {
    curl_socket_t s = CURL_SOCKET_BAD;
    curl_easy_getinfo(handle_, CURLINFO_ACTIVESOCKET, &s);
    fd_ = static_cast<int>(s);
  }
  ~CurlConnection() override { curl_easy_cleanup(handle_); }
  CurlConnection(const CurlConnection&) = delete;
  CurlConnection& operator=(const CurlConnection&) = delete;

  void send(std::string_view bytes) override {
    while (!bytes.empty()) {
      size_t sent = 0;
      CURLcode code = curl_easy_send(handle_, bytes.data(), bytes.size(), &sent);
      if (code == CURLE_AGAIN) {
        wait_for(POLLOUT, -1);
        continue;
      }
      if (code != CURLE_OK) fail("sending", code);
      bytes.remove_prefix(sent);
    }
  }

  std::optional<std::string> receive() override {
    // At most this much per call: a fast sender would otherwise grow one string without bound
    // while the caller waits to pass it on (callers call again until "").
    constexpr size_t kMaxReceive = 64 * 1024;
    char buf[16384];
    // Built in place: GCC 12 takes a std::string moved into an optional for its inline buffer
    // (a false -Wstringop-overread).
    std::optional<std::string> out(std::in_place);
    while (out->size() < kMaxReceive) {
      size_t got = 0;
      CURLcode code = curl_easy_recv(handle_, buf, sizeof buf, &got);
      if (code == CURLE_AGAIN) return out;
      if (code != CURLE_OK) fail("receiving", code);
      if (got == 0) {
        if (out->empty()) return std::nullopt;
        return out;  // the end is seen again on the next call
      }
      out->append(buf, got);
    }
    return out;
  }

  int fd() const override { return fd_; }

  // Waits until the socket is ready for EVENTS; false after TIMEOUT_MS (-1: never).
  bool wait_for(short events, int timeout_ms) const {
    pollfd p{fd_, events, 0};
    for (;;) {
      int n = ::poll(&p, 1, timeout_ms);
      if (n >= 0) return n > 0;
      if (errno != EINTR) return false;
    }
  }

 private:
  [[noreturn]] void fail(const char* doing, CURLcode code) const {
    throw TransportError("connection to " + display_url(url_) + " failed while " + doing + ": " +
                             curl_easy_strerror(code),
                         false);
  }

  CURL* handle_;
  std::string url_;
  int fd_ = -1;
};

// "https://HOST:PORT/path?q" -> {"HOST:PORT", "/path?q"}.
std::pair<std::string, std::string> host_and_target(const std::string& url) {
  size_t scheme = url.find("://");
  size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  size_t slash = url.find('/', start);
  if (slash == std::string::npos) return {url.substr(start), "/"};
  return {url.substr(start, slash - start), url.substr(slash)};
}

}  // namespace

UpgradeResponse open_upgrade(const Request& request, const CurlOptions& options) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* h = curl_easy_init();
  if (!h) throw Error(Errc::internal, "cannot initialise libcurl");
  auto connection = std::make_unique<CurlConnection>(h, request.url);
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  // HTTP/1.1 only: an Upgrade cannot travel over HTTP/2 (ALPN must not pick h2).
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(h, CURLOPT_SSL_ENABLE_ALPN, 0L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_blob blob{const_cast<char*>(options.ca_pem.data()), options.ca_pem.size(),
                 CURL_BLOB_COPY};  // the handle outlives this call
  if (!options.ca_pem.empty()) {
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    curl_easy_setopt(h, CURLOPT_CAINFO, nullptr);
    curl_easy_setopt(h, CURLOPT_CAPATH, nullptr);
  }
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options.connect_timeout.count()));
  CURLcode code = curl_easy_perform(h);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  if (code != CURLE_OK) {
    std::string detail = errbuf[0] ? errbuf : curl_easy_strerror(code);
    std::string prefix = "cannot reach " + display_url(request.url) + ": ";
    if (code == CURLE_PEER_FAILED_VERIFICATION)
      throw TransportError(prefix + "the server's certificate is not trusted by the " +
                               (options.ca_pem.empty() ? "system CA store" : "pinned CA") + " (" +
                               detail + ")",
                           false);
    throw TransportError(prefix + detail, false);
  }
  connection->connected();
  if (connection->fd() < 0)
    throw TransportError("cannot reach " + display_url(request.url) + ": libcurl kept no socket",
                         false);

  const auto [host, target] = host_and_target(request.url);
  std::string head = request.method + " " + target + " HTTP/1.1\r\nHost: " + host +
                     "\r\nUser-Agent: " + options.user_agent + "\r\n";
  for (const auto& [name, value] : request.headers) head += name + ": " + value + "\r\n";
  head += "\r\n";
  connection->send(head);

  // The answer's head, then (not 101) its body.
  UpgradeResponse response;
  std::string in;
  size_t end = std::string::npos;
  const auto deadline = std::chrono::steady_clock::now() + options.idle_timeout;
  bool closed = false;
  auto read_more = [&] {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !connection->wait_for(POLLIN, static_cast<int>(left.count())))
      throw TransportError("no answer from " + display_url(request.url) + " within " +
                               std::to_string(options.idle_timeout.count() / 1000) + " s",
                           false);
    auto got = connection->receive();
    if (!got)
      closed = true;
    else
      in += *got;
  };
  while ((end = in.find("\r\n\r\n")) == std::string::npos) {
    if (in.size() > kHeadLimit)
      throw TransportError(display_url(request.url) + " answered with a header over 64 KiB", false);
    read_more();
    if (closed)
      throw TransportError(display_url(request.url) + " closed the connection before answering",
                           false);
  }
  ResponseHead head_read = parse_response_head(std::string_view(in.data(), end), request.url);
  response.status = head_read.status;
  response.headers = std::move(head_read.headers);
  std::string rest = in.substr(end + 4);
  if (response.status == 101) {
    response.early_bytes = std::move(rest);
    response.connection = std::move(connection);
    return response;
  }
  while (!closed && !body_complete(rest, response.headers, kUpgradeBodyLimit)) {
    in.clear();
    read_more();
    rest += in;
  }
  response.body = response_body(rest, response.headers, kUpgradeBodyLimit);
  return response;
}

}  // namespace kinetic::http
