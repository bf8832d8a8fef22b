#include "backend/gke/recorded_log.h"

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "backend/tail_sink.h"
#include "core/duration.h"
#include "core/error.h"

namespace kinetic::gke {

namespace {

constexpr const char* kCompositeLeaf = "composed";
// Listings after a read found an object gone, before giving up: each one means the bootstrap
// composed 31 more parts while this read ran, which takes minutes of output.
constexpr int kMaxLogRelists = 8;
// What a tail fetches first, before it knows how long the lines are; each further round 8x more.
constexpr uint64_t kTailFirstBytes = 64 << 10;
// A piece no larger than this is read with more requests at once (RecordedLog::fetch).
constexpr uint64_t kSmallPiece = 256 << 10;

// The part number a log object's name ends with ("000042"), 0 for any other name.
int log_part_number(std::string_view leaf) {
  int n = 0;
  auto [end, ec] = std::from_chars(leaf.data(), leaf.data() + leaf.size(), n);
  return ec == std::errc() && end == leaf.data() + leaf.size() ? n : 0;
}

}  // namespace

std::map<int, AttemptLog> list_attempt_logs(gcp::StorageClient& storage, const std::string& bucket,
                                            const std::string& attempts_prefix) {
  struct Found {
    std::optional<gcp::ObjectInfo> composite;
    std::map<int, gcp::ObjectInfo> parts;
    std::vector<gcp::ObjectInfo> spans;
  };
  std::map<int, Found> found;
  for (auto& o : storage.list(bucket, attempts_prefix).objects) {
    std::string_view rest = std::string_view(o.name).substr(attempts_prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos || rest.substr(slash + 1, 4) != "log/") continue;
    int attempt = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + slash, attempt);
    if (ec != std::errc() || end != rest.data() + slash || attempt <= 0) continue;
    const std::string_view leaf = rest.substr(slash + 5);
    if (leaf == kCompositeLeaf)
      found[attempt].composite = std::move(o);
    else if (const int part = log_part_number(leaf); part > 0)
      found[attempt].parts.emplace(part, std::move(o));
    else if (leaf.size() > 4 && leaf.substr(leaf.size() - 4) == ".err")
      found[attempt].spans.push_back(std::move(o));
  }
  std::map<int, AttemptLog> attempts;
  for (auto& [attempt, f] : found) {
    if (!f.composite && f.parts.empty()) continue;
    AttemptLog& log = attempts[attempt];
    int composed = 0;
    if (f.composite) {
      const auto parts = f.composite->metadata.find("parts");
      composed = parts == f.composite->metadata.end() ? 0 : log_part_number(parts->second);
      log.objects.push_back(std::move(*f.composite));
    }
    // A part the composite holds may linger a moment before the bootstrap deletes it. (Its
    // sidecar's spans may be read twice meanwhile: they mark the same bytes.)
    for (auto& [part, o] : f.parts)
      if (part > composed) log.objects.push_back(std::move(o));
    log.stderr_spans = std::move(f.spans);
  }
  return attempts;
}

// A piece of the log as printed: a header line of its own, or LENGTH bytes at FIRST of an
// object's generation. ATTEMPT and AT (the piece's offset in the attempt's log) let a read that
// found an object gone go on where it stopped.
struct RecordedLog::Segment {
  LogStream stream = LogStream::out;
  std::string text;  // a header's
  std::string name;  // empty for a header
  int64_t generation = 0;
  uint64_t first = 0, length = 0;
  int attempt = 0;
  uint64_t at = 0;
};

