// --data SRC:DST[:ro|:rw] (job/data_mount.h): what parses, what each mistake says, and the
// checks across mounts.
#include <gtest/gtest.h>

#include "core/error.h"
#include "job/data_mount.h"
#include "job/spec.h"

namespace kinetic {
namespace {

struct Parsed {
  const char* value;
  const char* source;
  const char* target;
  bool writable;
};

class DataFlagParses : public ::testing::TestWithParam<Parsed> {};

TEST_P(DataFlagParses, IntoSourceTargetAndMode) {
  const Parsed& p = GetParam();
  const DataMount m = parse_data_flag(p.value);
  EXPECT_EQ(m.source, p.source);
  EXPECT_EQ(m.target, p.target);
  EXPECT_EQ(m.writable, p.writable);
}

INSTANTIATE_TEST_SUITE_P(
    Values, DataFlagParses,
    ::testing::Values(Parsed{"./dataset:data", "./dataset", "data", false},
                      Parsed{"./dataset:data/", "./dataset", "data", false},
                      Parsed{"/srv/x:./in/x:ro", "/srv/x", "in/x", false},
                      Parsed{"/srv/x:/srv/x", "/srv/x", "/srv/x", false},
                      Parsed{"gs://my-bucket:/data", "gs://my-bucket", "/data", false},
                      Parsed{"gs://my-bucket/a/b/:data:rw", "gs://my-bucket/a/b", "data", true},
                      Parsed{"gs://b_1.example.com/p:/in//deep/", "gs://b_1.example.com/p",
                             "/in/deep", false}));

TEST(DataFlag, GcsSourceSplitsIntoBucketAndPrefix) {
  const DataMount whole = parse_data_flag("gs://my-bucket:/data");
  EXPECT_TRUE(whole.is_gcs());
  EXPECT_EQ(whole.bucket(), "my-bucket");
  EXPECT_EQ(whole.prefix(), "");
  const DataMount part = parse_data_flag("gs://my-bucket/imagenet/train:data");
  EXPECT_EQ(part.bucket(), "my-bucket");
  EXPECT_EQ(part.prefix(), "imagenet/train");
  EXPECT_FALSE(parse_data_flag("./gs:data").is_gcs());
}

struct Refused {
  const char* value;
  const char* says;
};

class DataFlagRefuses : public ::testing::TestWithParam<Refused> {};

TEST_P(DataFlagRefuses, WithAUsageErrorSayingHowToFixIt) {
  const Refused& r = GetParam();
  try {
    parse_data_flag(r.value);
    FAIL() << r.value << " parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    const std::string what = e.what();
    EXPECT_NE(what.find(std::string("--data '") + r.value + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(r.says), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Values, DataFlagRefuses,
    ::testing::Values(
        Refused{"./dataset", "expected SRC:DST"}, Refused{":data", "no SRC"},
        Refused{"./dataset:", "no DST"}, Refused{"./d:data:r", "did you mean :ro?"},
        Refused{"gs://b1x:data:wr", "did you mean :rw?"},
        Refused{"gs:/bucket/x:data", "did you mean gs://bucket/x:data?"},
        Refused{"s3://bucket/x:data", "only gs://BUCKET[/PATH] and local directories"},
        Refused{"gs://My-Bucket:data", "did you mean gs://my-bucket?"},
        Refused{"gs://ab:data", "is not a bucket name"},
        Refused{"gs://-ab:data", "is not a bucket name"}, Refused{"gs://:data", "no bucket"},
        Refused{"gs://b1x/a,b:data", "without one"},
        Refused{"./dataset:data:rw", ":rw needs a gs:// source"},
        Refused{"./d:.", "working directory itself"}, Refused{"./d:../up", "climbs out"},
        Refused{"./d:a/../..", "climbs out"}, Refused{"./d:~/data", "'~' is not expanded"},
        Refused{"gs://b1x:/", "system directory"}, Refused{"gs://b1x:/usr/local/d", "system"},
        Refused{"gs://b1x:/tmp", "system directory"},
        Refused{"gs://b1x:/mnt/kinetic-data/x", "system directory"}));

TEST(DataMounts, RefuseTheSameTargetTwice) {
  try {
    check_data_mounts({parse_data_flag("./a:data"), parse_data_flag("gs://b1x:./data/")});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("both mount at data; give each its own DST"),
              std::string::npos)
        << e.what();
  }
}

TEST(DataMounts, RefuseATargetInsideAnother) {
  try {
    check_data_mounts({parse_data_flag("gs://b1x/x:/data/x"), parse_data_flag("./a:/data")});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("DST /data/x (gs://b1x/x) is inside DST /data (./a)"),
              std::string::npos)
        << e.what();
  }
  // Side by side, and a name that merely begins like another, are fine.
  EXPECT_NO_THROW(check_data_mounts(
      {parse_data_flag("./a:data"), parse_data_flag("./b:data-2"), parse_data_flag("./c:/data")}));
}

TEST(DataMounts, PathsInTheJob) {
  EXPECT_EQ(data_mount_path(parse_data_flag("./a:in/a"), "/w/ctx"), "/w/ctx/in/a");
  EXPECT_EQ(data_mount_path(parse_data_flag("./a:/data"), "/w/ctx"), "/data");
  EXPECT_EQ(csi_mount_path(parse_data_flag("gs://b1x:in/a")), "/mnt/kinetic-data/in/a");
  EXPECT_EQ(csi_mount_path(parse_data_flag("gs://b1x:/data")), "/data");
}

TEST(DataMounts, TravelInTheSpec) {
  JobSpec spec;
  spec.id = "job-1a2b3c4d";
  DataMount m = parse_data_flag("gs://b1x/p:/data:rw");
  DataMount d = parse_data_flag("/home/me/set:set");
  d.staged_uri = "gs://jobs/contexts/abc.tar.gz";
  d.staged_sha256 = "abc";
  spec.data = {m, d};
  const JobSpec back = job_spec_from_json(nlohmann::json::parse(spec_document(spec)));
  ASSERT_EQ(back.data.size(), 2u);
  EXPECT_EQ(back.data[0].source, "gs://b1x/p");
  EXPECT_EQ(back.data[0].target, "/data");
  EXPECT_TRUE(back.data[0].writable);
  EXPECT_EQ(back.data[1].staged_uri, "gs://jobs/contexts/abc.tar.gz");
  EXPECT_EQ(back.data[1].staged_sha256, "abc");
  EXPECT_FALSE(back.data[1].writable);
  // A record written before --data existed has none.
  EXPECT_TRUE(job_spec_from_json(nlohmann::json{{"id", "job-1a2b3c4d"}}).data.empty());
}

}  // namespace
}  // namespace kinetic
