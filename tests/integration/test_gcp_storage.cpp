// kinetic's GCS client against the fake GCS on 127.0.0.1, through the same decorator stack a
// real run uses (retried over curl), with the fake's faults: 503 storms, dropped connections,
// precondition failures.
#include <gtest/gtest.h>

#include <random>

#include "core/checksum.h"
#include "core/duration.h"
#include "fakes/fake_gcs.h"
#include "gcp/storage.h"
#include "http/retry.h"

namespace kinetic::gcp {
namespace {

class StorageTest : public ::testing::Test {
 protected:
  fakes::FakeGcs fake;
  std::vector<std::chrono::milliseconds> waits;
  std::unique_ptr<http::Transport> transport =
      http::retried(http::make_curl_transport(), http::RetryPolicy{},
                    http::RetryEnv{[this](std::chrono::milliseconds d) { waits.push_back(d); },
                                   nullptr, [] { return 0.5; }});
  StorageClient client{*transport, fake.url()};
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-gcs-");

  ~StorageTest() override { remove_all_quiet(dir); }

  static std::string random_bytes(size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(gen());
    return s;
  }
  // Resumable from 256 KiB on, in 1 MiB chunks: a few MiB make several chunks.
  static UploadOptions in_1mib_chunks() {
    UploadOptions opt;
    opt.single_request_limit = 256 * 1024;
    opt.chunk_size = 1 << 20;
    return opt;
  }
  fs::path write_file(const std::string& name, const std::string& data) {
    fs::path p = dir / name;
    atomic_write(p, data);
    return p;
  }
};

TEST_F(StorageTest, EnsureBucketIsIdempotentAndKeepsTheLifecycleRule) {
  auto b = client.ensure_bucket("acme", "acme-kinetic-k", "US-CENTRAL1", {{7, false, {"jobs/"}}});
  EXPECT_EQ(b.name, "acme-kinetic-k");
  auto again =
      client.ensure_bucket("acme", "acme-kinetic-k", "US-CENTRAL1", {{7, false, {"jobs/"}}});
  ASSERT_EQ(again.lifecycle.size(), 1u);
  EXPECT_EQ(again.lifecycle[0], (gcp::LifecycleRule{7, false, {"jobs/"}}));
  EXPECT_EQ(fake.request_count("buckets.insert"), 1);
  EXPECT_TRUE(client.get_bucket("acme-kinetic-k").has_value());
  EXPECT_FALSE(client.get_bucket("nope").has_value());
  EXPECT_TRUE(client.delete_bucket("acme-kinetic-k"));
  EXPECT_FALSE(client.delete_bucket("acme-kinetic-k"));
}

// `up` on a bucket an older kinetic made: its rules are replaced once, then left alone.
TEST_F(StorageTest, EnsureLifecycleReplacesOtherRulesOnce) {
  client.ensure_bucket("acme", "b", "US", {{7, false, {"contexts/", "jobs/", "builds/"}}});
  const std::vector<gcp::LifecycleRule> rules = {{7, true, {"contexts/"}}, {7, false, {"builds/"}}};
  EXPECT_TRUE(client.ensure_lifecycle("b", rules));
  EXPECT_EQ(client.get_bucket("b")->lifecycle, rules);
  auto raw = fake.bucket_resource("b");
  ASSERT_TRUE(raw);
  EXPECT_EQ((*raw)["lifecycle"]["rule"][0]["condition"]["daysSinceCustomTime"], 7) << raw->dump();
  EXPECT_FALSE((*raw)["lifecycle"]["rule"][0]["condition"].contains("age")) << raw->dump();
  EXPECT_EQ((*raw)["lifecycle"]["rule"][1]["condition"]["age"], 7) << raw->dump();
  const int patches = fake.request_count("buckets.patch");
  EXPECT_FALSE(client.ensure_lifecycle("b", rules));
  EXPECT_EQ(fake.request_count("buckets.patch"), patches) << "nothing to change, nothing sent";
}

// A context's customTime is its last use: set on upload, moved on by touch.
TEST_F(StorageTest, CustomTimeIsSetOnUploadAndByTouch) {
  fake.create_bucket("b");
  gcp::UploadOptions options;
  options.custom_time = "2026-01-02T03:04:05.000Z";
  client.upload_string("b", "small", "x", options);
  options.single_request_limit = 0;  // the resumable path carries it too
  client.upload_file("b", "big", write_file("big.bin", std::string(300 << 10, 'y')), options);
  EXPECT_EQ(client.get_object("b", "small")->custom_time, "2026-01-02T03:04:05.000Z");
  EXPECT_EQ(client.get_object("b", "big")->custom_time, "2026-01-02T03:04:05.000Z");
  client.touch("b", "small");
  const std::string touched = client.get_object("b", "small")->custom_time;
  EXPECT_GT(touched, "2026-01-02T03:04:05.000Z") << touched;
  EXPECT_EQ(touched.substr(0, 4), rfc3339(now_unix()).substr(0, 4));
}

TEST_F(StorageTest, SmallObjectsRoundTripInOneRequest) {
  fake.create_bucket("b");
  std::string data = "hello world";
  auto o = client.upload_string("b", "dir/hello.txt", data);
  EXPECT_EQ(o.size, data.size());
  EXPECT_EQ(o.crc32c, "yZRlqg==");
  EXPECT_GT(o.generation, 0);
  EXPECT_EQ(fake.request_count("upload.multipart"), 1);
  EXPECT_EQ(fake.object_data("b", "dir/hello.txt"), data);
  EXPECT_EQ(client.download_string("b", "dir/hello.txt"), data);
}

TEST_F(StorageTest, ACorruptedDownloadIsFetchedAgainThenGivenUpOn) {
  fake.create_bucket("b");
  const std::string data = random_bytes(300000, 3);
  fake.put_object("b", "o.bin", data);
  // Once corrupted (the checksum says so): fetched again, the caller never hears of it.
  fake.corrupt_next_download();
  EXPECT_EQ(client.download_string("b", "o.bin"), data);
  fake.corrupt_next_download();
  client.download_file("b", "o.bin", dir / "o.bin");
  EXPECT_EQ(read_file(dir / "o.bin").value_or(""), data);
  EXPECT_EQ(fake.pending_faults(), 0);
  // Corrupted every time: one clear error, and no partial file left.
  fake.corrupt_next_download(3);
  EXPECT_THROW(client.download_string("b", "o.bin"), Error);
  EXPECT_EQ(fake.pending_faults(), 0);
  try {
    fake.corrupt_next_download(3);
    client.download_file("b", "o.bin", dir / "again.bin");
    ADD_FAILURE() << "a download corrupted every time was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CRC32C mismatch"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "again.bin"));
}

// Issue #14: a download without a progress display is one request; the object's generation,
// size and checksum come with its data.
TEST_F(StorageTest, ADownloadIsOneRequestAndTheAnswerDescribesTheObject) {
  fake.create_bucket("b");
  const std::string data = random_bytes(70000, 5);
  const auto put = fake.put_object("b", "d/o.bin", data);
  fake.reset_counters();
  ObjectInfo got = client.download_file("b", "d/o.bin", dir / "o.bin");
  EXPECT_EQ(fake.request_count("objects.download"), 1);
  EXPECT_EQ(fake.request_count("objects.get"), 0);
  EXPECT_EQ(read_file(dir / "o.bin").value_or(""), data);
  EXPECT_EQ(got.size, data.size());
  EXPECT_EQ(got.generation, std::stoll(put["generation"].get<std::string>()));
  EXPECT_EQ(got.crc32c, crc32c_base64(crc32c(data)));
  // A missing object is not_found, and leaves no partial file.
  try {
    client.download_file("b", "d/missing.bin", dir / "missing.bin");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_NE(std::string(e.what()).find("no such object"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "missing.bin"));
  EXPECT_FALSE(fs::exists(dir / ".missing.bin.part"));
}

TEST_F(StorageTest, MatchGlobListsOnlyTheMatchingObjects) {
  fake.create_bucket("b");
  for (auto n : {"jobs/a/results/status.json", "jobs/a/results/attempts/1/log/000001",
                 "jobs/b/results/status.json", "jobs/b/x/results/status.json", "jobs/c/spec.json"})
    fake.put_object("b", n, "x");
  std::vector<std::string> names;
  for (const auto& o : client.list("b", "jobs/", "", "jobs/*/results/status.json").objects)
    names.push_back(o.name);
  // '*' stays within one path segment.
  EXPECT_EQ(names,
            (std::vector<std::string>{"jobs/a/results/status.json", "jobs/b/results/status.json"}));
  names.clear();
  for (const auto& o : client.list("b", "", "", "jobs/**/status.json").objects)
    names.push_back(o.name);
  EXPECT_EQ(names.size(), 3u);
}

TEST_F(StorageTest, LargeFileGoesResumableInChunksAndDownloadsVerified) {
  fake.create_bucket("b");
  std::string data = random_bytes(3 * 1024 * 1024 + 12345, 1);
  UploadOptions opt;
  opt.single_request_limit = 1 << 20;
  opt.chunk_size = 1 << 20;
  std::vector<uint64_t> progress;
  opt.progress = [&](uint64_t done, uint64_t) { progress.push_back(done); };
  auto o = client.upload_file("b", "big.bin", write_file("big.bin", data), opt);
  EXPECT_EQ(o.size, data.size());
  EXPECT_EQ(o.crc32c, crc32c_base64(crc32c(data)));
  EXPECT_EQ(fake.request_count("upload.resumable.put"), 4);
  EXPECT_EQ(progress.back(), data.size());
  EXPECT_EQ(fake.object_data("b", "big.bin"), data);

  auto d = client.download_file("b", "big.bin", dir / "out" / "big.bin");
  EXPECT_EQ(d.size, data.size());
  EXPECT_EQ(read_file(dir / "out" / "big.bin"), data);
  EXPECT_FALSE(fs::exists(dir / "out" / ".big.bin.part"));
}

// The Content-Range of every request the fake's resumable sessions received, in order, with
// "(dropped)" for one whose connection the fake cut.
std::vector<std::string> content_ranges(const fakes::FakeGcs& fake) {
  std::vector<std::string> out;
  for (const auto& r : fake.resumable_requests())
    out.push_back(r.content_range + (r.dropped ? " (dropped)" : ""));
  return out;
}

TEST_F(StorageTest, AFaultFreeResumableUploadSendsEachByteOnce) {
  fake.create_bucket("b");
  std::string data = random_bytes(2 * 1024 * 1024 + 100, 3);
  UploadOptions opt = in_1mib_chunks();
  client.upload_file("b", "once.bin", write_file("once.bin", data), opt);
  EXPECT_EQ(fake.object_data("b", "once.bin"), data);
  EXPECT_EQ(content_ranges(fake),
            (std::vector<std::string>{"bytes 0-1048575/2097252", "bytes 1048576-2097151/2097252",
                                      "bytes 2097152-2097251/2097252"}));
  uint64_t sent = 0;
  for (const auto& r : fake.resumable_requests()) sent += r.body_bytes;
  EXPECT_EQ(sent, data.size());
  EXPECT_EQ(fake.request_count("resent_bytes"), 0);
}

TEST_F(StorageTest, After308TheUploadResumesExactlyWhereTheRangeHeaderEnds) {
  fake.create_bucket("b");
  std::string data = random_bytes(2 * 1024 * 1024, 4);
  UploadOptions opt = in_1mib_chunks();
  // The first chunk's 308 says "Range: bytes=0-524287": only half of it was persisted.
  fake.persist_at_most_next(512 * 1024);
  client.upload_file("b", "short.bin", write_file("short.bin", data), opt);
  EXPECT_EQ(fake.pending_faults(), 0);
  EXPECT_EQ(fake.object_data("b", "short.bin"), data);
  EXPECT_EQ(content_ranges(fake),
            (std::vector<std::string>{"bytes 0-1048575/2097152", "bytes 524288-1572863/2097152",
                                      "bytes 1572864-2097151/2097152"}));
  EXPECT_EQ(fake.request_count("resent_bytes"), 0);
}

TEST_F(StorageTest, AResumableUploadSurvivesAConnectionDroppedMidChunk) {
  fake.create_bucket("b");
  std::string data = random_bytes(2 * 1024 * 1024, 2);
  UploadOptions opt = in_1mib_chunks();
  fake.drop_connection_after(600 * 1024);  // the first chunk dies after 600 KiB; 512 KiB persist
  auto o = client.upload_file("b", "dropped.bin", write_file("d.bin", data), opt);
  EXPECT_EQ(o.crc32c, crc32c_base64(crc32c(data)));
  EXPECT_EQ(fake.object_data("b", "dropped.bin"), data);
  // The dropped chunk, the status query, then the rest from the persisted size: never a blind
  // resend of the chunk from its old offset.
  EXPECT_EQ(
      content_ranges(fake),
      (std::vector<std::string>{"bytes 0-1048575/2097152 (dropped)", "bytes */2097152",
                                "bytes 524288-1572863/2097152", "bytes 1572864-2097151/2097152"}));
  EXPECT_EQ(fake.request_count("resent_bytes"), 0);
}

// A chunk is streamed from the file and never replayed below the client, so an expired token's
// 401 on one is handled like a dropped chunk: ask the session, go on from what it kept.
TEST_F(StorageTest, A401OnAStreamedChunkAsksTheSessionAndGoesOn) {
  fake.create_bucket("b");
  std::string data = random_bytes(2 * 1024 * 1024, 5);
  UploadOptions opt = in_1mib_chunks();
  fake.fail_next(1, 401, -1, "PUT /upload");
  auto o = client.upload_file("b", "token.bin", write_file("t.bin", data), opt);
  EXPECT_EQ(o.crc32c, crc32c_base64(crc32c(data)));
  EXPECT_EQ(fake.object_data("b", "token.bin"), data);
  EXPECT_EQ(content_ranges(fake),
            (std::vector<std::string>{"bytes */2097152", "bytes 0-1048575/2097152",
                                      "bytes 1048576-2097151/2097152"}))
      << "the refused chunk, the status query, then every byte once";
}

TEST_F(StorageTest, A503StormIsRetriedHonouringRetryAfter) {
  fake.create_bucket("b");
  fake.put_object("b", "x", "payload");
  fake.fail_next(3, 503, 2);
  EXPECT_EQ(client.download_string("b", "x"), "payload");
  ASSERT_EQ(waits.size(), 3u);
  for (auto w : waits) EXPECT_GE(w.count(), 2000) << "Retry-After: 2 was not honoured";
}

TEST_F(StorageTest, PreconditionsAndMissingObjects) {
  fake.create_bucket("b");
  UploadOptions only_new;
  only_new.if_generation_match = 0;
  client.upload_string("b", "once", "1", only_new);
  try {
    client.upload_string("b", "once", "2", only_new);
    FAIL() << "ifGenerationMatch=0 on an existing object must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gs://b/once"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fake.object_data("b", "once"), "1");
  EXPECT_FALSE(client.get_object("b", "missing").has_value());
  EXPECT_FALSE(client.delete_object("b", "missing"));
  EXPECT_TRUE(client.delete_object("b", "once"));
  EXPECT_THROW(client.download_string("b", "once"), Error);
}

TEST_F(StorageTest, ListingFollowsPagesAndDelimiters) {
  fake.create_bucket("b");
  for (int i = 0; i < 1205; ++i) fake.put_object("b", "jobs/j" + std::to_string(i) + "/s", "x");
  fake.put_object("b", "contexts/a.tar.zst", "x");
  auto all = client.list("b", "jobs/");
  EXPECT_EQ(all.objects.size(), 1205u);
  EXPECT_GE(fake.request_count("objects.list"), 2) << "1000 per page at most";
  auto top = client.list("b", "", "/");
  EXPECT_TRUE(top.objects.empty());
  EXPECT_EQ(top.prefixes, (std::vector<std::string>{"contexts/", "jobs/"}));
}

TEST_F(StorageTest, NamesAreEncoded) {
  fake.create_bucket("b");
  std::string name = "odd name/with #?%&+=ü.txt";
  client.upload_string("b", name, "ok");
  EXPECT_EQ(fake.object_data("b", name), "ok");
  EXPECT_EQ(client.get_object("b", name)->name, name);
  EXPECT_EQ(encode_object_name("a/b c"), "a%2Fb%20c");
}

}  // namespace
}  // namespace kinetic::gcp

