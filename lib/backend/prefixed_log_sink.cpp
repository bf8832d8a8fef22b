#include "backend/prefixed_log_sink.h"

namespace kinetic {

class PrefixedLogSink::Source : public LogSink {
 public:
  Source(PrefixedLogSink& parent, std::string prefix)
      : parent_(parent), prefix_(std::move(prefix)) {}
  void write(LogStream stream, std::string_view data) override {
    std::lock_guard lock(parent_.mu_);
    std::string& partial = partial_[static_cast<int>(stream)];
    partial.append(data);
    parent_.emit(prefix_, stream, partial, false);
  }
  // Caller holds the parent's mu_.
  void flush() {
    for (auto& [stream, partial] : partial_)
      parent_.emit(prefix_, static_cast<LogStream>(stream), partial, true);
  }

 private:
  PrefixedLogSink& parent_;
  const std::string prefix_;
  std::map<int, std::string> partial_;  // by stream: the line not yet ended
};

PrefixedLogSink::PrefixedLogSink(LogSink& inner) : inner_(inner) {}
PrefixedLogSink::~PrefixedLogSink() {
  flush();
}

LogSink& PrefixedLogSink::prefixed(const std::string& prefix) {
  std::lock_guard lock(mu_);
  auto& s = sources_[prefix];
  if (!s) s = std::make_unique<Source>(*this, prefix);
  return *s;
}

void PrefixedLogSink::flush(const std::string& prefix) {
  std::lock_guard lock(mu_);
  if (auto it = sources_.find(prefix); it != sources_.end()) it->second->flush();
}

void PrefixedLogSink::flush() {
  std::lock_guard lock(mu_);
  for (auto& [prefix, s] : sources_) s->flush();
}

// Caller holds mu_.
void PrefixedLogSink::emit(const std::string& prefix, LogStream stream, std::string& partial,
                           bool all) {
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
