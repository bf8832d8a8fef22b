#include <gtest/gtest.h>

#include "core/fs.h"
#include "pack/context_dir.h"

namespace kinetic {
namespace {

class ContextDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(make_temp_dir(fs::temp_directory_path(), "kinetic-ctx-"));
    home_ = root_ / "home" / "me";
    make_dirs(home_);
  }
  void TearDown() override { remove_all_quiet(root_); }
  void touch(const fs::path& p) { atomic_write(p, ""); }
  fs::path root_, home_;
};

TEST_F(ContextDirTest, NearestAncestorWithAGitDirectory) {
  make_dirs(home_ / "proj" / ".git");
  touch(home_ / "proj" / "src" / "jobs" / "train.py");
  EXPECT_EQ(find_context_dir(home_ / "proj" / "src" / "jobs" / "train.py", home_), home_ / "proj");
}

TEST_F(ContextDirTest, GitFileCountsToo) {
  touch(home_ / "wt" / ".git");  // a worktree or submodule
  touch(home_ / "wt" / "a" / "job.py");
  EXPECT_EQ(find_context_dir(home_ / "wt" / "a" / "job.py", home_), home_ / "wt");
}

TEST_F(ContextDirTest, NearestMarkerWins) {
  make_dirs(home_ / "mono" / ".git");
  touch(home_ / "mono" / "svc" / "requirements.txt");
  touch(home_ / "mono" / "svc" / "bin" / "job.py");
  EXPECT_EQ(find_context_dir(home_ / "mono" / "svc" / "bin" / "job.py", home_),
            home_ / "mono" / "svc");
  touch(home_ / "mono" / "lib" / "pyproject.toml");
  touch(home_ / "mono" / "lib" / "job.py");
  EXPECT_EQ(find_context_dir(home_ / "mono" / "lib" / "job.py", home_), home_ / "mono" / "lib");
}

TEST_F(ContextDirTest, NeverHomeFallsBackToTheJobDirectory) {
  touch(home_ / "requirements.txt");
  make_dirs(home_ / ".git");
  touch(home_ / "scratch" / "deep" / "job.py");
  EXPECT_EQ(find_context_dir(home_ / "scratch" / "deep" / "job.py", home_),
            home_ / "scratch" / "deep");
  // Markers above HOME are not reached either.
  touch(root_ / "home" / "requirements.txt");
  EXPECT_EQ(find_context_dir(home_ / "scratch" / "deep" / "job.py", home_),
            home_ / "scratch" / "deep");
  // HOME given with a trailing slash is the same HOME.
  EXPECT_EQ(find_context_dir(home_ / "scratch" / "deep" / "job.py", home_.string() + "/"),
            home_ / "scratch" / "deep");
}

TEST_F(ContextDirTest, OutsideHomeWalksUpToTheMarker) {
  touch(root_ / "srv" / "pyproject.toml");
  touch(root_ / "srv" / "a" / "b" / "job.py");
  EXPECT_EQ(find_context_dir(root_ / "srv" / "a" / "b" / "job.py", home_), root_ / "srv");
}

TEST_F(ContextDirTest, RelativeJobPathsAreResolved) {
  make_dirs(home_ / "p" / ".git");
  touch(home_ / "p" / "x" / "job.py");
  fs::path cwd = fs::current_path();
  fs::current_path(home_ / "p" / "x");
  fs::path got = find_context_dir("job.py", home_);
  fs::path got2 = find_context_dir("./../x/./job.py", home_);
  fs::current_path(cwd);
  EXPECT_EQ(got, home_ / "p");
  EXPECT_EQ(got2, home_ / "p");
}

TEST_F(ContextDirTest, NoMarkerGivesTheJobDirectory) {
  touch(root_ / "loose" / "job.py");
  EXPECT_EQ(find_context_dir(root_ / "loose" / "job.py", home_), root_ / "loose");
}

}  // namespace
}  // namespace kinetic
