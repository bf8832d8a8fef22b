// The curl transport against cpp-httplib servers on 127.0.0.1 (plain and TLS).
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT
#endif
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "http/transport.h"

using kinetic::http::make_curl_transport;
using kinetic::http::Request;
using kinetic::http::Response;
using kinetic::http::TransportError;

namespace {

constexpr size_t kBig = 5 * 1024 * 1024;

char pattern(size_t i) {
  return static_cast<char>('a' + (i * 7 + i / 1000) % 26);
}

std::string big_body() {
  std::string s(kBig, '\0');
  for (size_t i = 0; i < kBig; ++i) s[i] = pattern(i);
  return s;
}

// Runs SERVER on a free port of 127.0.0.1 until destroyed.
template <typename Server>
class Running {
 public:
  explicit Running(Server& server) : server_(server) {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Running() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  Server& server_;
  int port_ = 0;
  std::thread thread_;
};

class HttpCurl : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get("/hello", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mutex_);
        ports_.insert(req.remote_port);
      }
      res.set_header("X-Echo", req.get_header_value("X-Test"));
      res.set_header("X-Agent", req.get_header_value("User-Agent"));
      res.set_content("hello", "text/plain");
    });
    server_.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content(R"({"error":{"code":404}})", "application/json");
    });
    server_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("X-Had-Expect", req.has_header("Expect") ? "yes" : "no");
      res.set_header("X-Method", req.method);
      res.set_content(req.body, "application/octet-stream");
    });
    server_.Put("/upload", [](const httplib::Request& req, httplib::Response& res) {
      bool ok = req.body.size() == kBig;
      for (size_t i = 0; ok && i < kBig; ++i) ok = req.body[i] == pattern(i);
      res.set_header("X-Had-Expect", req.has_header("Expect") ? "yes" : "no");
      res.set_content(ok ? "ok" : "corrupt " + std::to_string(req.body.size()), "text/plain");
    });
    server_.Delete("/thing", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 204;
      res.set_header("X-Method", req.method);
    });
    server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(big_body(), "application/octet-stream");
    });
    server_.Get("/truncated", [](const httplib::Request&, httplib::Response& res) {
      res.set_content_provider(1000, "text/plain",
                               [](size_t offset, size_t, httplib::DataSink& sink) {
                                 if (offset > 0) return false;  // drop the connection mid-body
                                 sink.write("0123456789", 10);
                                 return true;
                               });
    });
    running_ = std::make_unique<Running<httplib::Server>>(server_);
    base_ = "http://127.0.0.1:" + std::to_string(running_->port());
  }
  void TearDown() override { running_.reset(); }

  httplib::Server server_;
  std::unique_ptr<Running<httplib::Server>> running_;
  std::string base_;
  std::mutex mutex_;
  std::set<int> ports_;
};

}  // namespace

TEST_F(HttpCurl, GetWithHeaders) {
  auto t = make_curl_transport();
  Request r;
  r.url = base_ + "/hello";
  r.headers = {{"X-Test", "value 1"}};
  Response res = t->send(r);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "hello");
  EXPECT_EQ(res.header("x-echo"), "value 1");
  EXPECT_EQ(res.header("CONTENT-TYPE"), "text/plain");
  EXPECT_TRUE(res.header("X-Agent")->starts_with("kinetic/")) << *res.header("X-Agent");
}

TEST_F(HttpCurl, NotFoundIsData) {
  auto t = make_curl_transport();
  Request r;
  r.url = base_ + "/missing";
  std::string streamed;
  r.on_body = [&streamed](std::string_view chunk) {
    streamed += chunk;
    return true;
  };
  Response res = t->send(r);
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(res.body, R"({"error":{"code":404}})");  // error bodies are kept for parsing
  EXPECT_TRUE(streamed.empty());
}

TEST_F(HttpCurl, PostAndDelete) {
  auto t = make_curl_transport();
  Request r;
  r.method = "POST";
  r.url = base_ + "/echo";
  r.headers = {{"Content-Type", "application/json"}};
  r.body = std::string(200000, 'j');  // big enough for curl to want 100-continue
  Response res = t->send(r);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, r.body);
  EXPECT_EQ(res.header("X-Had-Expect"), "no");

  Request del;
  del.method = "DELETE";
  del.url = base_ + "/thing";
  res = t->send(del);
  EXPECT_EQ(res.status, 204);
  EXPECT_EQ(res.header("X-Method"), "DELETE");
}

