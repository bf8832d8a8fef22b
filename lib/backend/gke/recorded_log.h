// A host's recorded log in the bucket (docs/run-record.md "Log parts"), read at transfer speed:
// each attempt is log/composed (parts 1..K, K in its metadata "parts") then the parts after K,
// fetched with ranged GETs several at once and written in order as they arrive; `--tail N`
// fetches only the end. A part deleted between the listing and its read (the bootstrap composed
// it meanwhile) is found again by listing anew and going on from the byte already written: the
// composite only grows at its end, so a byte's offset in the attempt's log never changes.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "gcp/storage.h"

namespace kinetic::gke {

// One attempt's log objects, in log order: log/composed first (when there is one), then the
// parts it does not hold.
using AttemptLogObjects = std::vector<gcp::ObjectInfo>;

struct AttemptLog {
  AttemptLogObjects objects;
  // Which bytes were stderr: log/composed.err and the parts' sidecars PPPPPP.err, each a run of
  // 16-byte big-endian (offset in the attempt's log, length) spans. None in an older record.
  std::vector<gcp::ObjectInfo> stderr_spans;
};

// The attempts under ATTEMPTS_PREFIX (".../attempts/") that have a log, by number, from one
// listing.
std::map<int, AttemptLog> list_attempt_logs(gcp::StorageClient& storage, const std::string& bucket,
                                            const std::string& attempts_prefix);

struct RecordedLogOptions {
  // A fresh transport per parallel reader (clients are not thread-safe); null: one request at
  // a time on STORAGE.
  std::function<std::shared_ptr<http::Transport>()> make_transport;
  std::string endpoint;               // the storage API root, for those readers
  int parallelism = 8;                // requests at once (4 times more when every piece is small)
  uint64_t piece_bytes = 4ull << 20;  // one ranged GET's
};

class RecordedLog {
 public:
  RecordedLog(gcp::StorageClient& storage, std::string bucket, std::string attempts_prefix,
              RecordedLogOptions options);

  // Every attempt's log to SINK (each one's after a system line "attempt N" when there are
  // several), its stderr bytes as LogStream::err (an older record's all as out); false when
  // none has a log. With SINCE (Unix seconds), only from the end of the last part uploaded
  // before it: the bootstrap's end marks in composed.err, a part's own upload time.
  bool print(LogSink& sink, std::optional<int64_t> since = std::nullopt);
  // Only the last LINES lines of that (as TailSink keeps them), reading back from the end only
  // as far as they need; with LATEST_ONLY, of the newest attempt alone and without its header.
  bool print_tail(LogSink& sink, size_t lines, bool latest_only = false);

  struct Segment;  // a header line, or a range of a log object
  // Each attempt's stderr spans, (offset, end) sorted and merged.
  using Spans = std::map<int, std::vector<std::pair<uint64_t, uint64_t>>>;

 private:
  // Reads ATTEMPTS' stderr spans into SPANS (one parallel round, none without any); false when
  // one of their objects was gone (the bootstrap composed it meanwhile). With SINCE_FROM, also
  // each attempt's first byte written at or after SINCE.
  bool read_spans(const std::map<int, AttemptLog>& attempts, Spans& spans,
                  std::map<int, uint64_t>* since_from = nullptr, int64_t since = 0);
  // As read_spans, only the spans of the attempts in AFTER that end after its offset for them
  // (where a tail starts), reading each attempt's sidecars back from their end.
  bool read_spans_after(const std::map<int, AttemptLog>& attempts,
                        const std::map<int, uint64_t>& after, Spans& spans);
  // Fetches the end of ATTEMPTS' log into KEPT (each piece and its bytes, in order), back as far
  // as LINES lines need; false when an object was gone.
  bool read_tail(const std::map<int, AttemptLog>& attempts, size_t lines,
                 std::deque<std::pair<Segment, std::string>>& kept);
  using Deliver = std::function<void(const Segment&, const std::string& bytes)>;
  // Fetches SEGMENTS (several at once when make_transport is set) and hands each to DELIVER in
  // order, on this thread. Returns how many were delivered: fewer than all when an object was
  // gone (the one after the last delivered).
  size_t fetch(const std::vector<Segment>& segments, const Deliver& deliver);

  gcp::StorageClient& storage_;
  std::string bucket_;
  std::string prefix_;
  RecordedLogOptions options_;
};

}  // namespace kinetic::gke