#include "gcp/composite_upload.h"
#include "gcp/parallel_transfer.h"

namespace kinetic::gcp {
namespace {

TEST(ParallelTransfer, ManySmallObjectsBothWaysOnEightThreads) {
  fakes::FakeGcs fake;
  fake.create_bucket("b");
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-par-");
  std::vector<TransferTask> up, down;
  for (int i = 0; i < 300; ++i) {
    std::string name = "many/f" + std::to_string(i);
    fs::path src = dir / "src" / std::to_string(i);
    atomic_write(src,
                 std::string(static_cast<size_t>(i * 37 % 5000), static_cast<char>('a' + i % 26)));
    up.push_back({TransferTask::Kind::upload, "b", name, src, {}});
    down.push_back({TransferTask::Kind::download, "b", name, dir / "dst" / std::to_string(i), {}});
  }
  auto make = [] { return http::retried(http::make_curl_transport()); };
  size_t last_objects = 0;
  auto s = transfer_all(up, fake.url(), make, 8, [&](size_t n, uint64_t) { last_objects = n; });
  EXPECT_EQ(s.objects, 300u);
  EXPECT_EQ(last_objects, 300u);
  auto d = transfer_all(down, fake.url(), make, 8);
  EXPECT_EQ(d.bytes, s.bytes);
  for (int i = 0; i < 300; ++i)
    EXPECT_EQ(read_file(dir / "dst" / std::to_string(i)),
              read_file(dir / "src" / std::to_string(i)));

  // One bad task fails the whole transfer with its error, after the others stop.
  down.push_back({TransferTask::Kind::download, "b", "missing", dir / "x", {}});
  EXPECT_THROW(transfer_all(down, fake.url(), make, 8), Error);

  // Removal (`cleanup`'s deletes): every object goes, and one gone already is no failure.
  std::vector<TransferTask> removals;
  for (int i = 0; i < 300; ++i)
    removals.push_back({TransferTask::Kind::remove, "b", "many/f" + std::to_string(i), {}, {}});
  removals.push_back({TransferTask::Kind::remove, "b", "missing", {}, {}});
  EXPECT_EQ(transfer_all(removals, fake.url(), make, 8).objects, 301u);
  EXPECT_TRUE(fake.object_names("b", "many/").empty());
  remove_all_quiet(dir);
}

TEST(CompositeUpload, PartsAreEqualUpTo32AndCoverTheFile) {
  const uint64_t q = 256 * 1024;
  EXPECT_EQ(component_ranges(100, 32 * q).size(), 1u) << "below one part: one upload";
  auto three = component_ranges(3 * q + 5, q);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0], std::make_pair(uint64_t{0}, q + 2));
  EXPECT_EQ(three[1], std::make_pair(q + 2, q + 2));
  EXPECT_EQ(three[2], std::make_pair(2 * q + 4, q + 1)) << "the rest";
  EXPECT_EQ(component_ranges(q * 1000, q).size(), 32u) << "at most 32: one compose";
  for (uint64_t size : {q * 1000 + 1, q * 33, q * 32, q * 7 + 3}) {
    auto ranges = component_ranges(size, q);
    EXPECT_LE(ranges.size(), 32u);
    uint64_t next = 0;
    for (auto [first, length] : ranges) {
      EXPECT_EQ(first, next);
      EXPECT_GT(length, 0u);
      next = first + length;
    }
    EXPECT_EQ(next, size);
  }
}

