// lib/pipeline/step_cache.h over the local backend's store (backend/local/local_pipeline_store.h):
// a cache entry counts only while its outputs are there and complete.
#include <gtest/gtest.h>

#include "backend/local/local_pipeline_store.h"
#include "core/error.h"
#include "core/fs.h"
#include "pipeline/step_cache.h"

namespace kinetic {
namespace {

class StepCacheTest : public ::testing::Test {
 protected:
  // A step's output folder whose status.json says STATE.
  fs::path outputs(const std::string& name, const std::string& state) {
    const fs::path dir = root.path() / "kinetic-out" / name;
    atomic_write(dir / "status.json", "{\"state\": \"" + state + "\"}\n");
    return dir;
  }
  CachedStep entry(const std::string& key, const fs::path& dir) {
    return {key, "train", "job-1a2b3c4d", "pipe-5e6f7a8b", dir.string()};
  }

  TempDir root{fs::temp_directory_path(), "kinetic-step-cache-"};
  LocalPipelineStore store{root.path() / "state"};
  StepCache cache{store};
  const std::string key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
};

TEST_F(StepCacheTest, AnEntryCountsWhileItsOutputsAreThereAndSucceeded) {
  EXPECT_FALSE(cache.find(key));
  const fs::path dir = outputs("train", "succeeded");
  cache.remember(entry(key, dir));
  auto hit = cache.find(key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->job, "job-1a2b3c4d");
  EXPECT_EQ(hit->outputs, dir.string());
  // Another key, or a key that is not one (it would name a path), finds nothing.
  EXPECT_FALSE(cache.find(std::string(64, 'b')));
  EXPECT_FALSE(cache.find("../../etc/passwd"));
  // Outputs deleted: the step runs again.
  remove_all_quiet(dir);
  EXPECT_FALSE(cache.find(key));
}

TEST_F(StepCacheTest, FailedOrIncompleteOutputsDoNotCount) {
  cache.remember(entry(key, outputs("failed", "failed")));
  EXPECT_FALSE(cache.find(key));
  const fs::path no_status = root.path() / "kinetic-out" / "bare";
  make_dirs(no_status);
  EXPECT_FALSE(store.outputs_present(no_status.string()));
  EXPECT_TRUE(store.outputs_present(outputs("ok", "succeeded").string()));
}

TEST_F(StepCacheTest, TheLatestOutputsArePerPipelineFileAndStep) {
  const fs::path pipeline = root.path() / "proj" / "kinetic.yaml";
  const fs::path dir = outputs("prep", "succeeded");
  auto prep = entry(key, dir);
  prep.step = "prep";
  cache.remember_latest(pipeline, prep);
  ASSERT_TRUE(cache.latest(pipeline, "prep"));
  EXPECT_EQ(cache.latest(pipeline, "prep")->key, key);
  EXPECT_FALSE(cache.latest(pipeline, "train"));
  EXPECT_FALSE(cache.latest(root.path() / "other" / "kinetic.yaml", "prep"));
}

TEST_F(StepCacheTest, AnEntryOfTheFirstSliceNamedItsFolderOutputDir) {
  const fs::path dir = outputs("train", "succeeded");
  store.write("cache/" + key + ".json", "{\"key\": \"" + key +
                                            "\", \"job\": \"job-1a2b3c4d\", \"output_dir\": \"" +
                                            dir.string() + "\"}");
  ASSERT_TRUE(cache.find(key));
  EXPECT_EQ(cache.find(key)->outputs, dir.string());
}

TEST_F(StepCacheTest, TheStoreRefusesANameThatClimbsOutOfIt) {
  EXPECT_THROW(store.write("../escape.json", "{}"), Error);
  EXPECT_FALSE(fs::exists(root.path() / "escape.json"));
  EXPECT_FALSE(store.read("cache/none.json"));
}

}  // namespace
}  // namespace kinetic
