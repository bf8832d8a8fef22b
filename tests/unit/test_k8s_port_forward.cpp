// The port-forward client (k8s/port_forward.h) without a server: the request's path, the
// channels' encoding as the kubelet's websocket.go writes them (a 2-byte little-endian port
// first on each of a port's data and error channels), and a stream over a socketpair whose other
// end the test plays as the kubelet.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "k8s/port_forward.h"
#include "k8s/websocket.h"
#include "unit/socket_connection.h"

namespace kinetic::k8s {
namespace {

TEST(PortForward, PathAsksForThePortsInOneQueryValue) {
  EXPECT_EQ(port_forward_path("default", "job-1-0-abcde", {8080}),
            "/api/v1/namespaces/default/pods/job-1-0-abcde/portforward?ports=8080");
  EXPECT_EQ(port_forward_path("ns", "p", {80, 443}),
            "/api/v1/namespaces/ns/pods/p/portforward?ports=80%2C443");
}

TEST(PortForward, PortPrefixIsLittleEndian) {
  EXPECT_EQ(port_prefix(8080), std::string("\x90\x1f", 2));  // 0x1f90
  EXPECT_EQ(port_prefix(1), std::string("\x01\x00", 2));
  EXPECT_EQ(port_data_message(0, "GET"), std::string("\0GET", 4));
  EXPECT_EQ(port_data_message(1, "x"), std::string("\x02x", 2));
}

TEST(PortForward, DecoderDropsEachChannelsPortPrefixOnce) {
  PortForwardDecoder d({8080, 9000});
  EXPECT_EQ(d.decode(std::string("\x00\x90\x1f", 3)).kind, PortForwardEvent::nothing);
  EXPECT_EQ(d.decode(std::string("\x01\x90\x1f", 3)).kind, PortForwardEvent::nothing);
  // The second port's data channel, its prefix split over two messages and data after it.
  EXPECT_EQ(d.decode(std::string("\x02\x28", 2)).kind, PortForwardEvent::nothing);
  PortForwardEvent e = d.decode(std::string("\x02\x23hi", 4));
  EXPECT_EQ(e.kind, PortForwardEvent::data);
  EXPECT_EQ(e.index, 1u);
  EXPECT_EQ(e.bytes, "hi");
  // After the prefix, the same bytes are data.
  e = d.decode(std::string("\x00\x90\x1f", 3));
  EXPECT_EQ(e.kind, PortForwardEvent::data);
  EXPECT_EQ(e.bytes, std::string("\x90\x1f", 2));
  e = d.decode(std::string("\x01refused", 8));
  EXPECT_EQ(e.kind, PortForwardEvent::error);
  EXPECT_EQ(e.index, 0u);
  EXPECT_EQ(e.bytes, "refused");
}

TEST(PortForward, DecoderRefusesAnotherPortOrChannel) {
  PortForwardDecoder d({8080});
  EXPECT_THROW(d.decode(std::string("\x00\x50\x00", 3)), ws::ProtocolError);  // port 80
  PortForwardDecoder d2({8080});
  EXPECT_THROW(d2.decode(std::string("\x02\x90\x1f", 3)), ws::ProtocolError);
}

// Everything the stream gives until it ends.
std::string drain(PortForwardStream& s) {
  std::string out;
  for (;;) {
    std::optional<std::string> got = s.receive();
    if (!got) return out;
    out += *got;
    if (got->empty()) {
      pollfd p{s.fd(), POLLIN, 0};
      ::poll(&p, 1, -1);
    }
  }
}

std::string kubelet_frame(unsigned char channel, std::string_view data) {
  std::string m(1, static_cast<char>(channel));
  return ws::encode_frame(ws::Opcode::binary, m.append(data));
}

TEST(PortForward, StreamSendsMaskedDataOnChannelZeroAndPassesOnThePodsBytes) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  // The kubelet's opening messages came with the 101 (early bytes).
  const std::string early =
      kubelet_frame(0, port_prefix(8080)) + kubelet_frame(1, port_prefix(8080));
  PortForwardStream stream(std::make_unique<test::SocketConnection>(sv[0], true), early, 8080);
  stream.send("ping");
  ws::MessageReader server(/*expect_masked=*/true);  // throws on an unmasked client frame
  std::optional<ws::Message> m;
  char buf[4096];
  while (!(m = server.next())) {
    ssize_t n = ::read(sv[1], buf, sizeof buf);
    ASSERT_GT(n, 0);
    server.feed(std::string_view(buf, static_cast<size_t>(n)));
  }
  EXPECT_EQ(m->payload, std::string("\0ping", 5));
  const std::string reply =
      kubelet_frame(0, "pong") + ws::encode_frame(ws::Opcode::close, ws::close_payload(1000));
  ASSERT_EQ(::write(sv[1], reply.data(), reply.size()), static_cast<ssize_t>(reply.size()));
  EXPECT_EQ(drain(stream), "pong");
  EXPECT_EQ(stream.error(), "");
  ::close(sv[1]);
}

TEST(PortForward, StreamKeepsTheKubeletsErrorText) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  PortForwardStream stream(std::make_unique<test::SocketConnection>(sv[0], true), "", 8080);
  const std::string frames = kubelet_frame(0, port_prefix(8080)) +
                             kubelet_frame(1, port_prefix(8080)) +
                             kubelet_frame(1, "error forwarding port 8080: connection refused");
  ASSERT_EQ(::write(sv[1], frames.data(), frames.size()), static_cast<ssize_t>(frames.size()));
  ::close(sv[1]);
  EXPECT_EQ(drain(stream), "");
  EXPECT_EQ(stream.error(), "error forwarding port 8080: connection refused");
}

// A kubelet that refuses at once sends everything with the 101 and closes: the early bytes alone
// carry the error.
TEST(PortForward, AnErrorThatCameWithTheUpgradeIsKept) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const std::string early = kubelet_frame(0, port_prefix(1)) + kubelet_frame(1, port_prefix(1)) +
                            kubelet_frame(1, "connection refused") +
                            ws::encode_frame(ws::Opcode::close, ws::close_payload(1000));
  ::close(sv[1]);
  PortForwardStream stream(std::make_unique<test::SocketConnection>(sv[0], true), early, 1);
  EXPECT_EQ(drain(stream), "");
  EXPECT_EQ(stream.error(), "connection refused");
}

}  // namespace
}  // namespace kinetic::k8s