class CompositeUploadTest : public ::testing::Test {
 protected:
  fakes::FakeGcs fake;
  std::unique_ptr<http::Transport> transport = http::retried(http::make_curl_transport());
  StorageClient client{*transport, fake.url()};
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-compose-");
  std::function<std::shared_ptr<http::Transport>()> make = [] {
    return http::retried(http::make_curl_transport());
  };
  CompositePlan plan{.threshold = 1 << 20, .min_component = 512 << 10, .parallelism = 3};

  CompositeUploadTest() { fake.create_bucket("b"); }
  ~CompositeUploadTest() override { remove_all_quiet(dir); }
  fs::path file_of(size_t size) {
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>((i * 131) ^ (i >> 9));
    atomic_write(dir / "big", data);
    return dir / "big";
  }
};

// Above the threshold a file goes up as parts on several connections, composed once (the
// object is the file, its CRC32C the file's) and the parts deleted.
TEST_F(CompositeUploadTest, ALargeFileIsComposedFromPartsThatAreThenDeleted) {
  const fs::path file = file_of((3 << 20) + 12345);
  std::atomic<uint64_t> last{0};
  UploadOptions options{.content_type = "application/zstd",
                        .if_generation_match = 0,
                        .custom_time = "2026-11-27T00:00:00.000Z"};
  options.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_LE(done, total);
    last = done;
  };
  ObjectInfo o = upload_file_in_parts(client, "b", "contexts/x.tar.zst", file, options, plan,
                                      fake.url(), make);
  const std::string data = *read_file(file);
  EXPECT_EQ(fake.object_data("b", "contexts/x.tar.zst"), data);
  EXPECT_EQ(o.crc32c, crc32c_base64(crc32c(data)));
  EXPECT_EQ(o.content_type, "application/zstd");
  EXPECT_EQ(o.custom_time, "2026-11-27T00:00:00.000Z");
  EXPECT_EQ(last.load(), data.size());
  EXPECT_EQ(fake.request_count("upload.resumable.start"), 6) << "6 parts of 512 KiB and more";
  EXPECT_EQ(fake.request_count("objects.compose"), 1);
  EXPECT_TRUE(fake.object_names("b", "uploads/").empty()) << "the parts are gone";
  EXPECT_EQ(fake.object_names("b", "").size(), 1u);
}

