// pods/exec: the API server's checks (serve_exec, through the same authentication, RBAC, fault
// injection and counters as every route) and the kubelet's streaming session over the WebSocket
// (claim_exec): the command runs as the container's main process was started — its environment
// (the image's PATH, HOME, TMPDIR, the pod's env), its working directory — with a pty for tty.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmp.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <thread>
#include <tuple>

#include "fakes/fake_kube_internal.h"
#include "fakes/fake_latency.h"
#include "k8s/websocket.h"

namespace kinetic::fakes {

namespace kube {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim_exec(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool parse_head(const std::string& head, httplib::Request& req) {
  size_t eol = head.find("\r\n");
  std::string line = head.substr(0, eol);
  size_t a = line.find(' '), b = line.rfind(' ');
  if (a == std::string::npos || b == a) return false;
  req.method = line.substr(0, a);
  req.target = line.substr(a + 1, b - a - 1);
  size_t q = req.target.find('?');
  req.path = httplib::detail::decode_url(req.target.substr(0, q), false);
  // Every pair in order: httplib's parse_query_text drops a repeated pair, and `sh -c X`
  // after `python3 -c Y` repeats command=-c.
  if (q != std::string::npos) {
    const std::string query = req.target.substr(q + 1);
    size_t start = 0;
    while (start <= query.size()) {
      size_t end = query.find('&', start);
      if (end == std::string::npos) end = query.size();
      const std::string pair = query.substr(start, end - start);
      const size_t eq = pair.find('=');
      if (!pair.empty())
        req.params.emplace(httplib::detail::decode_url(pair.substr(0, eq), true),
                           eq == std::string::npos
                               ? std::string()
                               : httplib::detail::decode_url(pair.substr(eq + 1), true));
      start = end + 1;
    }
  }
  size_t pos = eol + 2;
  while (pos < head.size()) {
    size_t next = head.find("\r\n", pos);
    if (next == std::string::npos || next == pos) break;
    std::string h = head.substr(pos, next - pos);
    size_t colon = h.find(':');
    if (colon != std::string::npos)
      req.headers.emplace(trim_exec(h.substr(0, colon)), trim_exec(h.substr(colon + 1)));
    pos = next + 2;
  }
  return true;
}

std::vector<std::string> offered_protocols(const httplib::Request& req) {
  std::vector<std::string> out;
  auto range = req.headers.equal_range("Sec-WebSocket-Protocol");
  for (auto it = range.first; it != range.second; ++it) {
    std::string v = it->second;
    size_t start = 0;
    while (start <= v.size()) {
      size_t comma = v.find(',', start);
      if (comma == std::string::npos) comma = v.size();
      std::string p = trim_exec(v.substr(start, comma - start));
      if (!p.empty()) out.push_back(p);
      start = comma + 1;
    }
  }
  return out;
}

std::string reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string http_response(int status, const std::string& reason,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          const std::string& body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n";
  for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  return out + body;
}

void write_refusal(const httplib::Response& res, TlsConnection& conn) {
  if (res.content_provider_) return;  // lose_next_response: dropped without an answer
  std::vector<std::pair<std::string, std::string>> headers;
  if (!res.body.empty()) headers.emplace_back("Content-Type", res.get_header_value("Content-Type"));
  for (const auto& [k, v] : res.headers)
    if (k != "Content-Type" && k != "Content-Length" && k.rfind("X-Fake-", 0) != 0)
      headers.emplace_back(k, v);
  conn.write(http_response(res.status, reason_phrase(res.status), headers, res.body));
}

}  // namespace kube

namespace {

using json = nlohmann::json;
using kube::ApiError;
using kube::http_response;
using kube::kExecContainer;
using kube::kExecFailure;
using kube::kExecPodUid;
using kube::kExecProtocol;
using kube::kExecUpgrade;
using kube::lower;
using kube::offered_protocols;
using kube::parse_head;
using kube::reason_phrase;
using kube::trim_exec;
namespace ws = k8s::ws;

// The channel protocols the kubelet serves, and "" (no Sec-WebSocket-Protocol) as the oldest one.
// The base64 protocols and v2/v3 are not served (docs/fakes.md).
constexpr const char* kV5 = "v5.channel.k8s.io";
constexpr const char* kV4 = "v4.channel.k8s.io";
constexpr const char* kV1 = "channel.k8s.io";

bool is_exec_upgrade(const httplib::Request& req) {
  if (lower(req.get_header_value("Upgrade")).find("websocket") == std::string::npos) return false;
  const std::string& p = req.path;
  return p.rfind("/api/v1/namespaces/", 0) == 0 && p.size() > 5 &&
         p.compare(p.size() - 5, 5, "/exec") == 0 && p.find("/pods/") != std::string::npos;
}

// "[sh -c exit 3]", as the kubelet quotes a command.
std::string quoted_command(const std::vector<std::string>& argv) {
  std::string s = "[";
  for (size_t i = 0; i < argv.size(); ++i) s += (i ? " " : "") + argv[i];
  return s + "]";
}

json exit_status(int code, const std::vector<std::string>& argv) {
  if (code == 0) return {{"metadata", json::object()}, {"status", "Success"}};
  return {{"metadata", json::object()},
          {"status", "Failure"},
          {"message", "command terminated with non-zero exit code: error executing command " +
                          quoted_command(argv) + ", exit code " + std::to_string(code)},
          {"reason", "NonZeroExitCode"},
          {"details", {{"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(code)}}}}}}};
}

json internal_error(const std::string& message) {
  return {{"metadata", json::object()},
          {"status", "Failure"},
          {"message", "Internal error occurred: " + message},
          {"reason", "InternalError"},
          {"details", {{"causes", {{{"message", message}}}}}},
          {"code", 500}};
}

std::string hex_id() {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 64; ++i) s += digits[kube::random_suffix(1)[0] % 16];
  return s;
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// One exec'd process: its pipes (or the pty's master as stdin and stdout).
struct Process {
  pid_t pid = -1;
  int in = -1, out = -1, err = -1;
  bool tty = false;
  std::string start_error;  // the runtime's message when the command could not start
};

// Starts ARGV as the container's processes start (fake_kube_control.cpp start_container): ENV,
// DIR, the PATH of ENV searched (never this machine's), default signal dispositions.
Process spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              const std::string& dir, bool with_stdin, bool tty, winsize size) {
  Process p;
  p.tty = tty;
  std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (const auto& e : env)
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  std::vector<std::string> candidates;
  if (argv[0].find('/') != std::string::npos) {
    candidates.push_back(argv[0]);
  } else {
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      if (end > start) candidates.push_back(path.substr(start, end - start) + "/" + argv[0]);
      start = end + 1;
    }
  }
  std::vector<char*> argv_p, env_p;
  for (const auto& a : argv) argv_p.push_back(const_cast<char*>(a.c_str()));
  argv_p.push_back(nullptr);
  for (const auto& e : env) env_p.push_back(const_cast<char*>(e.c_str()));
  env_p.push_back(nullptr);
  // The child reports a failed execve on this pipe (closed on a successful one).
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    p.start_error = "pipe failed";
    return p;
  }
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, master = -1, slave = -1;
  if (tty) {
    if (::openpty(&master, &slave, nullptr, nullptr, &size) != 0) {
      p.start_error = "openpty failed";
      return p;
    }
    ::fcntl(master, F_SETFD, FD_CLOEXEC);
  } else {
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 ||
        ::pipe2(err, O_CLOEXEC) != 0) {
      p.start_error = "pipe failed";
      return p;
    }
  }
  sigset_t empty;
  sigemptyset(&empty);
  const char* dir_c = dir.c_str();
  std::vector<const char*> candidates_c;
  for (const auto& c : candidates) candidates_c.push_back(c.c_str());
  pid_t pid = ::fork();
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGWINCH})
      ::sigaction(sig, &dfl, nullptr);
    ::sigprocmask(SIG_SETMASK, &empty, nullptr);
    if (tty) {
      ::login_tty(slave);  // a session of its own, the pty its controlling terminal and 0-2
    } else {
      ::setpgid(0, 0);
      if (with_stdin) {
        ::dup2(in[0], 0);
      } else {
        int devnull = ::open("/dev/null", O_RDONLY);
        ::dup2(devnull, 0);
      }
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
    }
    for (int fd = 3; fd < 1024; ++fd)
      if (fd != report[1]) ::close(fd);
    int e = ENOENT;
    if (::chdir(dir_c) != 0) {
      e = errno;
    } else {
      for (const char* c : candidates_c) {
        ::execve(c, argv_p.data(), env_p.data());
        if (errno != ENOENT && errno != ENOTDIR) e = errno;
      }
    }
    (void)!::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(report[1]);
  if (tty) {
    ::close(slave);
    p.in = master;
    p.out = ::dup(master);
  } else {
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    if (with_stdin)
      p.in = in[1];
    else
      ::close(in[1]);
    p.out = out[0];
    p.err = err[0];
  }
  p.pid = pid;
  int e = 0;
  ssize_t got;
  while ((got = ::read(report[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == sizeof e) {
    // As containerd and runc word it.
    p.start_error =
        "error executing command in container: failed to exec in container: failed "
        "to start exec \"" +
        hex_id() +
        "\": OCI runtime exec failed: exec failed: "
        "unable to start container process: exec: \"" +
        argv[0] + "\": " + (e == ENOENT ? "executable file not found in $PATH" : std::strerror(e)) +
        ": unknown";
  }
  return p;
}

}  // namespace

void FakeKube::Impl::serve_exec(const httplib::Request& req, httplib::Response& res,
                                const std::string& ns, const std::string& name) {
  if (req.method != "GET" && req.method != "POST") throw kube::method_not_allowed();
  const bool websocket = res.has_header(kExecUpgrade);
  res.headers.erase(kExecUpgrade);
  std::vector<std::string> command;
  auto range = req.params.equal_range("command");
  for (auto it = range.first; it != range.second; ++it) command.push_back(it->second);
  const bool tty = req.get_param_value("tty") == "true" || req.get_param_value("tty") == "1";
  auto flag = [&](const char* key) {
    const std::string v = req.get_param_value(key);
    return v == "true" || v == "1";
  };
  std::lock_guard lock(mu);
  json* pod = find(*kube::find_type("", "v1", "pods"), ns, name);
  if (!pod) throw kube::not_found(*kube::find_type("", "v1", "pods"), name);
  std::vector<std::string> names;
  for (const auto& c : (*pod)["spec"].value("containers", json::array()))
    names.push_back(c.value("name", ""));
  std::string container = req.get_param_value("container");
  if (container.empty()) {
    if (names.size() != 1) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
      throw kube::bad_request("a container name must be specified for pod " + name +
                              ", choose one of: [" + list + "]");
    }
    container = names[0];
  } else if (std::find(names.begin(), names.end(), container) == names.end()) {
    throw kube::bad_request("container " + container + " is not valid for pod " + name);
  }
  if ((*pod)["spec"].value("nodeName", "").empty())
    throw kube::bad_request("pod " + name + " does not have a host assigned");
  if (!flag("stdin") && !flag("stdout") && !(flag("stderr") && !tty))
    throw kube::bad_request("you must specify at least 1 of stdin, stdout, stderr");
  if (command.empty())
    throw kube::bad_request("you must specify at least one command for the container");
  const std::string uid = (*pod)["metadata"].value("uid", "");
  auto it = pods.find(uid);
  // Only the first container runs in the fake; the kubelet finds running containers only.
  const bool running = it != pods.end() && it->second->running && container == names[0];
  const std::string not_found = "container not found (\"" + container + "\")";
  if (!websocket) {
    if (req.get_header_value("Upgrade").empty())
      throw kube::bad_request("Upgrade request required");
    if (!running) {
      // The kubelet's plain-text answer, passed on by the API server's proxy.
      res.status = 500;
      res.set_content(not_found, "text/plain; charset=utf-8");
      return;
    }
    // SPDY (kubectl's fallback after a failed WebSocket handshake) is not served (docs/fakes.md).
    throw kube::bad_request(
        "the fake API server serves pods/exec over WebSocket only "
        "(v5.channel.k8s.io, v4.channel.k8s.io), not " +
        req.get_header_value("Upgrade"));
  }
  // The protocol, in the client's order of preference; none offered is the oldest, "".
  const std::vector<std::string> offered = offered_protocols(req);
  std::optional<std::string> protocol;
  if (offered.empty()) protocol = "";
  for (const auto& p : offered)
    if (!protocol && (p == kV5 || p == kV4 || p == kV1)) protocol = p;
  if (!protocol) {
    // golang.org/x/net/websocket's answer to a handshake the kubelet refused: no body.
    res.status = 403;
    return;
  }
  if (!running) {
    if (*protocol != kV5) {
      res.status = 500;
      res.set_content(not_found, "text/plain; charset=utf-8");
      return;
    }
    // v5: the API server's stream translator has upgraded already, and says it on channel 3.
    res.set_header(kExecFailure, "unable to upgrade connection: " + not_found);
  }
  res.status = 101;
  res.set_header(kExecContainer, container);
  res.set_header(kExecPodUid, uid);
  res.set_header(kExecProtocol, *protocol);
}

bool FakeKube::Impl::claim_exec(const std::string& head, std::string& extra, TlsConnection& conn) {
  httplib::Request req;
  if (!parse_head(head, req) || !is_exec_upgrade(req)) return false;
  if (int ms = round_trip_ms(); ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  httplib::Response res;
  res.set_header(kExecUpgrade, "1");
  handle(req, res, "");
  if (res.status != 101) {
    kube::write_refusal(res, conn);
    return true;
  }
  const std::string protocol = res.get_header_value(kExecProtocol);
  const bool v5 = protocol == kV5;
  const bool structured = v5 || protocol == kV4;
  std::string response =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
      "Connection: Upgrade\r\nSec-WebSocket-Accept: " +
      ws::accept_value(req.get_header_value("Sec-WebSocket-Key")) + "\r\n";
  if (!protocol.empty()) response += "Sec-WebSocket-Protocol: " + protocol + "\r\n";
  if (!conn.write(response + "\r\n")) return true;
  auto send = [&](unsigned char channel, std::string_view data) {
    std::string m(1, static_cast<char>(channel));
    return conn.write(ws::encode_frame(ws::Opcode::binary, m.append(data)));
  };
  auto finish = [&](const json& status) {
    // v1 carries only a failure's message, as text; v4 and v5 the Status.
    if (structured)
      send(3, status.dump());
    else if (status.value("status", "") != "Success")
      send(3, status.value("message", ""));
    conn.write(ws::encode_frame(ws::Opcode::close, ws::close_payload(1000)));
  };
  if (res.has_header(kExecFailure)) {
    finish(internal_error(res.get_header_value(kExecFailure)));
    return true;
  }

  std::vector<std::string> argv;
  auto range = req.params.equal_range("command");
  for (auto it = range.first; it != range.second; ++it) argv.push_back(it->second);
  auto flag = [&](const char* key) {
    const std::string v = req.get_param_value(key);
    return v == "true" || v == "1";
  };
  const bool tty = flag("tty");
  const bool with_stdin = flag("stdin");
  const bool want_out = flag("stdout");
  const bool want_err = flag("stderr") && !tty;
  const std::string uid = res.get_header_value(kExecPodUid);
  std::vector<std::string> env;
  std::string dir;
  {
    std::lock_guard lock(mu);
    if (auto it = pods.find(uid); it != pods.end() && it->second->running) {
      env = it->second->env;
      dir = it->second->dir;
    }
  }
  Process proc;
  // The client's size comes first (kubectl and kinetic send it on connecting): the command
  // starts with it, as a runtime sets an exec's console size before starting it, not 24x80.
  winsize size{24, 80, 0, 0};
  for (int waited = 0; tty && waited < 2000;) {  // a bound for a client that sends none
    ws::MessageReader peek(/*expect_masked=*/true);
    peek.feed(extra);
    bool any = false, sized = false;
    try {
      while (auto m = peek.next()) {
        any = true;
        if (m->opcode != ws::Opcode::binary || m->payload.size() < 2 || m->payload[0] != 4)
          continue;
        json wh = json::parse(m->payload.substr(1), nullptr, false);
        if (!wh.is_object()) continue;
        size.ws_col = static_cast<unsigned short>(wh.value("Width", 80));
        size.ws_row = static_cast<unsigned short>(wh.value("Height", 24));
        sized = true;
      }
    } catch (const ws::ProtocolError&) {
      break;
    }
    if (sized || any) break;
    if (!conn.pending()) {
      pollfd p{conn.fd(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) {
        waited += 100;
        continue;
      }
    }
    auto got = conn.read_some();
    if (!got) break;
    extra += *got;
  }
  if (!dir.empty()) proc = spawn(argv, env, dir, with_stdin, tty, size);
  if (proc.pid > 0 && proc.start_error.empty()) {
    std::lock_guard lock(mu);
    // Registered while the container runs, or not at all: then it dies at once, as with it.
    if (auto it = pods.find(uid); it != pods.end() && it->second->running) {
      it->second->exec_pids.insert(proc.pid);
    } else {
      ::kill(-proc.pid, SIGKILL);
      ::kill(proc.pid, SIGKILL);
    }
  }
  if (dir.empty()) {
    finish(internal_error("unable to upgrade connection: container not found (\"" +
                          res.get_header_value(kExecContainer) + "\")"));
    return true;
  }
  if (!proc.start_error.empty()) {
    if (proc.pid > 0)
      while (::waitpid(proc.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    for (int fd : {proc.in, proc.out, proc.err})
      if (fd >= 0) ::close(fd);
    finish(internal_error(proc.start_error));
    return true;
  }
  // The kubelet's first message: an empty one on the lowest writable channel, "ready".
  if (want_out)
    send(1, "");
  else if (want_err)
    send(2, "");
  else
    send(3, "");

  ws::MessageReader reader(/*expect_masked=*/true);
  reader.feed(extra);
  bool out_open = proc.out >= 0, err_open = proc.err >= 0, client_open = true;
  char buf[16384];
  while (out_open || err_open) {
    // Frames from the client.
    while (client_open) {
      std::optional<ws::Message> m;
      try {
        m = reader.next();
      } catch (const ws::ProtocolError&) {
        client_open = false;
        break;
      }
      if (!m) break;
      if (m->opcode == ws::Opcode::close) {
        client_open = false;
        break;
      }
      if (m->opcode == ws::Opcode::ping) conn.write(ws::encode_frame(ws::Opcode::pong, m->payload));
      if (m->opcode != ws::Opcode::binary || m->payload.empty()) continue;
      const auto channel = static_cast<unsigned char>(m->payload[0]);
      std::string_view data(m->payload);
      data.remove_prefix(1);
      if (channel == 0 && proc.in >= 0) write_all(proc.in, data);
      if (channel == 4 && tty) {
        json size = json::parse(data, nullptr, false);
        if (size.is_object()) {
          winsize w{static_cast<unsigned short>(size.value("Height", 0)),
                    static_cast<unsigned short>(size.value("Width", 0)), 0, 0};
          ::ioctl(proc.in, TIOCSWINSZ, &w);
        }
      }
      // v5's "stdin is closed"; a pty's input cannot be closed apart from its output.
      if (channel == 255 && v5 && data == std::string_view("\0", 1) && proc.in >= 0 && !tty) {
        ::close(proc.in);
        proc.in = -1;
      }
    }
    if (!client_open) {
      // The client went away: the command is stopped (docs/fakes.md: a real kubelet leaves it).
      ::kill(-proc.pid, SIGKILL);
    }
    pollfd fds[3];
    int n = 0, out_at = -1, err_at = -1, client_at = -1;
    if (client_open && !conn.pending()) {
      client_at = n;
      fds[n++] = {conn.fd(), POLLIN, 0};
    }
    if (out_open) {
      out_at = n;
      fds[n++] = {proc.out, POLLIN, 0};
    }
    if (err_open) {
      err_at = n;
      fds[n++] = {proc.err, POLLIN, 0};
    }
    if (client_open && conn.pending()) {
      auto got = conn.read_some();
      if (!got)
        client_open = false;
      else
        reader.feed(*got);
      continue;
    }
    if (::poll(fds, static_cast<nfds_t>(n), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (client_at >= 0 && fds[client_at].revents) {
      auto got = conn.read_some();
      if (!got)
        client_open = false;
      else
        reader.feed(*got);
    }
    for (auto [at, fd, open, channel] :
         {std::tuple{out_at, proc.out, &out_open, 1}, std::tuple{err_at, proc.err, &err_open, 2}}) {
      if (at < 0 || !fds[at].revents) continue;
      ssize_t got = ::read(fd, buf, sizeof buf);
      if (got > 0) {
        if (channel == 1 ? want_out : want_err)
          if (client_open) send(static_cast<unsigned char>(channel), std::string_view(buf, got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        *open = false;  // a pty's master reads EIO once the last process holding it is gone
      }
    }
  }
  int status = 0;
  while (::waitpid(proc.pid, &status, 0) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard lock(mu);
    if (auto it = pods.find(uid); it != pods.end()) it->second->exec_pids.erase(proc.pid);
  }
  for (int fd : {proc.in, proc.out, proc.err})
    if (fd >= 0) ::close(fd);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (client_open) {
    finish(exit_status(code, argv));
    // The client answers the close; its frame ends the conversation.
    while (auto got = conn.read_some()) {
      reader.feed(*got);
      bool closed = false;
      try {
        while (auto m = reader.next())
          if (m->opcode == ws::Opcode::close) closed = true;
      } catch (const ws::ProtocolError&) {
        closed = true;
      }
      if (closed) break;
    }
  }
  return true;
}

}  // namespace kinetic::fakes
