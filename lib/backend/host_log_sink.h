// Every host's lines of a multi-host slice into one sink (`run --all-hosts`, `logs --all-hosts`):
// each host writes from a thread of its own, and each of its complete lines reaches the sink
// whole, prefixed "[host N] ", so lines of different hosts interleave but never mix.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend/backend.h"

namespace kinetic {

class HostLogSink {
 public:
  explicit HostLogSink(LogSink& inner);
  ~HostLogSink();  // flushes
  HostLogSink(const HostLogSink&) = delete;
  HostLogSink& operator=(const HostLogSink&) = delete;

  // The sink for HOST's lines (lives as long as this object; safe to use from any thread).
  LogSink& host(int host);
  // Writes what is left of each host's last line (a line without its newline).
  void flush();

 private:
  class Host;
  void emit(int host, LogStream stream, std::string& partial, bool all);

  LogSink& inner_;
  std::mutex mu_;
  std::map<int, std::unique_ptr<Host>> hosts_;
};

}  // namespace kinetic
