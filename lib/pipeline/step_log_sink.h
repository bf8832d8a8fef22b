// The output of steps running at once, on one sink: each complete line of a step reaches it
// whole, prefixed "[STEP] ", so lines of different steps interleave but never mix (the
// pipeline's counterpart of backend/host_log_sink.h's "[host N] ").
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend/backend.h"

namespace kinetic {

class StepLogSink {
 public:
  explicit StepLogSink(LogSink& inner);
  ~StepLogSink();
  StepLogSink(const StepLogSink&) = delete;
  StepLogSink& operator=(const StepLogSink&) = delete;

  // The sink for STEP's output (lives as long as this object; safe to use from any thread).
  LogSink& step(const std::string& name);
  // Writes what is left of STEP's last line (a line without its newline).
  void flush(const std::string& name);

 private:
  class Step;
  // Caller holds mu_.
  void emit(const std::string& prefix, LogStream stream, std::string& partial, bool all);

  LogSink& inner_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Step>> steps_;
};

}  // namespace kinetic
