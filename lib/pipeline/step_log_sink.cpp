#include "pipeline/step_log_sink.h"

namespace kinetic {

class StepLogSink::Step : public LogSink {
 public:
  Step(StepLogSink& parent, const std::string& name)
      : parent_(parent), prefix_("[" + name + "] ") {}
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
  StepLogSink& parent_;
  const std::string prefix_;
  std::map<int, std::string> partial_;  // by stream: the line not yet ended
};

StepLogSink::StepLogSink(LogSink& inner) : inner_(inner) {}
StepLogSink::~StepLogSink() = default;

LogSink& StepLogSink::step(const std::string& name) {
  std::lock_guard lock(mu_);
  auto& s = steps_[name];
  if (!s) s = std::make_unique<Step>(*this, name);
  return *s;
}

void StepLogSink::flush(const std::string& name) {
  std::lock_guard lock(mu_);
  if (auto it = steps_.find(name); it != steps_.end()) it->second->flush();
}

void StepLogSink::emit(const std::string& prefix, LogStream stream, std::string& partial,
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
