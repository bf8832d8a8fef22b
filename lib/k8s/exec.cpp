// The exec session is one loop over poll(): the connection, the local stdin and the resize pipe.
// One thread, so the remote's output is written in the order it came, and channel 3's Status,
// which the server sends after the last output, is read after all of it.
#include "k8s/exec.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "core/checksum.h"
#include "core/strings.h"
#include "k8s/client.h"
#include "k8s/websocket.h"
#include "k8s/ws_dial.h"

namespace kinetic::k8s {
namespace {

using nlohmann::json;

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      // The local reader went away (a closed pipe): the rest of the output has nowhere to go.
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::array<uint8_t, 4> random_mask(std::mt19937& rng) {
  std::array<uint8_t, 4> m{};
  for (auto& b : m) b = static_cast<uint8_t>(rng());
  return m;
}

}  // namespace

std::string exec_path(const ExecParams& params) {
  std::string path = "/api/v1/namespaces/" + percent_encode(params.ns) + "/pods/" +
                     percent_encode(params.pod) + "/exec";
  char sep = '?';
  auto add = [&](std::string_view key, std::string_view value) {
    path += sep;
    path += key;
    path += '=';
    path += percent_encode(value);
    sep = '&';
  };
  for (const auto& arg : params.command) add("command", arg);
  if (!params.container.empty()) add("container", params.container);
  if (params.stdin_open) add("stdin", "true");
  add("stdout", "true");
  if (!params.tty) add("stderr", "true");
  if (params.tty) add("tty", "true");
  return path;
}

std::string channel_message(unsigned char channel, std::string_view data) {
  std::string m(1, static_cast<char>(channel));
  return m.append(data);
}

std::string resize_message(unsigned short width, unsigned short height) {
  return channel_message(kResize, json{{"Width", width}, {"Height", height}}.dump());
}

int exit_code_from_status(const json& status, std::string* not_found_message) {
  if (!status.is_object()) throw Error(Errc::api, "the command's end came without a status");
  if (status.value("status", "") == "Success") return 0;
  const std::string message = status.value("message", "");
  if (status.value("reason", "") == "NonZeroExitCode") {
    const json details = status.value("details", json::object());
    for (const auto& cause : details.value("causes", json::array())) {
      if (!cause.is_object() || cause.value("reason", "") != "ExitCode") continue;
      const std::string text = cause.value("message", "");
      char* end = nullptr;
      long code = std::strtol(text.c_str(), &end, 10);
      if (!text.empty() && *end == '\0' && code >= 0 && code <= 255) return static_cast<int>(code);
    }
  }
  // The runtimes' words for a command that is not in the container.
  if (message.find("executable file not found") != std::string::npos ||
      message.find("no such file or directory") != std::string::npos) {
    if (not_found_message) *not_found_message = message;
    return 127;
  }
  throw Error(Errc::api, "the command did not run in the pod: " +
                             (message.empty() ? std::string("no reason given") : message));
}

int run_exec_session(http::UpgradedConnection& connection, const std::string& protocol,
                     std::string early_bytes, const ExecParams& params, const ExecIo& io) {
  const bool v5 = protocol == kExecProtocolV5;
  std::mt19937 rng(std::random_device{}());
  auto send = [&](ws::Opcode op, std::string_view payload) {
    connection.send(ws::encode_frame(op, payload, true, random_mask(rng)));
  };
  ws::MessageReader reader(/*expect_masked=*/false);
  reader.feed(early_bytes);

  if (params.tty && io.size)
    if (auto s = io.size()) send(ws::Opcode::binary, resize_message(s->first, s->second));

  std::optional<json> status;
  bool stdin_open = params.stdin_open && io.in >= 0;
  bool closing = false;  // the server's close frame came, or the connection ended
  bool close_sent = false;
  while (!closing) {
    // Everything already here first: TLS may hold bytes the socket no longer shows.
    for (;;) {
      std::optional<std::string> got = connection.receive();
      if (!got) {
        closing = true;
        break;
      }
      if (got->empty()) break;
      reader.feed(*got);
    }
    while (auto m = reader.next()) {
      switch (m->opcode) {
        case ws::Opcode::binary: {
          if (m->payload.empty()) break;
          const auto channel = static_cast<unsigned char>(m->payload[0]);
          std::string_view data(m->payload);
          data.remove_prefix(1);
          if (channel == kStdout) write_all(io.out, data);
          if (channel == kStderr) write_all(io.err, data);
          // The first (empty) message says the stream is ready; the Status is the last.
          if (channel == kError && !data.empty()) status = json::parse(data, nullptr, false);
          break;
        }
        case ws::Opcode::ping:
          send(ws::Opcode::pong, m->payload);
          break;
        case ws::Opcode::close:
          if (!close_sent) send(ws::Opcode::close, m->payload.substr(0, 2));
          close_sent = true;
          closing = true;
          break;
        default:  // text (the base64 protocols kinetic does not ask for), pong
          break;
      }
      if (closing) break;
    }
    if (closing) break;

    pollfd fds[3];
    int n = 0;
    fds[n++] = {connection.fd(), POLLIN, 0};
    const int in_at = stdin_open ? n : -1;
    if (stdin_open) fds[n++] = {io.in, POLLIN, 0};
    const int resize_at = io.resize >= 0 ? n : -1;
    if (io.resize >= 0) fds[n++] = {io.resize, POLLIN, 0};
    if (::poll(fds, static_cast<nfds_t>(n), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(Errc::internal, std::string("poll: ") + std::strerror(errno));
    }
    // A resize first: a key typed after it must reach a program that sees the new size.
    if (resize_at >= 0 && (fds[resize_at].revents & POLLIN)) {
      char drain[64];
      (void)!::read(io.resize, drain, sizeof drain);
      if (io.size)
        if (auto s = io.size()) send(ws::Opcode::binary, resize_message(s->first, s->second));
    }
    if (in_at >= 0 && (fds[in_at].revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[32768];
      ssize_t got = ::read(io.in, buf, sizeof buf);
      if (got > 0) {
        send(ws::Opcode::binary, channel_message(kStdin, std::string_view(buf, got)));
      } else if (got == 0 || errno != EINTR) {
        stdin_open = false;
        // v5 says stdin ended; v4 cannot (exec.h).
        if (v5) send(ws::Opcode::binary, channel_message(kClose, std::string(1, kStdin)));
      }
    }
  }
  if (!status)
    throw Error(Errc::api,
                "the connection to the pod's exec ended before the command's exit "
                "status came; it may still be running in " +
                    params.pod);
  if (status->is_discarded())
    throw Error(Errc::api, "the command's exit status from the API server is not JSON");
  std::string not_found;
  const int code = exit_code_from_status(*status, &not_found);
  if (!not_found.empty()) write_all(io.err, "kinetic: exec: " + not_found + "\n");
  return code;
}

int exec_in_pod(const std::string& server, const std::string& ca_pem,
                auth::TokenProvider& credentials, const ExecParams& params, const ExecIo& io,
                int verbosity) {
  WebSocketSession session =
      dial_websocket(server, ca_pem, credentials, exec_path(params),
                     {kExecProtocolV5, kExecProtocolV4}, "exec in pod " + params.pod, verbosity);
  return run_exec_session(*session.connection, session.protocol, std::move(session.early_bytes),
                          params, io);
}

}  // namespace kinetic::k8s
