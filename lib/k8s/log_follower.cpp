// Following a pod's log across reconnects. Decisions:
// - The position is (T, N): the newest timestamp delivered and how many delivered lines carry
//   exactly T (timestamps have nanosecond precision but can repeat). A reconnect asks for
//   sinceTime=T and, until it delivers its first line, drops lines older than T and the first N
//   lines stamped T. An API server that rounds sinceTime down only sends more to drop.
// - A line cut by a dropped connection is never delivered in part: the partial tail is dropped
//   and comes back whole after the reconnect. Only at the very end of the log (a clean end with
//   the container finished) is a last line without '\n' delivered, with '\n' added.
// - Reconnect on: a dropped connection (retryable TransportError), a clean end while the
//   container still runs (FollowOptions::finished false), and 400 "... is waiting to start".
// - A log the caller knows complete (FollowOptions::complete, kinetic's end-of-log lines) ends
//   the follow at its last line: the stream is dropped, nothing after it is delivered.
// - A clean end with the container finished is confirmed by one plain (non-follow) read from the
//   position: a stream cut cleanly after the container exited (log rotation, a proxy) would
//   otherwise lose the rest of the log while the run reports success (issue #8).
#include "k8s/log_follower.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/backoff.h"

namespace kinetic::k8s {

TimestampedLine split_log_timestamp(std::string_view line) {
  TimestampedLine out;
  out.text = line;
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return out;
  auto time = parse_timestamp(line.substr(0, space));
  if (!time) return out;
  out.time = time;
  out.stamp = line.substr(0, space);
  out.text = line.substr(space + 1);
  return out;
}

namespace {

bool default_wait(int attempt) {
  constexpr BackoffCurve kReopen{std::chrono::milliseconds(250), std::chrono::seconds(5), 2.0};
  std::this_thread::sleep_for(kReopen.delay(attempt));
  return true;
}

bool waiting_to_start(const ApiError& e) {
  if (e.code() != 400) return false;
  std::string_view what = e.what();
  return what.find("waiting to start") != std::string_view::npos ||
         what.find("ContainerCreating") != std::string_view::npos ||
         what.find("PodInitializing") != std::string_view::npos;
}

}  // namespace

void follow_pod_log(Client& client, const std::string& ns, const std::string& pod,
                    const FollowOptions& options,
                    const std::function<void(std::string_view line)>& on_line) {
  std::optional<Timestamp> last;  // newest timestamp delivered
  std::string last_stamp;         // as the server wrote it, for sinceTime
  size_t delivered_at_last = 0;   // lines delivered stamped exactly LAST
  int attempt = 0;                // reconnects since the last delivered line
  std::string out;                // reused for "text\n"
  // Set once a stream ended cleanly with the container finished: the next read is a plain
  // (non-follow) one from the last position, which confirms the end or brings what a cut stream
  // left out.
  bool confirming = false;

  for (;;) {
    bool skipping = last.has_value();
    size_t skipped_at_last = 0;
    bool progressed = false;
    bool done = false;  // COMPLETE said so: nothing after this line is read
    std::string buffer;

    auto handle = [&](std::string_view raw) {
      TimestampedLine line = split_log_timestamp(raw);
      if (skipping && line.time) {
        if (*line.time < *last) return;
        if (*line.time == *last && skipped_at_last < delivered_at_last) {
          ++skipped_at_last;
          return;
        }
      }
      skipping = false;
      out.assign(line.text);
      out += '\n';
      on_line(out);
      progressed = true;
      if (options.complete && options.complete()) done = true;
      if (line.time) {
        if (last && *line.time == *last) {
          ++delivered_at_last;
        } else if (!last || *line.time > *last) {
          last = line.time;
          last_stamp.assign(line.stamp);
          delivered_at_last = 1;
        }
      }
    };

    LogOptions log;
    log.container = options.container;
    log.follow = !confirming;
    log.timestamps = true;
    if (last)
      log.since_time = last_stamp;
    else
      log.since_time = options.since_time;

    bool ended_cleanly = false;
    try {
      client.logs(ns, pod, log, [&](std::string_view chunk) {
        buffer.append(chunk);
        size_t start = 0;
        for (size_t nl; !done && (nl = buffer.find('\n', start)) != std::string::npos;
             start = nl + 1) {
          handle(std::string_view(buffer).substr(start, nl - start));
        }
        buffer.erase(0, start);
        return !done;
      });
      if (done) return;
      ended_cleanly = true;
    } catch (const ApiError& e) {
      // The pod went away after its container ended (its Job was deleted): nothing more to read.
      if (confirming && e.code() == 404) return;
      if (!waiting_to_start(e)) throw;
    } catch (const http::TransportError& e) {
      if (!e.retryable()) throw;
    }

    if (ended_cleanly && confirming) {
      // A complete answer after the container ended holds the whole rest of the log; only here
      // is a last line without '\n' known to be whole.
      if (!buffer.empty()) handle(buffer);
      return;
    }
    // A follow stream that ended cleanly is not proof of the log's end: proxies, API servers and
    // log rotation close streams cleanly too, even after the container has exited. Without a
    // FINISHED check (tests) a clean end is taken as the end.
    if (ended_cleanly && !options.finished) {
      if (!buffer.empty()) handle(buffer);
      return;
    }
    if (ended_cleanly && options.finished()) {
      confirming = true;
      continue;
    }
    attempt = progressed ? 1 : attempt + 1;
    if (!(options.wait ? options.wait(attempt) : default_wait(attempt))) return;
  }
}

}  // namespace kinetic::k8s
