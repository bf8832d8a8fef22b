// Output of several sources (a slice's hosts, a pipeline's steps) into one sink: each source
// writes from a thread of its own, and each of its complete lines reaches the sink whole,
// prefixed ("[host N] ", "[STEP] "), so lines of different sources interleave but never mix.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend/backend.h"

namespace kinetic {

class PrefixedLogSink {
 public:
  explicit PrefixedLogSink(LogSink& inner);
  ~PrefixedLogSink();  // flushes
  PrefixedLogSink(const PrefixedLogSink&) = delete;
  PrefixedLogSink& operator=(const PrefixedLogSink&) = delete;

  // The sink whose lines carry PREFIX (lives as long as this object; safe from any thread).
  LogSink& prefixed(const std::string& prefix);
  // A slice's host N (`run --all-hosts`, `logs --all-hosts`): "[host N] ".
  LogSink& host(int host) { return prefixed("[host " + std::to_string(host) + "] "); }
  // Writes what is left of PREFIX's last line (a line without its newline).
  void flush(const std::string& prefix);
  // The same for every source.
  void flush();

 private:
  class Source;
  void emit(const std::string& prefix, LogStream stream, std::string& partial, bool all);

  LogSink& inner_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Source>> sources_;
};

}  // namespace kinetic
