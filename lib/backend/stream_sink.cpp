#include "backend/stream_sink.h"

#include <cstdio>
#include <string>

namespace kinetic {
namespace {

// Unchecked: what a reader that went away (EPIPE) misses is still in the job's record.
void write_all(FILE* to, std::string_view data) {
  std::fwrite(data.data(), 1, data.size(), to);
  std::fflush(to);
}

}  // namespace

void StreamSink::write(LogStream stream, std::string_view data) {
  if (stream == LogStream::system) {
    write_all(io_.err, "kinetic: " + std::string(data));
    return;
  }
  write_all(stream == LogStream::out ? io_.out : io_.err, data);
}

}  // namespace kinetic
