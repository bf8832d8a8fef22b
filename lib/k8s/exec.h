// `kubectl exec` in a pod, over the API server's WebSocket (pods/exec): the channel protocol
// v5.channel.k8s.io, else v4.channel.k8s.io. Each binary message is one channel byte and its data:
// 0 stdin, 1 stdout, 2 stderr, 3 the command's end (a metav1.Status), 4 terminal resizes
// ({"Width":W,"Height":H}); v5 adds 255, "this channel is closed" (stdin's end). v4 has no way
// to say stdin ended: the remote command's stdin stays open until it exits, so a command that
// reads to the end of its input (`cat`) waits; kubectl behaves the same with v4.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/token_cache.h"
#include "http/upgrade.h"

namespace kinetic::k8s {

inline constexpr const char* kExecProtocolV5 = "v5.channel.k8s.io";
inline constexpr const char* kExecProtocolV4 = "v4.channel.k8s.io";

enum ExecChannel : unsigned char {
  kStdin = 0,
  kStdout = 1,
  kStderr = 2,
  kError = 3,
  kResize = 4,
  kClose = 255,  // v5
};

struct ExecParams {
  std::string ns;
  std::string pod;
  std::string container;  // empty: the pod's only container
  std::vector<std::string> command;
  bool stdin_open = false;
  bool tty = false;
};

// "/api/v1/namespaces/NS/pods/POD/exec?command=A&command=B&container=C&stdin=true&stdout=true
// &stderr=true&tty=true": stderr is off with a tty (a terminal has one output), stdin only with
// STDIN_OPEN.
std::string exec_path(const ExecParams& params);

// One message on CHANNEL.
std::string channel_message(unsigned char channel, std::string_view data);
std::string resize_message(unsigned short width, unsigned short height);

// How the command ended, from channel 3's Status: its exit code (0 for Success, the ExitCode
// cause of a NonZeroExitCode failure). Any other failure (the command could not start, the
// container is gone) throws Error(Errc::api) with the Status's message; a missing executable is
// exit 127 with its message in *NOT_FOUND_MESSAGE.
int exit_code_from_status(const nlohmann::json& status, std::string* not_found_message);

// Where the session's bytes come from and go. IN: the local stdin (-1: none). RESIZE: readable
// when the terminal's size changed (-1: no terminal), SIZE tells the new one.
struct ExecIo {
  int in = -1;
  int out = 1;
  int err = 2;
  int resize = -1;
  std::function<std::optional<std::pair<unsigned short, unsigned short>>()> size;
};

// Runs PARAMS.command in the pod through the API server at SERVER (its CA pinned), as the holder
// of CREDENTIALS' token (a 401 refreshes it once), and returns the command's exit code. A refused
// request (the pod is missing, not running, no such container, RBAC) throws ApiError with the
// Status's message. VERBOSITY >= 6 traces the request's URL and answer to stderr, token-free.
int exec_in_pod(const std::string& server, const std::string& ca_pem,
                auth::TokenProvider& credentials, const ExecParams& params, const ExecIo& io,
                int verbosity = 0);

// The session over an open connection: PROTOCOL negotiated, EARLY_BYTES already received. Unit
// tests drive it with an in-memory connection.
int run_exec_session(http::UpgradedConnection& connection, const std::string& protocol,
                     std::string early_bytes, const ExecParams& params, const ExecIo& io);

}  // namespace kinetic::k8s