TEST_F(HttpCurl, StreamedUploadAndDownload) {
  auto t = make_curl_transport();
  Request up;
  up.method = "PUT";
  up.url = base_ + "/upload";
  size_t offset = 0;
  up.body_source = [&offset](char* buf, size_t size) {
    size_t n = std::min(size, kBig - offset);
    for (size_t i = 0; i < n; ++i) buf[i] = pattern(offset + i);
    offset += n;
    return n;
  };
  up.body_size = kBig;
  Response res = t->send(up);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "ok");
  EXPECT_EQ(res.header("X-Had-Expect"), "no");

  Request down;
  down.url = base_ + "/big";
  size_t received = 0;
  bool intact = true;
  down.on_body = [&](std::string_view chunk) {
    for (char c : chunk) intact = intact && c == pattern(received++);
    return true;
  };
  res = t->send(down);
  EXPECT_EQ(res.status, 200);
  EXPECT_TRUE(res.body.empty());
  EXPECT_EQ(received, kBig);
  EXPECT_TRUE(intact);
}

TEST_F(HttpCurl, ConnectionIsReused) {
  auto t = make_curl_transport();
  Request r;
  r.url = base_ + "/hello";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(t->send(r).status, 200);
  std::lock_guard lock(mutex_);
  EXPECT_EQ(ports_.size(), 1u);
}

TEST_F(HttpCurl, AbortFromOnBodyIsNotRetryable) {
  auto t = make_curl_transport();
  Request r;
  r.url = base_ + "/big";
  r.on_body = [](std::string_view) { return false; };
  try {
    t->send(r);
    FAIL() << "no throw";
  } catch (const TransportError& e) {
    EXPECT_FALSE(e.retryable());
  }
}

TEST_F(HttpCurl, DroppedMidBodyIsRetryable) {
  auto t = make_curl_transport();
  Request r;
  r.url = base_ + "/truncated?token=abc";
  try {
    t->send(r);
    FAIL() << "no throw";
  } catch (const TransportError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
    std::string m = e.what();
    EXPECT_TRUE(m.starts_with("cannot reach " + base_ + "/truncated: ")) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}

TEST(HttpCurlNoServer, ClosedPortIsRetryable) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);  // bound, never listened: nothing accepts on this port
  auto t = make_curl_transport();
  Request r;
  r.url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/x";
  try {
    t->send(r);
    FAIL() << "no throw";
  } catch (const TransportError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
    EXPECT_TRUE(std::string(e.what()).starts_with("cannot reach http://127.0.0.1:")) << e.what();
  }
}

namespace {

struct SelfSigned {
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  std::string pem;
  SelfSigned() {
    key = EVP_EC_gen("P-256");
    cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    for (auto [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1"},
                              std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
      X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
      X509_add_ext(cert, ext, -1);
      X509_EXTENSION_free(ext);
    }
    X509_sign(cert, key, EVP_sha256());
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, cert);
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    pem.assign(data, static_cast<size_t>(n));
    BIO_free(bio);
  }
  ~SelfSigned() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

}  // namespace

TEST(HttpCurlTls, PinnedCaTrustedOtherRejected) {
  SelfSigned server_cert, other;
  httplib::SSLServer server(server_cert.cert, server_cert.key);
  ASSERT_TRUE(server.is_valid());
  server.Get("/ok", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("secure", "text/plain");
  });
  Running<httplib::SSLServer> running(server);
  std::string url = "https://127.0.0.1:" + std::to_string(running.port()) + "/ok";

  kinetic::http::CurlOptions pinned;
  pinned.ca_pem = server_cert.pem;
  auto good = make_curl_transport(pinned);
  Request r;
  r.url = url;
  Response res = good->send(r);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "secure");

  kinetic::http::CurlOptions wrong;
  wrong.ca_pem = other.pem;
  auto bad = make_curl_transport(wrong);
  try {
    bad->send(r);
    FAIL() << "no throw";
  } catch (const TransportError& e) {
    EXPECT_FALSE(e.retryable());
    EXPECT_NE(
        std::string(e.what()).find("the server's certificate is not trusted by the pinned CA"),
        std::string::npos)
        << e.what();
  }
}
