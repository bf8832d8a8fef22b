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

// Host HOST of a run of SLICES slices of PER_SLICE hosts each (hosts numbered across slices,
// docs/multihost.md): "host 5", or with SLICES > 1 "slice 1 host 1".
inline std::string run_host_name(int host, int per_slice, int slices) {
  if (slices <= 1 || per_slice < 1) return "host " + std::to_string(host);
  return "slice " + std::to_string(host / per_slice) + " host " + std::to_string(host % per_slice);
}

class PrefixedLogSink {
 public:
  explicit PrefixedLogSink(LogSink& inner);
  ~PrefixedLogSink();  // flushes
  PrefixedLogSink(const PrefixedLogSink&) = delete;
  PrefixedLogSink& operator=(const PrefixedLogSink&) = delete;

  // The sink whose lines carry PREFIX (lives as long as this object; safe from any thread).
  LogSink& prefixed(const std::string& prefix);
  // A slice's host N (`run --all-hosts`, `logs --all-hosts`): "[host N] ", and a multislice
  // run's (SLICES > 1, PER_SLICE hosts each) "[slice S host H] ".
  LogSink& host(int host, int per_slice = 1, int slices = 1) {
    return prefixed("[" + run_host_name(host, per_slice, slices) + "] ");
  }
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
