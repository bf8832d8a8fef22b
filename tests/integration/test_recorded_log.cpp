// RecordedLog (lib/backend/gke/recorded_log.h) against the fake GCS: a job's recorded log as the
// bootstrap leaves it (log/composed and the parts after it, or an older record's parts only),
// printed in order from ranged reads several at once, its tail read from the end, and a part
// composed away between the listing and its read found again in the composite.
#include <gtest/gtest.h>

#include "backend/gke/recorded_log.h"
#include "core/duration.h"
#include "fakes/fake_gcs.h"
#include "gcp/storage.h"
#include "http/retry.h"

namespace kinetic::gke {
namespace {

constexpr const char* kBucket = "logs";
const std::string kAttempts = "jobs/job-1/results/attempts/";

struct Captured : LogSink {
  std::string all, out, system;
  void write(LogStream stream, std::string_view data) override {
    all.append(data);
    (stream == LogStream::system ? system : out).append(data);
  }
};

class RecordedLogTest : public ::testing::Test {
 protected:
  fakes::FakeGcs fake;
  std::unique_ptr<http::Transport> transport = http::make_curl_transport();
  gcp::StorageClient client{*transport, fake.url()};

  std::string part(int attempt, int n) {
    char leaf[16];
    std::snprintf(leaf, sizeof leaf, "%06d", n);
    return kAttempts + std::to_string(attempt) + "/log/" + leaf;
  }
  std::string composite(int attempt) {
    return kAttempts + std::to_string(attempt) + "/log/composed";
  }
  // Composes parts 1..K of ATTEMPT onto its composite and deletes them, as the bootstrap does.
  void compose(int attempt, int from, int upto) {
    std::vector<std::string> sources;
    if (from > 1) sources.push_back(composite(attempt));
    for (int p = from; p <= upto; ++p) sources.push_back(part(attempt, p));
    fake.compose_objects(
        kBucket, composite(attempt), sources,
        {{"contentType", "text/plain"}, {"metadata", {{"parts", std::to_string(upto)}}}});
    for (int p = from; p <= upto; ++p) fake.delete_object(kBucket, part(attempt, p));
  }
  RecordedLog log(int parallelism = 4, uint64_t piece = 5) {
    RecordedLogOptions o;
    if (parallelism > 1) {
      o.make_transport = [] {
        return std::shared_ptr<http::Transport>(http::make_curl_transport());
      };
      o.endpoint = fake.url();
    }
    o.parallelism = parallelism;
    o.piece_bytes = piece;
    return RecordedLog(client, kBucket, kAttempts, o);
  }
};

// 40 parts, 31 composed: the composite's bytes (read in 5-byte ranges, four at once) then the
// parts', in order; a part the composite holds but the bootstrap has not deleted yet is not
// printed twice.
TEST_F(RecordedLogTest, PrintsTheCompositeThenTheLaterPartsInOrder) {
  fake.create_bucket(kBucket);
  std::string want;
  for (int p = 1; p <= 40; ++p) {
    const std::string line = "line " + std::to_string(p) + "\n";
    fake.put_object(kBucket, part(1, p), line, "text/plain");
    want += line;
  }
  compose(1, 1, 31);
  fake.put_object(kBucket, part(1, 31), "line 31\n", "text/plain");  // not deleted yet
  Captured got;
  ASSERT_TRUE(log().print(got));
  EXPECT_EQ(got.out, want);
  EXPECT_EQ(got.system, "") << "one attempt: no header";
  EXPECT_GT(fake.request_count("objects.download"), 20) << "ranged pieces";
  EXPECT_EQ(fake.request_count("objects.list"), 1) << "listed once";
}

// The bootstrap's end marks: (offset a part ends at, 2^63 | the Unix second it was uploaded).
std::string end_marks(const std::vector<std::pair<uint64_t, uint64_t>>& marks) {
  std::string out;
  for (auto [end, second] : marks)
    for (uint64_t v : {end, (uint64_t{1} << 63) | second})
      for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

// --since: from the end of the last part uploaded before the time, by the marks composed into
// composed.err (parts 1-3, uploaded at 1000, 2000, 3000) and a later part's own upload time
// (now); an attempt whose every part came before it is left out, header and all.
TEST_F(RecordedLogTest, SinceStartsAfterTheLastPartUploadedBeforeIt) {
  fake.create_bucket(kBucket);
  fake.put_object(kBucket, part(1, 1), "old attempt\n", "text/plain");
  for (int p = 1; p <= 4; ++p)
    fake.put_object(kBucket, part(2, p), "line " + std::to_string(p) + "\n", "text/plain");
  compose(2, 1, 3);
  fake.put_object(kBucket, composite(2) + ".err", end_marks({{7, 1000}, {14, 2000}, {21, 3000}}));
  // Attempt 1 is marked too: every byte of it before 1500.
  compose(1, 1, 1);
  fake.put_object(kBucket, composite(1) + ".err", end_marks({{12, 900}}));
  auto since = [&](int64_t t) {
    Captured got;
    EXPECT_TRUE(log().print(got, t));
    return got.all;
  };
  EXPECT_EQ(since(2500), "attempt 2\nline 3\nline 4\n") << "part 3 may hold lines from 2500";
  EXPECT_EQ(since(2000), "attempt 2\nline 2\nline 3\nline 4\n");
  EXPECT_EQ(since(3001), "attempt 2\nline 4\n");
  EXPECT_EQ(since(static_cast<int64_t>(now_unix()) + 3600), "") << "nothing written yet";
  EXPECT_EQ(since(0), "attempt 1\nold attempt\nattempt 2\nline 1\nline 2\nline 3\nline 4\n");
  // An older record (no marks): its composite counts as written at its own upload time.
  fake.put_object(kBucket, composite(2) + ".err", "");
  EXPECT_EQ(since(2500), "attempt 2\nline 1\nline 2\nline 3\nline 4\n");
}

// A record from before composition (parts only) prints as it always did, each attempt after its
// header.
TEST_F(RecordedLogTest, AnOldRecordOfPartsOnlyPrintsEveryAttemptAfterItsHeader) {
  fake.create_bucket(kBucket);
  fake.put_object(kBucket, part(1, 1), "first\n");
  fake.put_object(kBucket, part(1, 2), "try, no newline");
  fake.put_object(kBucket, part(2, 1), "second\n");
  fake.put_object(kBucket, kAttempts + "1/status.json", "{}");
  Captured got;
  ASSERT_TRUE(log(1).print(got));
  EXPECT_EQ(got.all, "attempt 1\nfirst\ntry, no newlineattempt 2\nsecond\n");
  EXPECT_EQ(got.system, "attempt 1\nattempt 2\n");
  Captured none;
  EXPECT_FALSE(RecordedLog(client, kBucket, "jobs/other/attempts/", {}).print(none));
}

// The bootstrap composes parts 1-3 right after the first part was read: part 2 is gone, so the
// reader lists again and goes on from the byte it had printed, now inside the composite.
TEST_F(RecordedLogTest, APartComposedAwayMidReadIsReadFromTheComposite) {
  fake.create_bucket(kBucket);
  for (int p = 1; p <= 4; ++p)
    fake.put_object(kBucket, part(1, p), "part " + std::to_string(p) + "\n", "text/plain");
  fake.after_next("GET /storage/v1/b/logs/o/" + gcp::encode_object_name(part(1, 1)),
                  [&] { compose(1, 1, 3); });
  Captured got;
  ASSERT_TRUE(log(1, 1 << 20).print(got));
  EXPECT_EQ(got.out, "part 1\npart 2\npart 3\npart 4\n");
  EXPECT_EQ(fake.request_count("objects.list"), 2) << "listed again once";
  EXPECT_EQ(fake.pending_faults(), 0) << "the compose ran";
}

// The same race, several reads at once: the listing is answered, then everything is composed
// before any part is read.
TEST_F(RecordedLogTest, PartsComposedAwayAfterTheListingAreReadFromTheComposite) {
  fake.create_bucket(kBucket);
  std::string want;
  for (int p = 1; p <= 9; ++p) {
    fake.put_object(kBucket, part(1, p), "part " + std::to_string(p) + "\n", "text/plain");
    want += "part " + std::to_string(p) + "\n";
  }
  fake.after_next("GET /storage/v1/b/logs/o", [&] { compose(1, 1, 9); });
  Captured got;
  ASSERT_TRUE(log(4, 3).print(got));
  EXPECT_EQ(got.out, want);
}

// The last lines, across the composite's end (mid-line) and a part, from one listing and one
// round of reads of the end only.
TEST_F(RecordedLogTest, TheTailCountsLinesAcrossObjectsAndReadsOnlyTheEnd) {
  fake.create_bucket(kBucket);
  std::string big;
  for (int i = 0; i < 50000; ++i) big += "early line " + std::to_string(i) + "\n";
  fake.put_object(kBucket, part(1, 1), big + "l1\nl2\nl3", "text/plain");
  compose(1, 1, 1);
  fake.put_object(kBucket, part(1, 2), "-end\nl4\n", "text/plain");
  fake.put_object(kBucket, part(1, 3), "no newline", "text/plain");
  fake.reset_counters();
  Captured got;
  ASSERT_TRUE(log(4, 4 << 20).print_tail(got, 3));
  EXPECT_EQ(got.all, "l3-end\nl4\nno newline");
  EXPECT_EQ(fake.request_count("objects.list"), 1);
  EXPECT_EQ(fake.request_count("objects.download"), 3) << "the composite's end and two parts";
  Captured zero;
  ASSERT_TRUE(log().print_tail(zero, 0));
  EXPECT_EQ(zero.all, "");
}

// Lines longer than the first round's guess: it reads further back, 8 times more each round.
TEST_F(RecordedLogTest, TheTailReadsFurtherBackWhenLinesAreLong) {
  fake.create_bucket(kBucket);
  const std::string line(100 << 10, 'x');
  fake.put_object(kBucket, part(1, 1), "start\n" + line + "\n" + line + "\n", "text/plain");
  Captured got;
  ASSERT_TRUE(log(4, 1 << 20).print_tail(got, 2));
  EXPECT_EQ(got.all, line + "\n" + line + "\n");
  Captured all;
  ASSERT_TRUE(log(4, 1 << 20).print_tail(all, 10));
  EXPECT_EQ(all.all, "start\n" + line + "\n" + line + "\n");
}

// 16-byte big-endian (offset, length) spans, as the bootstrap writes a part's sidecar.
std::string spans_of(std::vector<std::pair<uint64_t, uint64_t>> spans) {
  std::string b;
  for (const auto& [at, length] : spans)
    for (uint64_t v : {at, length})
      for (int shift = 56; shift >= 0; shift -= 8) b.push_back(static_cast<char>(v >> shift));
  return b;
}

// The bytes the sidecars mark go to stderr, the others to stdout, in order, whether the spans
// are in composed.err or in a part's sidecar, and cut across pieces and objects as they may be.
TEST_F(RecordedLogTest, StderrSpansSendTheirBytesToStderr) {
  fake.create_bucket(kBucket);
  // The log: "out 1\nERR 2\nout 3\n" composed, then "ERR 4\nout 5\n" in part 4.
  fake.put_object(kBucket, part(1, 1), "out 1\nERR 2\n");
  fake.put_object(kBucket, part(1, 1) + ".err", spans_of({{6, 6}}));
  fake.put_object(kBucket, part(1, 2), "out 3\n");
  compose(1, 1, 2);
  fake.compose_objects(kBucket, composite(1) + ".err", {part(1, 1) + ".err"},
                       {{"metadata", {{"parts", "2"}}}});
  fake.delete_object(kBucket, part(1, 1) + ".err");
  fake.put_object(kBucket, part(1, 4), "ERR 4\nout 5\n");
  fake.put_object(kBucket, part(1, 4) + ".err", spans_of({{18, 3}, {21, 3}}));
  for (int parallelism : {1, 4}) {
    struct Split : LogSink {
      std::string out, err;
      void write(LogStream stream, std::string_view data) override {
        (stream == LogStream::err ? err : out).append(data);
      }
    } got, tail;
    ASSERT_TRUE(log(parallelism, 4).print(got));
    EXPECT_EQ(got.out, "out 1\nout 3\nout 5\n");
    EXPECT_EQ(got.err, "ERR 2\nERR 4\n");
    ASSERT_TRUE(log(parallelism, 4).print_tail(tail, 2));
    EXPECT_EQ(tail.out, "out 5\n");
    EXPECT_EQ(tail.err, "ERR 4\n");
  }
}

// A tail reads only the end of the stderr spans too: a long job's composed.err (here 1.6 MB of
// spans, one every other line) is read back only as far as the lines kept reach.
TEST_F(RecordedLogTest, TheTailReadsOnlyTheSpansThatReachIntoIt) {
  fake.create_bucket(kBucket);
  std::string text, spans;
  for (int i = 0; i < 200000; ++i) {
    char line[16];
    std::snprintf(line, sizeof line, "%s %05d\n", i % 2 ? "err" : "out", i % 100000);
    if (i % 2) spans += spans_of({{text.size(), 10}});
    text += line;
  }
  fake.put_object(kBucket, part(1, 1), text, "text/plain");
  compose(1, 1, 1);
  fake.put_object(kBucket, composite(1) + ".err", spans);
  fake.put_object(kBucket, part(1, 2), "ERR last\nout last\n", "text/plain");
  fake.put_object(kBucket, part(1, 2) + ".err", spans_of({{text.size(), 9}}));
  struct Split : LogSink {
    std::string out, err;
    void write(LogStream stream, std::string_view data) override {
      (stream == LogStream::err ? err : out).append(data);
    }
  } got;
  fake.reset_counters();
  ASSERT_TRUE(log(4, 16 << 10).print_tail(got, 4));
  EXPECT_EQ(got.out, "out 99998\nout last\n");
  EXPECT_EQ(got.err, "err 99999\nERR last\n");
  // 64 KiB of the log and 64 KiB of the spans in 16 KiB pieces, and the two small objects: not
  // the 1.6 MB of spans (100 pieces).
  EXPECT_LE(fake.request_count("objects.download"), 12);
}

// With several attempts the headers are lines of the tail; LATEST_ONLY (collect's failure
// message) reads the newest attempt alone.
TEST_F(RecordedLogTest, TheTailOfSeveralAttemptsKeepsTheirHeaders) {
  fake.create_bucket(kBucket);
  fake.put_object(kBucket, part(1, 1), "a1\na2\n");
  fake.put_object(kBucket, part(2, 1), "b1\nb2\n");
  Captured got;
  ASSERT_TRUE(log().print_tail(got, 4));
  EXPECT_EQ(got.all, "a2\nattempt 2\nb1\nb2\n");
  Captured latest;
  ASSERT_TRUE(log().print_tail(latest, 4, true));
  EXPECT_EQ(latest.all, "b1\nb2\n");
}

}  // namespace
}  // namespace kinetic::gke
