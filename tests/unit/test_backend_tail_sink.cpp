// TailSink and SkipSink (lib/backend/tail_sink.h): `logs --tail N [-f]` on any backend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/tail_sink.h"
#include "unit/recording_sink.h"

namespace kinetic {
namespace {

using TailRecorder = test::RecordingSink;

TEST(TailSink, KeepsTheLastLinesInOrderWhicheverStreamAndHoweverCut) {
  TailSink tail(3);
  tail.write(LogStream::out, "1\n2\n3");
  tail.write(LogStream::err, "e1\n");
  tail.write(LogStream::out, "\n4\n");
  tail.write(LogStream::system, "attempt 2\n");
  tail.write(LogStream::out, "5 unfinished");
  TailRecorder out;
  tail.replay(out);
  ASSERT_EQ(out.writes.size(), 3u);
  EXPECT_EQ(out.writes[0], (std::pair<LogStream, std::string>{LogStream::out, "4\n"}));
  EXPECT_EQ(out.writes[1], (std::pair<LogStream, std::string>{LogStream::system, "attempt 2\n"}));
  EXPECT_EQ(out.writes[2], (std::pair<LogStream, std::string>{LogStream::out, "5 unfinished"}));
  // The job's own bytes, not kinetic's notes: what a follow skips.
  EXPECT_EQ(tail.job_bytes(), std::string("1\n2\n3e1\n\n4\n5 unfinished").size());
}

TEST(TailSink, ZeroLinesShowsNothingButCountsEverything) {
  TailSink tail(0);
  tail.write(LogStream::out, "a\nb\n");
  TailRecorder out;
  tail.replay(out);
  EXPECT_TRUE(out.writes.empty());
  EXPECT_EQ(tail.job_bytes(), 4u);
}

TEST(SkipSink, PassesOnlyWhatComesAfterTheSkippedBytes) {
  TailRecorder out;
  SkipSink skip(5, out);
  skip.write(LogStream::out, "abc");
  skip.write(LogStream::system, "attempt 2\n");  // shown already, before the skipped bytes end
  skip.write(LogStream::err, "defg");            // 'de' skipped, 'fg' new
  skip.write(LogStream::system, "note\n");
  skip.write(LogStream::out, "h");
  EXPECT_EQ(out.text(), "fgnote\nh");
  ASSERT_EQ(out.writes.size(), 3u);
  EXPECT_EQ(out.writes[0].first, LogStream::err);
}

TEST(TailThenSkip, AFollowAfterATailShowsEveryByteOnce) {
  const std::vector<std::pair<LogStream, std::string>> log = {
      {LogStream::out, "one\ntwo\n"}, {LogStream::err, "oops\n"}, {LogStream::out, "three\n"}};
  TailSink tail(2);
  for (const auto& [s, d] : log) tail.write(s, d);
  TailRecorder shown;
  tail.replay(shown);
  SkipSink after(tail.job_bytes(), shown);
  for (const auto& [s, d] : log) after.write(s, d);  // the follow reads from the start again
  after.write(LogStream::out, "four\n");             // and then what is new
  EXPECT_EQ(shown.text(), "oops\nthree\nfour\n");
}

}  // namespace
}  // namespace kinetic
