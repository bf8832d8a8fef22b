// The exec client (k8s/exec.h) without a server: the request's path, the exit code read from
// channel 3's Status, and the session over a socketpair whose other end the test plays as the
// API server, frame by frame (each step waits for the client's frame before the next: no sleeps).
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>

#include "k8s/exec.h"
#include "k8s/websocket.h"
#include "unit/socket_connection.h"

namespace kinetic::k8s {
namespace {

using nlohmann::json;

TEST(Exec, PathCarriesEachArgumentAndTheStreams) {
  ExecParams p;
  p.ns = "default";
  p.pod = "kinetic-job-1-abcde";
  p.container = "main";
  p.command = {"sh", "-c", "echo a&b"};
  EXPECT_EQ(exec_path(p),
            "/api/v1/namespaces/default/pods/kinetic-job-1-abcde/exec?command=sh&command=-c&"
            "command=echo%20a%26b&container=main&stdout=true&stderr=true");
  p.stdin_open = true;
  p.tty = true;
  // A terminal has one output: stderr is not asked for.
  EXPECT_EQ(exec_path(p),
            "/api/v1/namespaces/default/pods/kinetic-job-1-abcde/exec?command=sh&command=-c&"
            "command=echo%20a%26b&container=main&stdin=true&stdout=true&tty=true");
}

TEST(Exec, ExitCodeFromStatus) {
  EXPECT_EQ(exit_code_from_status({{"metadata", json::object()}, {"status", "Success"}}, nullptr),
            0);
  json failed = {{"status", "Failure"},
                 {"reason", "NonZeroExitCode"},
                 {"message", "command terminated with non-zero exit code: ..., exit code 3"},
                 {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", "3"}}}}}}};
  EXPECT_EQ(exit_code_from_status(failed, nullptr), 3);
  std::string not_found;
  json missing = {{"status", "Failure"},
                  {"reason", "InternalError"},
                  {"message",
                   "Internal error occurred: ... exec: \"nope\": executable file not "
                   "found in $PATH: unknown"}};
  EXPECT_EQ(exit_code_from_status(missing, &not_found), 127);
  EXPECT_NE(not_found.find("\"nope\": executable file not found"), std::string::npos);
  json gone = {{"status", "Failure"},
               {"reason", "InternalError"},
               {"message",
                "Internal error occurred: unable to upgrade connection: container not "
                "found (\"main\")"}};
  try {
    exit_code_from_status(gone, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::api);
    EXPECT_NE(std::string(e.what()).find("container not found (\"main\")"), std::string::npos);
  }
}

// The client's end of a socketpair as an upgraded connection.

// The test's end: the API server, blocking.
class Server {
 public:
  explicit Server(int fd) : fd_(fd) {}
  void send(unsigned char channel, std::string_view data) {
    raw(ws::encode_frame(ws::Opcode::binary, channel_message(channel, data)));
  }
  void raw(const std::string& bytes) {
    ASSERT_EQ(::write(fd_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // The client's next message (its frames must be masked).
  ws::Message next() {
    for (;;) {
      if (auto m = reader_.next()) return *m;
      char buf[4096];
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) return {ws::Opcode::close, "<eof>"};
      reader_.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
  }
  void end(const json& status) {
    send(kError, status.dump());
    raw(ws::encode_frame(ws::Opcode::close, ws::close_payload(1000)));
  }

 private:
  int fd_;
  ws::MessageReader reader_{/*expect_masked=*/true};
};

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
  void close_write() {
    ::close(w);
    w = -1;
  }
  std::string drain() {
    close_write();
    std::string s;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(r, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
    return s;
  }
};

json exit_with(int code) {
  return {{"metadata", json::object()},
          {"status", "Failure"},
          {"reason", "NonZeroExitCode"},
          {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(code)}}}}}}};
}

struct Session {
  int sv[2];
  Pipe in, out, err;
  ExecParams params;
  ExecIo io;
  Session() {
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    params.pod = "pod-1";
    params.command = {"cat"};
    io.out = out.w;
    io.err = err.w;
  }
  ~Session() {
    ::close(sv[0]);
    ::close(sv[1]);
  }
  std::future<int> start(const std::string& protocol, std::string early = {}) {
    return std::async(std::launch::async, [this, protocol, early] {
      test::SocketConnection c(sv[0]);
      return run_exec_session(c, protocol, early, params, io);
    });
  }
};

TEST(Exec, V5StdinThenItsEndThenOutputAndExitCode) {
  Session s;
  s.params.stdin_open = true;
  s.io.in = s.in.r;
  ASSERT_EQ(::write(s.in.w, "hi\n", 3), 3);
  s.in.close_write();
  auto code = s.start(kExecProtocolV5);
  Server server(s.sv[1]);
  ws::Message m = server.next();
  EXPECT_EQ(m.payload, std::string("\0hi\n", 4));
  m = server.next();
  EXPECT_EQ(m.payload, std::string("\xff\x00", 2)) << "v5 closes stdin at its end";
  server.send(kStdout, "");  // the kubelet's "ready"
  server.send(kStdout, "hi\n");
  server.send(kStderr, "warn\n");
  server.end(exit_with(3));
  EXPECT_EQ(server.next().opcode, ws::Opcode::close) << "the close is answered";
  EXPECT_EQ(code.get(), 3);
  EXPECT_EQ(s.out.drain(), "hi\n");
  EXPECT_EQ(s.err.drain(), "warn\n");
}

TEST(Exec, V4CannotCloseStdinSoSendsNothingAtItsEnd) {
  Session s;
  s.params.stdin_open = true;
  s.io.in = s.in.r;
  ASSERT_EQ(::write(s.in.w, "x", 1), 1);
  s.in.close_write();
  auto code = s.start(kExecProtocolV4);
  Server server(s.sv[1]);
  EXPECT_EQ(server.next().payload, std::string("\0x", 2));
  // Whatever the client sends next is its answer to this ping: no stdin close came before it.
  server.raw(ws::encode_frame(ws::Opcode::ping, "p"));
  ws::Message pong = server.next();
  EXPECT_EQ(pong.opcode, ws::Opcode::pong);
  EXPECT_EQ(pong.payload, "p");
  server.end({{"metadata", json::object()}, {"status", "Success"}});
  EXPECT_EQ(code.get(), 0);
}

TEST(Exec, TtySendsItsSizeFirstAndOnEachResize) {
  Session s;
  s.params.tty = true;
  Pipe resize;
  s.io.resize = resize.r;
  int calls = 0;
  s.io.size = [&calls]() -> std::optional<std::pair<unsigned short, unsigned short>> {
    return std::make_pair(static_cast<unsigned short>(80 + calls++),
                          static_cast<unsigned short>(24));
  };
  auto code = s.start(kExecProtocolV5);
  Server server(s.sv[1]);
  EXPECT_EQ(server.next().payload, "\x04{\"Height\":24,\"Width\":80}");
  ASSERT_EQ(::write(resize.w, "w", 1), 1);
  EXPECT_EQ(server.next().payload, "\x04{\"Height\":24,\"Width\":81}");
  server.end(exit_with(130));
  EXPECT_EQ(code.get(), 130);
}

TEST(Exec, FragmentedOutputAndEarlyBytes) {
  Session s;
  // The first frame came with the 101's head.
  auto code = s.start(kExecProtocolV5, ws::encode_frame(ws::Opcode::binary,
                                                        "\x01"
                                                        "a"));
  Server server(s.sv[1]);
  server.raw(ws::encode_frame(ws::Opcode::binary,
                              "\x01"
                              "b",
                              false));
  server.raw(ws::encode_frame(ws::Opcode::continuation, "cd", true));
  server.end({{"metadata", json::object()}, {"status", "Success"}});
  EXPECT_EQ(code.get(), 0);
  EXPECT_EQ(s.out.drain(), "abcd");
}

TEST(Exec, ConnectionEndingWithoutStatusIsAnError) {
  Session s;
  auto code = s.start(kExecProtocolV5);
  Server server(s.sv[1]);
  server.send(kStdout, "partial");
  ::shutdown(s.sv[1], SHUT_RDWR);
  try {
    code.get();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("before the command's exit status"), std::string::npos);
  }
  EXPECT_EQ(s.out.drain(), "partial");
}

}  // namespace
}  // namespace kinetic::k8s
