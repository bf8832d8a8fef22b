#include "backend/gke/pod_port_dialer.h"

#include <poll.h>

#include "k8s/port_forward.h"

namespace kinetic::gke {
namespace {

// How often the forward reads the pod for its end: one GET a second, and a forward that outlives
// its pod by this much only passes on the API server's refusals.
constexpr int kPodPollMs = 1000;

class WebSocketPortStream : public PortStream {
 public:
  explicit WebSocketPortStream(std::unique_ptr<k8s::PortForwardStream> stream)
      : stream_(std::move(stream)) {}
  int fd() const override { return stream_->fd(); }
  void send(std::string_view data) override { stream_->send(data); }
  std::optional<std::string> receive() override { return stream_->receive(); }
  void close_write() override { stream_->close(); }
  std::string error() const override { return stream_->error(); }

 private:
  std::unique_ptr<k8s::PortForwardStream> stream_;
};

class PodPortDialer : public PortDialer {
 public:
  PodPortDialer(PodTarget target, std::shared_ptr<auth::TokenCache> credentials, int verbosity,
                std::function<std::optional<nlohmann::json>()> read_pod)
      : target_(std::move(target)),
        credentials_(std::move(credentials)),
        verbosity_(verbosity),
        read_pod_(std::move(read_pod)) {}

  std::unique_ptr<PortStream> dial(int port) override {
    std::string pod = target_.pod;
    if (target_.choose_pod) pod = target_.choose_pod();
    return std::make_unique<WebSocketPortStream>(k8s::open_port_forward(
        target_.server, target_.ca_pem, *credentials_, target_.ns, pod, port, verbosity_));
  }

  std::string wait_for_end(int stop_fd) override {
    for (;;) {
      pollfd p{stop_fd, POLLIN, 0};
      if (::poll(&p, 1, kPodPollMs) > 0) return "";
      // A failed read (the API server busy a moment) is no end: the next one decides.
      try {
        std::string why = pod_end(read_pod_(), target_.job, target_.pod);
        if (!why.empty()) return why;
      } catch (const std::exception&) {
      }
    }
  }

  std::string where() const override { return "pod " + target_.pod; }

 private:
  PodTarget target_;
  std::shared_ptr<auth::TokenCache> credentials_;
  int verbosity_;
  std::function<std::optional<nlohmann::json>()> read_pod_;
};

}  // namespace

std::string pod_end(const std::optional<nlohmann::json>& pod, const std::string& job,
                    const std::string& name) {
  if (!pod) return job + " ended: its pod " + name + " is gone";
  const std::string phase = pod->value("status", nlohmann::json::object()).value("phase", "");
  if (phase == "Succeeded" || phase == "Failed")
    return job + " ended: its pod " + name + " " + (phase == "Succeeded" ? "succeeded" : "failed");
  if ((*pod)["metadata"].contains("deletionTimestamp"))
    return job + " ended: its pod " + name + " is being deleted";
  return "";
}

std::unique_ptr<PortDialer> pod_port_dialer(
    PodTarget target, std::shared_ptr<auth::TokenCache> credentials, int verbosity,
    std::function<std::optional<nlohmann::json>()> read_pod) {
  return std::make_unique<PodPortDialer>(std::move(target), std::move(credentials), verbosity,
                                         std::move(read_pod));
}

}  // namespace kinetic::gke
