// `kinetic run --data SRC:DST` on the local backend, as a user runs it: a local directory shows
// at DST as it is, gs:// data is downloaded once into the state dir's cache (against the fake
// GCS), and what cannot work here fails in one line before anything runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "fakes/fake_gcs.h"
#include "show_data_job.h"

namespace kinetic::test {
namespace {

class DataTest : public ::testing::Test {
 protected:
  void SetUp() override { sb.write("proj/show.py", kShowData); }
  std::string jobs_in_state() const {
    std::error_code ec;
    std::string ids;
    for (const auto& e : fs::directory_iterator(sb.state() / "jobs", ec))
      ids += e.path().filename().string() + " ";
    return ids;
  }

  Sandbox sb;
  fs::path proj = sb.project("proj");
};

TEST_F(DataTest, ALocalDirectoryShowsAtARelativeDstAsItIs) {
  sb.write("datasets/set1/a.txt", "alpha\n");
  sb.write("datasets/set1/sub/b.txt", "beta\n");
  auto r = sb.run({"run", "show.py", "--data", "../datasets/set1:in/set1", "--", "in/set1"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("seen a.txt alpha\nseen sub/b.txt beta\n"), std::string::npos) << r.out;
  // As it is: the job could write to it (the local backend does not copy the data).
  EXPECT_NE(r.out.find("writable True"), std::string::npos) << r.out;
  // The work directory went; the data did not.
  EXPECT_EQ(slurp(sb.root() / "datasets/set1/sub/b.txt"), "beta\n");
  const std::string job = job_id_in(r.err);
  EXPECT_FALSE(fs::exists(sb.state() / "jobs" / job / "work"));
  auto spec = nlohmann::json::parse(slurp(sb.state() / "jobs" / job / "spec.json"));
  ASSERT_EQ(spec["data"].size(), 1u) << spec.dump();
  EXPECT_EQ(spec["data"][0]["source"], (sb.root() / "datasets/set1").string());
  EXPECT_EQ(spec["data"][0]["target"], "in/set1");
  EXPECT_EQ(spec["data"][0]["mode"], "ro");
}

// "./data:data": the project's own data folder, mounted where the job expects it, is left out
// of the context instead of colliding with it.
TEST_F(DataTest, AFolderOfTheContextMountedInPlaceIsNotShipped) {
  sb.write("proj/data/big.bin", "bytes\n");
  sb.write("proj/lib/util.py", "X = 1\n");
  auto r = sb.run({"run", "show.py", "--data", "data:data", "-v", "2", "--", "data"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("seen big.bin bytes"), std::string::npos) << r.out;
  auto plan = sb.run({"run", "show.py", "--data", "data:data", "--dry-run", "-o", "json"}, proj);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  auto doc = nlohmann::json::parse(plan.out);
  // show.py, lib/, lib/util.py: not data/ nor its file.
  EXPECT_EQ(doc["context_files"], 3) << plan.out;
  EXPECT_EQ(doc["data"][0]["target"], "data") << plan.out;

  // Another folder of the context at DST would be hidden by the mount: refused.
  sb.write("other/x.txt", "x\n");
  auto hidden = sb.run({"run", "show.py", "--data", "../other:lib"}, proj);
  EXPECT_EQ(hidden.exit_code, 2) << hidden.err;
  EXPECT_NE(hidden.err.find("lib is part of the job's context, which DST would hide"),
            std::string::npos)
      << hidden.err;
  EXPECT_EQ(line_count(hidden.err), 1u) << hidden.err;
}

TEST_F(DataTest, WhatCannotWorkHereFailsBeforeTheJobExists) {
  sb.write("proj/set/a.txt", "alpha\n");
  struct Case {
    std::vector<std::string> data;
    const char* says;
  };
  const Case cases[] = {
      {{"--data", "missing:data"}, "--data 'missing:data': missing not found"},
      {{"--data", "show.py:data"}, "is not a directory"},
      // The local job runs as you: it cannot make /data.
      {{"--data", "set:/data"},
       "cannot make /data (the job runs as you); give DST relative to "
       "the job's working directory, e.g. --data set:data"},
      {{"--data", "gs://bucket-1/x:/data"}, "e.g. --data gs://bucket-1/x:data"},
      {{"--data", "gs://bucket-1/x:x:rw"}, "drop :rw to run here"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"run", "show.py"};
    args.insert(args.end(), c.data.begin(), c.data.end());
    auto r = sb.run(args, proj);
    EXPECT_EQ(r.exit_code, 2) << c.data[1] << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
  }
  EXPECT_EQ(jobs_in_state(), "");
}

// An absolute DST works here where it is SRC itself: the same command line runs on gke.
TEST_F(DataTest, AnAbsoluteDstThatIsTheSourceItself) {
  sb.write("abs/a.txt", "alpha\n");
  const std::string dir = (sb.root() / "abs").string();
  auto r = sb.run({"run", "show.py", "--data", dir + ":" + dir, "--", dir}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("seen a.txt alpha"), std::string::npos) << r.out;
}

// gs:// data is downloaded once: a second run over the same objects lists them and downloads
// nothing; a changed object makes a new copy. The files are read-only, as the GKE mount is.
TEST_F(DataTest, GcsDataIsDownloadedOnceIntoTheCache) {
  fakes::FakeGcs gcs;
  gcs.put_object("training-data", "sets/one/a.txt", "alpha\n");
  gcs.put_object("training-data", "sets/one/sub/b.txt", "beta\n");
  gcs.put_object("training-data", "sets/other.txt", "not mounted\n");
  const std::map<std::string, std::string> env = {{"STORAGE_EMULATOR_HOST", gcs.url()},
                                                  {"CLOUDSDK_AUTH_ACCESS_TOKEN", "token"}};
  const std::vector<std::string> run = {
      "run", "show.py", "--data", "gs://training-data/sets/one:in", "--", "in"};

  auto first = sb.run(run, proj, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("seen a.txt alpha\nseen sub/b.txt beta\nwritable False\n"),
            std::string::npos)
      << first.out;
  EXPECT_EQ(gcs.request_count("objects.download"), 2);
  EXPECT_NE(first.err.find("kinetic: downloading gs://training-data/sets/one/ (2 objects, "),
            std::string::npos)
      << first.err;

  auto second = sb.run(run, proj, env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err.find("downloading"), std::string::npos) << second.err;
  EXPECT_NE(second.out.find("seen a.txt alpha\nseen sub/b.txt beta\n"), std::string::npos);
  EXPECT_EQ(gcs.request_count("objects.download"), 2) << "the cached copy was downloaded again";
  EXPECT_EQ(gcs.request_count("objects.list"), 2);

  gcs.put_object("training-data", "sets/one/a.txt", "alpha 2\n");
  auto changed = sb.run(run, proj, env);
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_NE(changed.out.find("seen a.txt alpha 2\n"), std::string::npos) << changed.out;

  // `cleanup` removes the copies no running job uses, by their last use.
  EXPECT_FALSE(fs::is_empty(sb.state() / "cache" / "data"));
  auto cleanup = sb.run({"cleanup", "--older-than", "0s"}, proj, env);
  EXPECT_EQ(cleanup.exit_code, 0) << cleanup.err;
  EXPECT_TRUE(fs::is_empty(sb.state() / "cache" / "data"));

  // An empty prefix is a mistake worth one line, before the job exists.
  auto empty = sb.run({"run", "show.py", "--data", "gs://training-data/nothing:in"}, proj, env);
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_NE(empty.err.find("gs://training-data/nothing/ holds no objects"), std::string::npos)
      << empty.err;
}

// An object whose name has an empty component would join as an absolute path: the bucket's
// writer could replace any file of yours (issue #28 point 2). Refused before anything is written.
TEST_F(DataTest, AnObjectNameThatWouldLandOutsideTheCopyIsRefused) {
  fakes::FakeGcs gcs;
  const fs::path victim = sb.root() / "home-file";
  atomic_write(victim, "mine\n");
  gcs.put_object("evil-data", "pre/a.txt", "fine\n");
  gcs.put_object("evil-data", "pre/" + victim.string(), "replaced\n");  // "pre//tmp/..."
  const std::map<std::string, std::string> env = {{"STORAGE_EMULATOR_HOST", gcs.url()},
                                                  {"CLOUDSDK_AUTH_ACCESS_TOKEN", "token"}};
  auto r = sb.run({"run", "show.py", "--data", "gs://evil-data/pre:in", "--", "in"}, proj, env);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("empty path component"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(victim), "mine\n");
  EXPECT_EQ(gcs.request_count("objects.download"), 0) << "nothing is downloaded";
  std::error_code ec;
  EXPECT_TRUE(!fs::exists(sb.state() / "cache" / "data") ||
              fs::is_empty(sb.state() / "cache" / "data", ec));
  EXPECT_FALSE(fs::exists(sb.state() / "jobs")) << "no job was created";
}

}  // namespace
}  // namespace kinetic::test
