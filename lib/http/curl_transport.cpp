// The libcurl transport. With http/upgrade.cpp (a connection taken over after a 101), the only
// files that include curl.
//
// One easy handle per Transport object, reused for every request so that connections (and TLS
// sessions) are kept alive. A Transport object is NOT thread-safe: give each thread its own.
//
// Response bodies: when Request::on_body is set, the body of a 2xx response is streamed to it;
// the body of any other status is collected in Response::body, so that errors can be parsed.
#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>

#include "http/transport.h"

namespace kinetic::http {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return trim_header(s);
}

struct Transfer {
  const Request* request = nullptr;
  Response response;
  int current_status = 0;  // from the latest status line
  size_t body_offset = 0;  // in-memory body
  uint64_t streamed = 0;   // bytes taken from body_source
  bool aborted_by_caller = false;
  std::exception_ptr source_error;  // what body_source threw (never through libcurl's C frames)
};

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new response (after 1xx interim ones or a redirect): keep only the last one's headers.
    t->response.headers.clear();
    size_t sp = line.find(' ');
    t->current_status =
        sp == std::string_view::npos ? 0 : std::atoi(std::string(line.substr(sp + 1, 3)).c_str());
    return n;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;  // the blank line ending the block
  t->response.headers.emplace_back(trim_header(line.substr(0, colon)),
                                   trim_header(line.substr(colon + 1)));
  return n;
}

size_t on_write(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  bool success = t->current_status >= 200 && t->current_status < 300;
  if (t->request->on_body && success) {
    if (!t->request->on_body(std::string_view(data, n))) {
      t->aborted_by_caller = true;
      return 0;  // CURLE_WRITE_ERROR
    }
    return n;
  }
  t->response.body.append(data, n);
  return n;
}

size_t on_read(char* buffer, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  if (t->request->body_source) {
    try {
      size_t got = t->request->body_source(buffer, n);
      t->streamed += got;
      return got;
    } catch (...) {
      t->source_error = std::current_exception();
      return CURL_READFUNC_ABORT;
    }
  }
  const std::string& body = t->request->body;
  size_t got = std::min(n, body.size() - t->body_offset);
  std::memcpy(buffer, body.data() + t->body_offset, got);
  t->body_offset += got;
  return got;
}

// Curl rewinds when it resends on a fresh connection; a stream can only "rewind" if untouched.
int on_seek(void* user, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(user);
  if (origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
  if (t->request->body_source) {
    return (offset == 0 && t->streamed == 0) ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK;
  }
  if (offset < 0 || static_cast<size_t>(offset) > t->request->body.size())
    return CURL_SEEKFUNC_FAIL;
  t->body_offset = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

bool retryable_code(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
    case CURLE_QUIC_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(CurlOptions options) : options_(std::move(options)) {
    global_init();
    handle_ = curl_easy_init();
    if (!handle_) throw Error(Errc::internal, "cannot initialise libcurl");
  }
  ~CurlTransport() override { curl_easy_cleanup(handle_); }
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Response send(const Request& request) override {
    CURL* h = handle_;
    curl_easy_reset(h);  // keeps the connection cache, DNS cache and TLS sessions

    Transfer t;
    t.request = &request;
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    set_connection_options(h);
    set_timeouts(h, request);
    // libcurl's own resend needs a reused connection; a fresh one has none to lose.
    if (request.fresh_connection) curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    set_method_and_body(h, request, &t);

    // Headers; "Expect:" stops curl from waiting for 100-continue.
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) {
      std::string line = value.empty() ? name + ";" : name + ": " + value;
      headers = curl_slist_append(headers, line.c_str());
    }
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);

    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);

    CURLcode code = curl_easy_perform(h);
    curl_slist_free_all(headers);
    // Never leave pointers into this call's stack or request behind in the reused handle.
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);

    if (t.source_error) std::rethrow_exception(t.source_error);
    if (code != CURLE_OK) fail(request, code, errbuf, t.aborted_by_caller);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    t.response.status = static_cast<int>(status);
    return std::move(t.response);
  }

 private:
  // HTTP/1.1, redirects only when asked and only to https, TLS always verified.
  void set_connection_options(CURL* h) const {
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(h, CURLOPT_USERAGENT, options_.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, options_.follow_redirects ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode

    // TLS: verification is always on; a pinned CA replaces the system store.
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!options_.ca_pem.empty()) {
      curl_blob blob{const_cast<char*>(options_.ca_pem.data()), options_.ca_pem.size(),
                     CURL_BLOB_NOCOPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_CAINFO, nullptr);
      curl_easy_setopt(h, CURLOPT_CAPATH, nullptr);
    }
  }

  void set_timeouts(CURL* h, const Request& request) const {
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout.count()));
    long idle_seconds = static_cast<long>((options_.idle_timeout.count() + 999) / 1000);
    if (idle_seconds > 0) {
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, idle_seconds);
    }
    if (request.timeout.count() > 0) {
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    }
  }

  static void set_method_and_body(CURL* h, const Request& request, Transfer* t) {
    const std::string& method = request.method;
    if (request.body_source) {
      curl_off_t size = request.body_size ? static_cast<curl_off_t>(*request.body_size) : -1;
      curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
      curl_easy_setopt(h, CURLOPT_READDATA, t);
      curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
      curl_easy_setopt(h, CURLOPT_SEEKDATA, t);
      if (method == "POST") {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, size);
      } else {
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, size);
        if (method != "PUT") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
      }
    } else if (!request.body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
      // In memory: curl reads it directly and can resend it on a fresh connection by itself.
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      if (method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    } else if (method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
  }

  [[noreturn]] void fail(const Request& request, CURLcode code, const char* errbuf,
                         bool aborted_by_caller) const {
    std::string detail = one_line(errbuf[0] ? errbuf : curl_easy_strerror(code));
    std::string prefix = "cannot reach " + display_url(request.url) + ": ";
    if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CERTPROBLEM ||
        code == CURLE_SSL_CACERT_BADFILE) {
      std::string what = options_.ca_pem.empty()
                             ? "the server's certificate is not trusted by the system CA store"
                             : "the server's certificate is not trusted by the pinned CA";
      throw TransportError(prefix + what + " (" + detail + ")", false);
    }
    if (aborted_by_caller || code == CURLE_ABORTED_BY_CALLBACK) {
      throw TransportError(prefix + "the transfer was aborted", false);
    }
    throw TransportError(prefix + detail, retryable_code(code));
  }

  CurlOptions options_;
  CURL* handle_ = nullptr;
};

}  // namespace

std::unique_ptr<Transport> make_curl_transport(const CurlOptions& options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace kinetic::http
