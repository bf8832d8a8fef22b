// kubectl port-forward's SPDY session with the fake kubelet (kubernetes
// pkg/kubelet/cri/streaming/portforward/httpstream.go, and kubectl's
// staging/src/k8s.io/kubectl/pkg/cmd/portforward): for each local connection kubectl opens an
// error stream, then a data stream, both with headers streamtype (error, data), port and
// requestid; each stream gets a SYN_REPLY; once a request has both, the kubelet connects to the
// pod's port (here 127.0.0.1:PORT) and copies bytes between it and the data stream. kubectl
// half-closes the error stream at once and the data stream when its client is done (a FIN: the
// pod's connection is half-closed too); the pod's end is a FIN on both streams; a port that
// refuses is the runtime's message on the error stream. PINGs are answered.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <vector>

#include "core/socket.h"
#include "fakes/fake_kube_internal.h"
#include "fakes/fake_spdy.h"

namespace kinetic::fakes::kube {

namespace {

// One forwarded connection: kubectl's request id, its two streams, the pod's connection.
struct SpdyForward {
  int port = 0;
  uint32_t error_stream = 0;
  uint32_t data_stream = 0;
  int fd = -1;  // -1: not connected yet, or done
  bool done = false;
};

class SpdySession {
 public:
  SpdySession(TlsConnection& conn, std::string pod, std::string uid)
      : conn_(conn), pod_(std::move(pod)), uid_(std::move(uid)) {}
  ~SpdySession() {
    for (auto& [id, f] : forwards_)
      if (f.fd >= 0) ::close(f.fd);
  }

  // Handles a frame from kubectl; false when the session is over (GOAWAY, a broken block).
  bool on_frame(const spdy::Frame& f) {
    if (!f.control) return on_data(f);
    switch (f.type) {
      case spdy::kSynStream:
        return on_syn_stream(f);
      case spdy::kPing:
        conn_.write(spdy::control_frame(spdy::kPing, 0, f.payload));
        return true;
      case spdy::kRstStream:
        for (auto& [id, fw] : forwards_)
          if (fw.data_stream == f.stream_id) finish(fw);
        return true;
      case spdy::kGoAway:
        return false;
      default:  // SETTINGS, WINDOW_UPDATE, HEADERS: nothing the fake acts on
        return true;
    }
  }

  // The pod's connections to poll, and what each one is.
  void add_fds(std::vector<pollfd>& fds, std::vector<SpdyForward*>& owners) {
    for (auto& [id, f] : forwards_)
      if (f.fd >= 0 && !f.done) {
        fds.push_back({f.fd, POLLIN, 0});
        owners.push_back(&f);
      }
  }

  // The pod's bytes on F's connection to its data stream; its end ends the forward.
  void on_pod_readable(SpdyForward& f) {
    char buf[65536];
    ssize_t n = ::recv(f.fd, buf, sizeof buf, 0);
    if (n > 0) {
      conn_.write(
          spdy::data_frame(f.data_stream, 0, std::string_view(buf, static_cast<size_t>(n))));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      finish(f);
    }
  }

 private:
  bool on_syn_stream(const spdy::Frame& f) {
    auto headers = inflater_.inflate(spdy::syn_stream_block(f.payload));
    if (!headers) return false;
    conn_.write(spdy::syn_reply(f.stream_id, deflater_.deflate({})));
    SpdyForward& fw = forwards_[(*headers)["requestid"]];
    fw.port = std::atoi((*headers)["port"].c_str());
    const std::string type = (*headers)["streamtype"];
    if (type == "error") fw.error_stream = f.stream_id;
    if (type == "data") fw.data_stream = f.stream_id;
    if (fw.error_stream && fw.data_stream && fw.fd < 0 && !fw.done) connect(fw);
    return true;
  }

  void connect(SpdyForward& f) {
    f.fd = connect_loopback(f.port);
    if (f.fd >= 0) return;
    conn_.write(spdy::data_frame(f.error_stream, 0, forward_failure(f.port, pod_, uid_, errno)));
    finish(f);
  }

  bool on_data(const spdy::Frame& f) {
    for (auto& [id, fw] : forwards_) {
      if (fw.data_stream != f.stream_id || fw.fd < 0 || fw.done) continue;
      if (!f.payload.empty() && !send_all(fw.fd, f.payload)) finish(fw);
      if (!fw.done && (f.flags & spdy::kFlagFin)) ::shutdown(fw.fd, SHUT_WR);
    }
    return true;
  }

  // Both streams ended from the kubelet's side, the pod's connection closed.
  void finish(SpdyForward& f) {
    if (f.done) return;
    f.done = true;
    if (f.fd >= 0) ::close(f.fd);
    f.fd = -1;
    if (f.data_stream) conn_.write(spdy::data_frame(f.data_stream, spdy::kFlagFin, ""));
    if (f.error_stream) conn_.write(spdy::data_frame(f.error_stream, spdy::kFlagFin, ""));
  }

  TlsConnection& conn_;
  std::string pod_, uid_;
  spdy::HeaderInflater inflater_;
  spdy::HeaderDeflater deflater_;
  std::map<std::string, SpdyForward> forwards_;  // by request id
};

}  // namespace

void serve_spdy_port_forward(TlsConnection& conn, const std::string& extra, const std::string& pod,
                             const std::string& uid) {
  SpdySession session(conn, pod, uid);
  spdy::FrameReader reader;
  reader.feed(extra);
  for (;;) {
    while (auto f = reader.next())
      if (!session.on_frame(*f)) return;
    if (conn.pending()) {
      auto got = conn.read_some();
      if (!got) return;
      reader.feed(*got);
      continue;
    }
    std::vector<pollfd> fds = {{conn.fd(), POLLIN, 0}};
    std::vector<SpdyForward*> owners = {nullptr};
    session.add_fds(fds, owners);
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) {
      auto got = conn.read_some();
      if (!got) return;
      reader.feed(*got);
    }
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents) session.on_pod_readable(*owners[i]);
  }
}

}  // namespace kinetic::fakes::kube