namespace {

using Segment = RecordedLog::Segment;

// ATTEMPT's log from byte FROM on, in pieces of at most PIECE bytes, each within one object.
void add_log_pieces(std::vector<Segment>& out, int attempt, const AttemptLogObjects& objects,
                    uint64_t from, uint64_t piece) {
  uint64_t at = 0;
  for (const auto& o : objects) {
    for (uint64_t off = std::max(from, at) - at; off < o.size;) {
      const uint64_t length = std::min(piece, o.size - off);
      out.push_back({LogStream::out, {}, o.name, o.generation, off, length, attempt, at + off});
      off += length;
    }
    at += o.size;
  }
}

// Writes BYTES, at offset AT of an attempt's log, to SINK: the bytes SPANS cover as stderr.
void write_split(LogSink& sink, const std::vector<std::pair<uint64_t, uint64_t>>& spans,
                 uint64_t at, std::string_view bytes) {
  const uint64_t end = at + bytes.size();
  auto span = std::upper_bound(spans.begin(), spans.end(), std::make_pair(at, UINT64_MAX));
  if (span != spans.begin() && std::prev(span)->second > at) --span;
  uint64_t pos = at;
  for (; span != spans.end() && span->first < end; ++span) {
    const uint64_t from = std::max(span->first, pos), to = std::min(span->second, end);
    if (from > pos) sink.write(LogStream::out, bytes.substr(pos - at, from - pos));
    if (to > from) sink.write(LogStream::err, bytes.substr(from - at, to - from));
    pos = std::max(pos, to);
  }
  if (pos < end) sink.write(LogStream::out, bytes.substr(pos - at));
}

Segment attempt_header(int attempt) {
  return {LogStream::system, "attempt " + std::to_string(attempt) + "\n", {}, 0, 0, 0, attempt, 0};
}

// The next round back from the end of WHOLE: BUDGET bytes, in log order. Segments [END, size)
// were taken already, and CUT bytes of segment END - 1 are still to take (0: none was taken).
std::vector<Segment> take_back(const std::vector<Segment>& whole, size_t& end, uint64_t& cut,
                               uint64_t budget) {
  std::vector<Segment> round;
  while (end > 0 && budget > 0) {
    Segment s = whole[end - 1];
    const uint64_t left = s.name.empty() ? 0 : (cut ? cut : s.length);
    const uint64_t take = std::min(budget, left);
    if (!s.name.empty()) {
      s.first += left - take;
      s.at += left - take;
      s.length = take;
      budget -= take;
    }
    round.push_back(s);
    cut = left - take;
    if (cut == 0) --end;
  }
  std::reverse(round.begin(), round.end());
  return round;
}

uint64_t big_endian(std::string_view b, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(b[at + i]);
  return v;
}

// A sidecar record whose length has this bit is a part's end mark: (the offset its bytes end
// at, this bit | the Unix second it was uploaded), written onto composed.err by the bootstrap.
constexpr uint64_t kEndMark = uint64_t{1} << 63;

// Where a sidecar record at AT ends in the log: a span's end, a mark's offset.
uint64_t record_end(std::string_view b, size_t at) {
  const uint64_t length = big_endian(b, at + 8);
  return big_endian(b, at) + (length & kEndMark ? 0 : length);
}

// An attempt's stderr spans from its sidecars' bytes (16-byte records), sorted and merged.
std::vector<std::pair<uint64_t, uint64_t>> parse_spans(std::string_view bytes) {
  std::vector<std::pair<uint64_t, uint64_t>> all, merged;
  for (size_t i = 0; i + 16 <= bytes.size(); i += 16) {
    const uint64_t at = big_endian(bytes, i), length = big_endian(bytes, i + 8);
    if (!(length & kEndMark)) all.emplace_back(at, at + length);
  }
  std::sort(all.begin(), all.end());
  for (const auto& span : all)
    if (!merged.empty() && span.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, span.second);
    else
      merged.push_back(span);
  return merged;
}

// The end marks among an attempt's sidecar bytes, and its objects' own: the composite's and
// each part's size by its upload time (an older record's composite has no marks inside).
std::vector<std::pair<uint64_t, double>> end_marks(std::string_view bytes,
                                                   const AttemptLogObjects& objects) {
  std::vector<std::pair<uint64_t, double>> marks;
  for (size_t i = 0; i + 16 <= bytes.size(); i += 16)
    if (const uint64_t length = big_endian(bytes, i + 8); length & kEndMark)
      marks.emplace_back(big_endian(bytes, i), static_cast<double>(length & ~kEndMark));
  uint64_t end = 0;
  for (const auto& o : objects) marks.emplace_back(end += o.size, parse_rfc3339(o.updated));
  std::sort(marks.begin(), marks.end());
  return marks;
}

// The first byte of an attempt's log that may have been written at or after SINCE: the end of
// the last part uploaded before it (a part holds up to 5 s of output, so up to 5 s earlier).
uint64_t first_byte_since(const std::vector<std::pair<uint64_t, double>>& marks, int64_t since) {
  uint64_t from = 0;
  for (const auto& [end, second] : marks)
    if (second < static_cast<double>(since)) from = std::max(from, end);
  return from;
}

// Drops from ATTEMPTS those whose every byte was written before the time FROM was computed
// for; returns FROM for the others.
std::map<int, uint64_t> start_since(std::map<int, AttemptLog>& attempts,
                                    const std::map<int, uint64_t>& from) {
  for (auto it = attempts.begin(); it != attempts.end();) {
    uint64_t size = 0;
    for (const auto& o : it->second.objects) size += o.size;
    it = from.at(it->first) >= size ? attempts.erase(it) : std::next(it);
  }
  return from;
}

}  // namespace

