#include "backend/host_log_sink.h"

namespace kinetic {

class HostLogSink::Host : public LogSink {
 public:
  Host(HostLogSink& parent, int host) : parent_(parent), host_(host) {}
  void write(LogStream stream, std::string_view data) override {
    std::lock_guard lock(parent_.mu_);
    std::string& partial = partial_[static_cast<int>(stream)];
    partial.append(data);
    parent_.emit(host_, stream, partial, false);
  }
  void flush() {
    for (auto& [stream, partial] : partial_)
      parent_.emit(host_, static_cast<LogStream>(stream), partial, true);
  }

 private:
  HostLogSink& parent_;
  const int host_;
  std::map<int, std::string> partial_;  // by stream: the line not yet ended
};

HostLogSink::HostLogSink(LogSink& inner) : inner_(inner) {}
HostLogSink::~HostLogSink() {
  flush();
}

LogSink& HostLogSink::host(int host) {
  std::lock_guard lock(mu_);
  auto& h = hosts_[host];
  if (!h) h = std::make_unique<Host>(*this, host);
  return *h;
}

void HostLogSink::flush() {
  std::lock_guard lock(mu_);
  for (auto& [n, h] : hosts_) h->flush();
}

// Caller holds mu_.
void HostLogSink::emit(int host, LogStream stream, std::string& partial, bool all) {
  const std::string prefix = "[host " + std::to_string(host) + "] ";
  size_t start = 0;
  for (size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1)
    inner_.write(stream, prefix + partial.substr(start, nl - start + 1));
  partial.erase(0, start);
  if (all && !partial.empty()) {
    inner_.write(stream, prefix + partial + "\n");
    partial.clear();
  }
}

}  // namespace kinetic
