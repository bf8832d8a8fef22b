// A job's output on a command's own streams (`run` as it follows, `logs`): the job's stdout to
// IO.out, its stderr to IO.err, kinetic's own notes to IO.err marked "kinetic: ". Each write is
// flushed at once, so the output shows as the job writes it. The one terminal LogSink.
#pragma once

#include "backend/backend.h"
#include "render/output.h"

namespace kinetic {

class StreamSink : public LogSink {
 public:
  explicit StreamSink(const IOStreams& io) : io_(io) {}
  void write(LogStream stream, std::string_view data) override;

 private:
  const IOStreams& io_;
};

}  // namespace kinetic