TEST_F(CompositeUploadTest, BelowTheThresholdItIsOneUpload) {
  const fs::path file = file_of((1 << 20) - 1);
  upload_file_in_parts(client, "b", "small", file, {}, plan, fake.url(), make);
  EXPECT_EQ(fake.request_count("objects.compose"), 0);
  EXPECT_EQ(fake.object_data("b", "small"), *read_file(file));
}

// A part that cannot be uploaded fails the upload with its error; the parts made are deleted and
// no object is made.
TEST_F(CompositeUploadTest, AFailedPartLeavesNothingBehind) {
  const fs::path file = file_of(3 << 20);
  fake.fail_next(1, 403, -1, "PUT /upload");
  EXPECT_THROW(upload_file_in_parts(client, "b", "x", file, {}, plan, fake.url(), make), Error);
  EXPECT_TRUE(fake.object_names("b", "").empty());
  EXPECT_EQ(fake.request_count("objects.compose"), 0);
}

// So does a compose that fails once every part is up.
TEST_F(CompositeUploadTest, AFailedComposeDeletesEveryPart) {
  const fs::path file = file_of(3 << 20);
  fake.fail_next(1, 403, -1, "POST /storage/v1/b/b/o/x/compose");
  EXPECT_THROW(upload_file_in_parts(client, "b", "x", file, {}, plan, fake.url(), make), Error);
  EXPECT_EQ(fake.request_count("upload.resumable.start"), 6);
  EXPECT_TRUE(fake.object_names("b", "").empty());
}

// Two uploads of one name at once (two runs staging the same context) keep their parts apart;
// with ifGenerationMatch=0 one composes and the other fails 412, and both clean up.
TEST_F(CompositeUploadTest, AnObjectMadeMeanwhileFailsThePreconditionAndCleansUp) {
  const fs::path file = file_of(2 << 20);
  fake.put_object("b", "x", "made by another run");
  UploadOptions options{.if_generation_match = 0};
  EXPECT_THROW(upload_file_in_parts(client, "b", "x", file, options, plan, fake.url(), make),
               Error);
  EXPECT_EQ(fake.object_data("b", "x"), "made by another run");
  EXPECT_TRUE(fake.object_names("b", "uploads/").empty());
}

}  // namespace
}  // namespace kinetic::gcp
