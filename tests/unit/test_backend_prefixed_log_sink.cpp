// PrefixedLogSink (lib/backend/prefixed_log_sink.h): each source's lines (a host's, a step's)
// reach the sink whole and prefixed, however its writes are cut, and from however many threads.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "backend/prefixed_log_sink.h"
#include "backend/stream_sink.h"
#include "unit/memory_streams.h"
#include "unit/recording_sink.h"

namespace kinetic {
namespace {

using Recorder = test::RecordingSink;

TEST(PrefixedLogSink, PrefixesWholeLinesAndKeepsPartsUntilTheirNewline) {
  Recorder out;
  {
    PrefixedLogSink sink(out);
    sink.host(2).write(LogStream::out, "step 1\nste");
    sink.host(0).write(LogStream::out, "loss=1.0\n");
    sink.host(2).write(LogStream::out, "p 2\n");
    sink.host(2).write(LogStream::err, "warn");  // no newline: flushed at the end
    sink.host(0).write(LogStream::system, "attempt 2\n");
  }
  ASSERT_EQ(out.writes.size(), 5u);
  EXPECT_EQ(out.writes[0].second, "[host 2] step 1\n");
  EXPECT_EQ(out.writes[1].second, "[host 0] loss=1.0\n");
  EXPECT_EQ(out.writes[2].second, "[host 2] step 2\n");
  EXPECT_EQ(out.writes[3].second, "[host 0] attempt 2\n");
  EXPECT_EQ(out.writes[3].first, LogStream::system);
  EXPECT_EQ(out.writes[4].second, "[host 2] warn\n");
  EXPECT_EQ(out.writes[4].first, LogStream::err);
}

TEST(PrefixedLogSink, LinesFromManyThreadsNeverMix) {
  Recorder out;
  {
    PrefixedLogSink sink(out);
    std::vector<std::thread> threads;
    for (int h = 0; h < 4; ++h)
      threads.emplace_back([&sink, h] {
        for (int i = 0; i < 200; ++i) {
          // A line in three writes, so a mixed line would show.
          sink.host(h).write(LogStream::out, "host ");
          sink.host(h).write(LogStream::out, std::to_string(h));
          sink.host(h).write(LogStream::out, " line\n");
        }
      });
    for (auto& t : threads) t.join();
  }
  ASSERT_EQ(out.writes.size(), 800u);
  for (const auto& [stream, text] : out.writes) {
    std::string want = "[host X] host X line\n";
    want[6] = want[14] = text[6];
    EXPECT_EQ(text, want);
  }
}

}  // namespace
}  // namespace kinetic

namespace kinetic {
namespace {

TEST(StreamSink, EachStreamToItsOwnAndKineticsNotesMarked) {
  test::CapturedIO captured;
  StreamSink sink(captured.io);
  sink.write(LogStream::out, "to stdout\n");
  sink.write(LogStream::err, "to stderr\n");
  sink.write(LogStream::system, "attempt 2/3\n");
  // Flushed at every write: the text is there without anyone flushing the streams.
  EXPECT_EQ(captured.out_stream.flushed(), "to stdout\n");
  EXPECT_EQ(captured.err_stream.flushed(), "to stderr\nkinetic: attempt 2/3\n");
}

TEST(PrefixedLogSink, OneSourceIsFlushedAloneWithItsOwnPrefix) {
  Recorder terminal;
  PrefixedLogSink sinks(terminal);
  LogSink& left = sinks.prefixed("[left] ");
  LogSink& right = sinks.prefixed("[right] ");
  left.write(LogStream::out, "epoch 1");
  right.write(LogStream::out, "ready\nhalf");
  left.write(LogStream::out, "/3 done\n");
  right.write(LogStream::err, "warning\n");
  sinks.flush("[right] ");
  EXPECT_EQ(terminal.writes, (std::vector<std::pair<LogStream, std::string>>{
                                 {LogStream::out, "[right] ready\n"},
                                 {LogStream::out, "[left] epoch 1/3 done\n"},
                                 {LogStream::err, "[right] warning\n"},
                                 {LogStream::out, "[right] half\n"}}));
}

// A multislice run's hosts are numbered across slices; its lines say which slice and host.
TEST(PrefixedLogSink, AMultisliceRunsHostsNameTheirSlice) {
  EXPECT_EQ(run_host_name(2, 4, 1), "host 2");
  EXPECT_EQ(run_host_name(5, 4, 2), "slice 1 host 1");
  EXPECT_EQ(run_host_name(0, 4, 2), "slice 0 host 0");
  Recorder out;
  {
    PrefixedLogSink sink(out);
    sink.host(6, 4, 2).write(LogStream::out, "hi\n");
    sink.host(1).write(LogStream::out, "one\n");
  }
  EXPECT_EQ(out.text(), "[slice 1 host 2] hi\n[host 1] one\n");
}

}  // namespace
}  // namespace kinetic