RecordedLog::RecordedLog(gcp::StorageClient& storage, std::string bucket,
                         std::string attempts_prefix, RecordedLogOptions options)
    : storage_(storage),
      bucket_(std::move(bucket)),
      prefix_(std::move(attempts_prefix)),
      options_(std::move(options)) {}

bool RecordedLog::read_spans(const std::map<int, AttemptLog>& attempts, Spans& spans,
                             std::map<int, uint64_t>* since_from, int64_t since) {
  spans.clear();
  std::vector<Segment> segments;
  for (const auto& [n, log] : attempts)
    add_log_pieces(segments, n, log.stderr_spans, 0, options_.piece_bytes);
  std::map<int, std::string> raw;  // each object a whole number of 16-byte spans
  if (fetch(segments, [&](const Segment& s, const std::string& b) { raw[s.attempt] += b; }) <
      segments.size())
    return false;
  for (const auto& [n, bytes] : raw) spans[n] = parse_spans(bytes);
  if (since_from)
    for (const auto& [n, log] : attempts)
      (*since_from)[n] = first_byte_since(end_marks(raw[n], log.objects), since);
  return true;
}

bool RecordedLog::read_spans_after(const std::map<int, AttemptLog>& attempts,
                                   const std::map<int, uint64_t>& after, Spans& spans) {
  spans.clear();
  // Each attempt's sidecars in log order (composed.err, then the parts' by number), whole.
  struct Back {
    std::vector<Segment> whole;
    size_t end = 0;
    uint64_t cut = 0;
    std::string bytes;  // read so far: the end of the sidecars' concatenation
  };
  std::map<int, Back> backs;
  for (const auto& [n, from] : after) {
    auto objects = attempts.at(n).stderr_spans;
    std::stable_partition(objects.begin(), objects.end(), [](const gcp::ObjectInfo& o) {
      return o.name.ends_with(std::string("/") + kCompositeLeaf + ".err");
    });
    Back& b = backs[n];
    add_log_pieces(b.whole, n, objects, 0, UINT64_MAX);
    b.end = b.whole.size();
  }
  // Spans are written in log order: once the earliest read ends at or before the tail's first
  // byte, every earlier one does too. Each round one parallel fetch, 8 times more than the last.
  for (uint64_t want = kTailFirstBytes;; want *= 8) {
    std::vector<Segment> round;
    for (auto& [n, b] : backs) {
      const bool enough = b.bytes.size() >= 16 && record_end(b.bytes, 0) <= after.at(n);
      if (b.end == 0 || enough) continue;
      for (auto& s : take_back(b.whole, b.end, b.cut, want)) round.push_back(std::move(s));
    }
    if (round.empty()) break;
    std::map<int, std::string> got;
    if (fetch(round, [&](const Segment& s, const std::string& bytes) { got[s.attempt] += bytes; }) <
        round.size())
      return false;
    for (auto& [n, bytes] : got) backs[n].bytes.insert(0, bytes);
  }
  for (const auto& [n, b] : backs) spans[n] = parse_spans(b.bytes);
  return true;
}

