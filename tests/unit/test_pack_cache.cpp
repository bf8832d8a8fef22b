// Skipping the packing of an unchanged tree: the tree fingerprint and the cache behind it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/fs.h"
#include "pack/archive.h"
#include "pack/pack_cache.h"

namespace kinetic {
namespace {

class TreeSignatureTest : public ::testing::Test {
 protected:
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-sig-");
  IgnoreRules rules = IgnoreRules::defaults();
  ~TreeSignatureTest() override { remove_all_quiet(dir); }

  void write(const std::string& rel, const std::string& data) {
    make_dirs((dir / rel).parent_path(), 0755);
    atomic_write(dir / rel, data, 0644, Durability::unsynced);
  }
  std::string sig(Compression c = Compression::gzip) {
    double newest = 0;
    return tree_signature(dir, rules, c, &newest);
  }
};

TEST_F(TreeSignatureTest, StableForAnUnchangedTreeAndSensitiveToEveryChange) {
  write("train.py", "print(1)\n");
  write("data/a.txt", "aaaa");
  const std::string first = sig();
  EXPECT_EQ(sig(), first);
  EXPECT_NE(sig(Compression::zstd), first) << "the archive format is part of the key";

  write("data/a.txt", "bbbb");  // same size, rewritten: new inode/ctime
  const std::string rewritten = sig();
  EXPECT_NE(rewritten, first);

  ::chmod((dir / "train.py").c_str(), 0755);
  const std::string chmodded = sig();
  EXPECT_NE(chmodded, rewritten);

  write("new.py", "");
  EXPECT_NE(sig(), chmodded);
}

TEST_F(TreeSignatureTest, IgnoredEntriesDoNotCount) {
  write("train.py", "print(1)\n");
  const std::string before = sig();
  write("__pycache__/x.pyc", "junk");
  write(".git/HEAD", "ref");
  EXPECT_EQ(sig(), before);
}

TEST_F(TreeSignatureTest, NewestReportsTheLatestChange) {
  write("a", "1");
  struct timespec old_times[2] = {{1000, 0}, {1000, 0}};
  ::utimensat(AT_FDCWD, (dir / "a").c_str(), old_times, 0);
  double newest = 0;
  tree_signature(dir, rules, Compression::gzip, &newest);
  // ctime cannot be set back: it is now, and wins over the old mtime.
  EXPECT_GT(newest, 1000000000);
}

TEST(PackCacheTest, RemembersSettledTreesOnly) {
  fs::path state = make_temp_dir(fs::temp_directory_path(), "kinetic-pc-");
  PackResult r;
  r.sha256 = std::string(64, 'a');
  r.files = 3;
  r.input_bytes = 10;
  r.archive_bytes = 7;
  EXPECT_FALSE(pack_cache_lookup(state, "sig1").has_value());
  // Changed a second ago: not trusted.
  pack_cache_remember(state, "sig1", r, /*newest=*/100.0, /*now=*/101.0);
  EXPECT_FALSE(pack_cache_lookup(state, "sig1").has_value());
  pack_cache_remember(state, "sig1", r, 100.0, 100.0 + kPackCacheSettleSeconds);
  auto hit = pack_cache_lookup(state, "sig1");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->sha256, r.sha256);
  EXPECT_EQ(hit->files, 3u);
  EXPECT_EQ(hit->input_bytes, 10u);
  // A damaged entry is a miss, not an error.
  atomic_write(state / "pack-cache" / "sig2.json", "{not json", 0600, Durability::unsynced);
  EXPECT_FALSE(pack_cache_lookup(state, "sig2").has_value());
  remove_all_quiet(state);
}

}  // namespace
}  // namespace kinetic
