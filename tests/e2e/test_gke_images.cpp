// Images fit for their hardware (issue #15, docs/images.md), end to end against the fake cloud:
// a C++ job compiles and runs on a TPU slice, --python picks the image (built once per recipe).
// The cases that need a fake kubelet limited to what the image holds (a prebuilt image without
// python3 or g++, the TPU runtime's import, a broken base image failing its smoke step) wait
// for that fake (docs/images.md "Known gaps").
#include <gtest/gtest.h>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

class GkeImages : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    sb.write("proj/job.cpp",
             "#include <cstdio>\n"
             "int main(int argc, char** argv) { std::printf(\"hello from c++ with %d args\\n\", "
             "argc - 1); return 0; }\n");
  }
};

TEST_F(GkeImages, CppJobCompilesAndRunsOnATpuSlice) {
  auto r = kin({"run", "job.cpp", "--accelerator", "v5litepod-1", "--", "a", "b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("hello from c++ with 2 args"), std::string::npos) << r.out;
}

TEST_F(GkeImages, ThePythonFlagBuildsItsOwnImageOnceAndTheRecipeIsInTheTag) {
  const int builds = cloud_->gcp().builds_created();
  auto first = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--python", "3.12"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(cloud_->gcp().builds_created(), builds + 1);
  auto again = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--python", "3.12"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(cloud_->gcp().builds_created(), builds + 1) << "the same recipe must not rebuild";

  auto bad = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--python", "3.9"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("3.11, 3.12, 3.13"), std::string::npos) << bad.err;
  auto both = kin({"run", "train.py", "--image", "python:3.11-slim", "--python", "3.12"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_EQ(cloud_->gcp().builds_created(), builds + 1);
}

}  // namespace
}  // namespace kinetic::test
