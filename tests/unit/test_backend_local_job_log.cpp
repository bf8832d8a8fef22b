// The local runner's log file (lib/backend/local/job_log.h): `logs --tail N` reads only its last
// records' payloads, keeps each line's stream, and a drain goes on after what the tail showed.
#include <gtest/gtest.h>

#include "backend/local/job_log.h"
#include "core/fs.h"
#include "unit/recording_sink.h"

namespace kinetic {
namespace {

class LocalJobLog : public ::testing::Test {
 protected:
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-job-log-");
  fs::path path = dir / "log";
  ~LocalJobLog() override { remove_all_quiet(dir); }
};

TEST_F(LocalJobLog, TheTailKeepsTheLastLinesOfEveryStreamThenADrainGoesOn) {
  {
    JobLogWriter w(path);
    for (int i = 1; i <= 1000; ++i) w.write(LogStream::out, "out " + std::to_string(i) + "\n");
    w.write(LogStream::err, "an error\n");
    w.write(LogStream::out, "cut ");
    w.write(LogStream::out, "in two\nlast, no newline");
  }
  JobLogReader reader(path);
  test::RecordingSink got;
  ASSERT_TRUE(reader.tail(got, 3));
  EXPECT_EQ(got.text(), "an error\ncut in two\nlast, no newline");
  ASSERT_EQ(got.writes.size(), 3u);
  EXPECT_EQ(got.writes[0].first, LogStream::err);
  EXPECT_EQ(got.writes[1].first, LogStream::out);

  JobLogWriter(path).write(LogStream::out, "\nafter the tail\n");
  test::RecordingSink more;
  ASSERT_TRUE(reader.drain(more));
  EXPECT_EQ(more.text(), "\nafter the tail\n");

  JobLogReader all(path);
  test::RecordingSink whole;
  ASSERT_TRUE(all.tail(whole, 5000));
  EXPECT_EQ(whole.text().substr(0, 12), "out 1\nout 2\n");
  EXPECT_FALSE(JobLogReader(dir / "none").tail(whole, 1));
}

// `logs --since`: a time mark before each new second's first record lets a reader start at the
// first record of a second by reading headers; the marks never reach a sink, tail or drain.
TEST_F(LocalJobLog, SkipBeforeStartsAtTheFirstRecordOfThatSecond) {
  {
    int64_t now = 100;
    JobLogWriter w(path, -1, [&] { return now; });
    w.write(LogStream::out, "a\n");
    w.write(LogStream::err, "b\n");
    now = 105;
    w.write(LogStream::out, "c\n");
    now = 107;
    w.write(LogStream::out, "d\n");
  }
  auto from = [&](int64_t since) {
    JobLogReader reader(path);
    test::RecordingSink got;
    EXPECT_TRUE(reader.skip_before(since));
    EXPECT_TRUE(reader.drain(got));
    return got.text();
  };
  EXPECT_EQ(from(0), "a\nb\nc\nd\n");
  EXPECT_EQ(from(100), "a\nb\nc\nd\n");
  EXPECT_EQ(from(101), "c\nd\n");
  EXPECT_EQ(from(105), "c\nd\n");
  EXPECT_EQ(from(106), "d\n");
  EXPECT_EQ(from(108), "");
  test::RecordingSink tail;
  ASSERT_TRUE(JobLogReader(path).tail(tail, 2));
  EXPECT_EQ(tail.text(), "c\nd\n");
  ASSERT_EQ(tail.writes.size(), 2u) << "no mark among the records";
  EXPECT_EQ(std::string(read_file(path)->substr(0, 13)),
            std::string("\x04\x08\0\0\0\x64\0\0\0\0\0\0\0", 13))
      << "the first record is the mark of second 100";
}

}  // namespace
}  // namespace kinetic