bool RecordedLog::print(LogSink& sink, std::optional<int64_t> since) {
  auto attempts = list_attempt_logs(storage_, bucket_, prefix_);
  if (attempts.empty()) return false;
  // Where the output stands: the attempt being written and its bytes written so far.
  int attempt = attempts.begin()->first;
  uint64_t done = 0;
  bool header_done = false;
  std::optional<std::map<int, uint64_t>> from;  // with SINCE: each attempt's first byte shown
  // Headers when the job had several attempts, even if SINCE leaves one: which one it is.
  const bool headers = attempts.size() > 1;
  Spans spans;
  for (int relist = 0;; ++relist) {
    std::map<int, uint64_t> since_from;
    size_t got = 0, wanted = 1;
    if (read_spans(attempts, spans, since && !from ? &since_from : nullptr, since.value_or(0))) {
      if (since && !from) {
        from = start_since(attempts, since_from);
        if (attempts.empty()) return true;
        attempt = attempts.begin()->first;
        done = from->at(attempt);
      }
      std::vector<Segment> segments;
      for (const auto& [n, log] : attempts) {
        if (n < attempt) continue;
        if (headers && !(n == attempt && header_done)) segments.push_back(attempt_header(n));
        const uint64_t first = n == attempt ? done : from ? from->at(n) : 0;
        add_log_pieces(segments, n, log.objects, first, options_.piece_bytes);
      }
      wanted = segments.size();
      got = fetch(segments, [&](const Segment& s, const std::string& b) {
        if (s.attempt != attempt) done = from ? from->at(s.attempt) : 0;
        attempt = s.attempt;
        header_done = true;
        if (s.name.empty()) return sink.write(s.stream, b);
        write_split(sink, spans[s.attempt], s.at, b);
        done = s.at + b.size();
      });
    }
    if (got == wanted) return true;
    if (relist == kMaxLogRelists)
      throw Error(Errc::api, "the log of attempt " + std::to_string(attempt) +
                                 " kept changing while it was read; run `kinetic logs` again");
    // The bootstrap composed parts meanwhile: the same bytes are in the composite now.
    auto again = list_attempt_logs(storage_, bucket_, prefix_);
    for (auto& [n, log] : attempts)
      if (auto it = again.find(n); it != again.end()) log = std::move(it->second);
  }
}

bool RecordedLog::print_tail(LogSink& sink, size_t lines, bool latest_only) {
  for (int relist = 0; relist <= kMaxLogRelists; ++relist) {
    auto attempts = list_attempt_logs(storage_, bucket_, prefix_);
    if (attempts.empty()) return false;
    if (latest_only) attempts.erase(attempts.begin(), std::prev(attempts.end()));
    std::deque<std::pair<Segment, std::string>> kept;
    if (!read_tail(attempts, lines, kept)) continue;
    // Only the spans reaching into the bytes kept: a week's stderr spans are not read for them.
    std::map<int, uint64_t> first_kept;  // attempt -> the offset of its first byte kept
    for (const auto& [s, bytes] : kept)
      if (!s.name.empty()) first_kept.emplace(s.attempt, s.at);
    Spans spans;
    if (!read_spans_after(attempts, first_kept, spans)) continue;
    TailSink tail(lines);
    for (const auto& [s, bytes] : kept)
      if (s.name.empty())
        tail.write(s.stream, s.text);
      else
        write_split(tail, spans[s.attempt], s.at, bytes);
    tail.replay(sink);
    return true;
  }
  throw Error(Errc::api, "the log kept changing while its end was read; try again");
}

