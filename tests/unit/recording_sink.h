// A LogSink that keeps every write (stream and bytes) for the sink tests to look at.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"

namespace kinetic::test {

struct RecordingSink : LogSink {
  std::vector<std::pair<LogStream, std::string>> writes;
  void write(LogStream stream, std::string_view data) override {
    writes.emplace_back(stream, std::string(data));
  }
  // Everything written, in order, whatever the stream.
  std::string text() const {
    std::string all;
    for (const auto& [stream, data] : writes) all += data;
    return all;
  }
};

}  // namespace kinetic::test
