// gcs_copy_path (backend/local/gcs_cache.h): a gs:// object's place in the local copy of a prefix
// never leaves it, whatever the bucket's writer named the object (issue #28 point 2).
#include <gtest/gtest.h>

#include "backend/local/gcs_cache.h"
#include "core/error.h"

namespace kinetic {
namespace {

TEST(GcsCopyPath, NamesUnderThePrefixBecomeRelativePaths) {
  EXPECT_EQ(gcs_copy_path("sets/one/a.txt", "sets/one/", "b").rel, fs::path("a.txt"));
  EXPECT_EQ(gcs_copy_path("sets/one/sub/b.txt", "sets/one/", "b").rel, fs::path("sub/b.txt"));
  EXPECT_EQ(gcs_copy_path("x.txt", "", "b").rel, fs::path("x.txt"));
  const GcsCopyPath folder = gcs_copy_path("sets/one/sub/", "sets/one/", "b");
  EXPECT_TRUE(folder.folder);
  EXPECT_EQ(folder.rel, fs::path("sub"));
  const GcsCopyPath own = gcs_copy_path("sets/one/", "sets/one/", "b");
  EXPECT_TRUE(own.rel.empty());
}

TEST(GcsCopyPath, NamesThatWouldLeaveTheCopyAreRefused) {
  for (const std::string name : {"pre//home/u/.bashrc", "pre//", "pre/a//b", "pre/../x",
                                 "pre/a/../../x", "pre/./a", "pre/a/.", "pre/..", "other/x"}) {
    try {
      const GcsCopyPath p = gcs_copy_path(name, "pre/", "b");
      ADD_FAILURE() << name << " was taken as " << p.rel;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << name;
      EXPECT_NE(std::string(e.what()).find("gs://b/" + name), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kinetic