bool RecordedLog::read_tail(const std::map<int, AttemptLog>& attempts, size_t lines,
                            std::deque<std::pair<Segment, std::string>>& kept) {
  // The whole log as segments, without fetching any: headers and whole objects.
  std::vector<Segment> whole;
  for (const auto& [n, log] : attempts) {
    if (attempts.size() > 1) whole.push_back(attempt_header(n));
    add_log_pieces(whole, n, log.objects, 0, UINT64_MAX);
  }
  // Back from the end, each round one parallel fetch of 8 times more, until it holds more line
  // ends than lines wanted (the first line it holds may be cut) or the whole log.
  size_t end = whole.size();  // segments [end, size) are kept whole
  uint64_t cut = 0;           // bytes of segment END - 1 not kept yet (0: none kept of it)
  size_t newlines = 0;
  for (uint64_t want = kTailFirstBytes; end > 0 && newlines <= lines; want *= 8) {
    const std::vector<Segment> round = take_back(whole, end, cut, want);
    std::vector<std::pair<Segment, std::string>> got;
    if (fetch(round, [&](const Segment& s, const std::string& b) {
          got.emplace_back(s, s.name.empty() ? s.text : b);
        }) < round.size())
      return false;
    for (auto it = got.rbegin(); it != got.rend(); ++it) {
      newlines += static_cast<size_t>(std::count(it->second.begin(), it->second.end(), '\n'));
      kept.push_front(std::move(*it));
    }
  }
  return true;
}

size_t RecordedLog::fetch(const std::vector<Segment>& segments, const Deliver& deliver) {
  const size_t n = segments.size();
  auto read = [&](gcp::StorageClient& client, size_t i) -> std::optional<std::string> {
    const Segment& s = segments[i];
    if (s.name.empty()) return s.text;
    return client.download_range(bucket_, s.name, s.generation, s.first, s.length);
  };
  // Small pieces (an old record's parts, 5 s of output each) cost a round trip each, not their
  // bytes: four times as many at once, for the same memory at most.
  uint64_t largest = 0;
  for (const auto& s : segments) largest = std::max(largest, s.length);
  const int parallelism = options_.parallelism * (largest <= kSmallPiece ? 4 : 1);
  const int workers =
      options_.make_transport ? std::max(1, std::min<int>(parallelism, static_cast<int>(n))) : 0;
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) {
      auto got = read(storage_, i);
      if (!got) return i;
      deliver(segments[i], *got);
    }
    return n;
  }
  // Each worker fetches the next piece on a connection of its own, at most WINDOW pieces ahead
  // of the one written last (memory stays bounded); this thread writes them in order.
  std::mutex mu;
  std::condition_variable cv;
  std::map<size_t, std::optional<std::string>> ready;
  size_t next = 0, delivered = 0;
  bool stop = false;
  std::exception_ptr error;
  const size_t window = static_cast<size_t>(workers) * 2;
  auto work = [&] {
    try {
      auto transport = options_.make_transport();
      gcp::StorageClient client(*transport, options_.endpoint);
      for (;;) {
        size_t i = 0;
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return stop || next >= n || next < delivered + window; });
          if (stop || next >= n) return;
          i = next++;
        }
        auto got = read(client, i);
        std::lock_guard lock(mu);
        ready.emplace(i, std::move(got));
        cv.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mu);
      if (!error) error = std::current_exception();
      stop = true;
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work);
  auto finish = [&] {
    {
      std::lock_guard lock(mu);
      stop = true;
      cv.notify_all();
    }
    for (auto& t : threads) t.join();
  };
  size_t result = n;
  try {
    for (;;) {
      std::optional<std::string> got;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return error || delivered >= n || ready.count(delivered) > 0; });
        if (error || delivered >= n) break;
        got = std::move(ready[delivered]);
        ready.erase(delivered);
      }
      if (!got) {
        result = delivered;
        break;
      }
      deliver(segments[delivered], *got);
      std::lock_guard lock(mu);
      ++delivered;
      cv.notify_all();
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  if (error) std::rethrow_exception(error);
  return result;
}

}  // namespace kinetic::gke
