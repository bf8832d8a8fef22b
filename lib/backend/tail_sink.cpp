#include "backend/tail_sink.h"

namespace kinetic {

void TailSink::write(LogStream stream, std::string_view data) {
  if (stream != LogStream::system) job_bytes_ += data.size();
  std::string& partial = partial_[static_cast<size_t>(stream)];
  partial.append(data);
  size_t start = 0;
  for (size_t nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
    keep(stream, partial.substr(start, nl + 1 - start));
    start = nl + 1;
  }
  partial.erase(0, start);
}

void TailSink::keep(LogStream stream, std::string line) {
  if (limit_ == 0) return;
  lines_.emplace_back(stream, std::move(line));
  if (lines_.size() > limit_) lines_.pop_front();
}

void TailSink::replay(LogSink& sink) {
  for (size_t s = 0; s < partial_.size(); ++s) {
    if (partial_[s].empty()) continue;
    keep(static_cast<LogStream>(s), std::move(partial_[s]));
    partial_[s].clear();
  }
  for (const auto& [stream, line] : lines_) sink.write(stream, line);
  lines_.clear();
}

void SkipSink::write(LogStream stream, std::string_view data) {
  if (stream == LogStream::system) {
    if (skip_ == 0) next_.write(stream, data);
    return;
  }
  if (skip_ >= data.size()) {
    skip_ -= data.size();
    return;
  }
  next_.write(stream, data.substr(skip_));
  skip_ = 0;
}

void tail_then_follow(size_t lines, LogSink& sink, const std::function<void(LogSink&)>& so_far,
                      const std::function<void(LogSink&)>& follow) {
  TailSink last(lines);
  so_far(last);
  last.replay(sink);
  if (!follow) return;
  SkipSink after(last.job_bytes(), sink);
  follow(after);
}

}  // namespace kinetic
