// The local runner's log: one append-only file of framed records (1 byte stream, 4 bytes
// little-endian length, payload), so stdout and stderr keep their order and their identity and a
// reader in another process can follow it while it grows. A record of stream 4 (kTimeMark, 8
// bytes: little-endian Unix seconds) comes before the first record of each new second, so
// `logs --since` finds where a time starts by reading headers alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "backend/backend.h"
#include "core/fs.h"

namespace kinetic {

class JobLogWriter {
 public:
  // NOTIFY_FD, when not -1, gets a byte after each record (see SupervisorSetup::notify_fd).
  // CLOCK says the Unix second a record is written in (tests); null: the system clock.
  explicit JobLogWriter(const fs::path& path, int notify_fd = -1,
                        std::function<int64_t()> clock = nullptr);
  ~JobLogWriter();
  JobLogWriter(const JobLogWriter&) = delete;
  JobLogWriter& operator=(const JobLogWriter&) = delete;
  void write(LogStream stream, std::string_view data);

 private:
  int fd_ = -1;
  int notify_fd_ = -1;
  std::function<int64_t()> clock_;
  int64_t marked_second_ = -1;  // of the last time mark written
};

// Decodes records from a growing file; keeps a partial record until the rest arrives.
class JobLogReader {
 public:
  explicit JobLogReader(fs::path path) : path_(std::move(path)) {}
  ~JobLogReader();
  // Sends every complete record written since the last call to SINK. Returns false when the
  // file does not exist yet.
  bool drain(LogSink& sink);
  // Sends only the last LINES lines of the complete records written so far (as TailSink keeps
  // them); a drain then goes on after them. Reads the records' 5-byte headers, not their
  // payloads, but for the last ones, as far back as LINES lines need. False as drain.
  bool tail(LogSink& sink, size_t lines);
  // Skips the records written before Unix time SINCE (to the second): a drain then starts at
  // the first one written at or after it. A log of an older kinetic, without time marks, is
  // skipped whole. False as drain.
  bool skip_before(int64_t since);

 private:
  bool open();

  fs::path path_;
  int fd_ = -1;
  std::string pending_;
};

}  // namespace kinetic
