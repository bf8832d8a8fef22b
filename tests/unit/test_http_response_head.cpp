// http/response_head.h: the answer to exec's upgrade request, read off the raw connection.
#include <gtest/gtest.h>

#include "http/response_head.h"

namespace kinetic::http {
namespace {

const std::string kUrl = "https://127.0.0.1:6443/api/v1/namespaces/n/pods/p/exec";

TEST(ResponseHead, StatusAndHeaders) {
  const auto h = parse_response_head(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol:  "
      "v5.channel.k8s.io \r\nno colon here",
      kUrl);
  EXPECT_EQ(h.status, 101);
  ASSERT_EQ(h.headers.size(), 2u);
  EXPECT_EQ(find_header(h.headers, "sec-websocket-protocol"), "v5.channel.k8s.io");
}

TEST(ResponseHead, WhatIsNotHttp11IsATransportError) {
  for (const char* head :
       {"", "HTTP/2 200 OK", "HTTP/1.1 2x0 OK", "HTTP/1.1 099 x", "SSH-2.0-OpenSSH",
        "HTTP/1.1 200 OK\r\nX: a\rb", "HTTP/1.1 200 OK\r\nX: a\nInjected: b"}) {
    EXPECT_THROW(parse_response_head(head, kUrl), TransportError) << head;
  }
}

TEST(ResponseHead, BodiesByLengthOrChunked) {
  const Headers length = {{"Content-Length", "5"}};
  EXPECT_FALSE(body_complete("abc", length, 100));
  EXPECT_TRUE(body_complete("abcdefg", length, 100));
  EXPECT_EQ(response_body("abcdefg", length, 100), "abcde");
  EXPECT_EQ(response_body("abcdefg", {{"Content-Length", "99999999999999999999"}}, 3), "abc");
  const Headers chunked = {{"Transfer-Encoding", "chunked"}};
  EXPECT_FALSE(body_complete("3\r\nabc\r\n", chunked, 100));
  EXPECT_TRUE(body_complete("3\r\nabc\r\n0\r\n\r\n", chunked, 100));
  EXPECT_EQ(response_body("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", chunked, 100), "abcde");
  EXPECT_EQ(response_body("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", chunked, 4), "abcd");
}

}  // namespace
}  // namespace kinetic::http
