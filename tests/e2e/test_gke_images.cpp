// Images fit for their hardware (issue #15, docs/images.md), end to end against the fake cloud:
// a C++ job compiles and runs on a TPU slice, --python picks the image (built once per recipe),
// and, because the fake kubelet runs a pod with only what its image holds (tests/fakes/
// fake_images.h), each image's gaps fail here as they would on GKE: both sides of each case are
// shown, the job that needs a missing tool failing and the same job in a fit image succeeding.
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

// The same C++ job: in python:3.11-slim there is no compiler (127, as on GKE), in the full
// python:3.11 image (buildpack-deps) there is. Neither is built: --image is used as is.
TEST_F(GkeImages, CppJobInAnImageWithoutACompilerFailsAndInOneWithItRuns) {
  const int builds = cloud_->gcp().builds_created();
  auto slim = kin({"run", "job.cpp", "-a", "v5litepod-1", "--image", "python:3.11-slim"});
  EXPECT_EQ(slim.exit_code, 127) << slim.err;
  EXPECT_NE(slim.err.find("cannot start g++"), std::string::npos) << slim.err;
  EXPECT_EQ(slim.out.find("hello from c++"), std::string::npos) << slim.out;

  auto full = kin({"run", "job.cpp", "-a", "v5litepod-1", "--image", "python:3.11"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_NE(full.out.find("hello from c++ with 0 args"), std::string::npos) << full.out;
  EXPECT_EQ(cloud_->gcp().builds_created(), builds) << "--image must not build";
}

// An image without python3 cannot start kinetic's bootstrap: one line naming the image, 126.
TEST_F(GkeImages, AnImageWithoutPythonIsSaidInOneLine) {
  auto r = kin({"run", "train.py", "-a", "v5litepod-1", "--image", "debian:12-slim"});
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_NE(r.err.find("debian:12-slim has no python3 on its PATH"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("training"), std::string::npos) << r.out;
}

// A prebuilt image of the registry runs as is: no build, and its own packages import.
TEST_F(GkeImages, APrebuiltRegistryImageRunsWithoutABuild) {
  const std::string image = "us-central1-docker.pkg.dev/acme-ml/kinetic/team:v1";
  auto content = *fakes::FakeImageStore::public_image("python:3.12-slim");
  content.packages["team-tools"] = {"team-tools", "2.1.0", {}};
  cloud_->gcp().put_image(image, content);
  sb.write("proj/use_tools.py",
           "import team_tools\nprint(\'team tools\', team_tools.__version__)\n");
  const int builds = cloud_->gcp().builds_created();
  auto r = kin({"run", "use_tools.py", "-a", "v5litepod-1", "--image", image});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("team tools 2.1.0"), std::string::npos) << r.out;
  EXPECT_EQ(cloud_->gcp().builds_created(), builds);

  // The same job in kinetic's own image, which never installed team-tools, fails to import it:
  // nothing of this machine's Python packages reaches a pod.
  auto own = kin({"run", "use_tools.py", "-a", "v5litepod-1"});
  EXPECT_EQ(own.exit_code, 1) << own.err;
  EXPECT_NE((own.out + own.err).find("No module named 'team_tools'"), std::string::npos)
      << own.out << own.err;
}

// A TPU image holds the TPU runtime (a stub of jax[tpu] here) and demands the TPU
// (JAX_PLATFORMS=tpu); the python:3.11-slim image has no jax at all.
TEST_F(GkeImages, TheTpuImageImportsItsRuntimeAndSlimImagesDoNot) {
  sb.write("proj/devices.py",
           "import os, jax\n"
           "print(\'jax\', jax.__version__, jax.devices(), os.environ[\'JAX_PLATFORMS\'])\n");
  auto tpu = kin({"run", "devices.py", "-a", "v5litepod-1"});
  ASSERT_EQ(tpu.exit_code, 0) << tpu.err;
  EXPECT_NE(tpu.out.find("jax 0.7.2 ['tpu:0'] tpu"), std::string::npos) << tpu.out;

  auto slim = kin({"run", "devices.py", "-a", "v5litepod-1", "--image", "python:3.11-slim"});
  EXPECT_EQ(slim.exit_code, 1) << slim.err;
  EXPECT_NE((slim.out + slim.err).find("No module named 'jax'"), std::string::npos)
      << slim.out << slim.err;
}

// A base image without python3 (the context's base-image) fails in the build, quoted in one
// line, 126, and nothing is submitted: a TPU image at its pip step (the shell cannot find
// python3), a CPU image with nothing to install at its smoke step.
TEST_F(GkeImages, ABaseImageWithoutPythonFailsInTheBuildNotOnANode) {
  const std::map<std::string, std::string> debian = {{"KINETIC_BASE_IMAGE", "debian:12-slim"}};
  auto tpu = kin({"run", "train.py", "-a", "v5litepod-1"}, debian);
  EXPECT_EQ(tpu.exit_code, 126) << tpu.err;
  EXPECT_NE(tpu.err.find("the image has no python3 on its PATH, which a build step runs "
                         "(/bin/sh: 1: python3: not found)"),
            std::string::npos)
      << tpu.err;
  auto cpu = kin({"run", "train.py", "-a", "cpu"}, debian);
  EXPECT_EQ(cpu.exit_code, 126) << cpu.err;
  EXPECT_NE(cpu.err.find("the image's smoke test failed: python3 is not on the image's PATH"),
            std::string::npos)
      << cpu.err;
  EXPECT_TRUE(cloud_->kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic").empty());
  EXPECT_EQ((tpu.out + cpu.out).find("training"), std::string::npos);

  // The same job on kinetic's own base image builds and runs.
  auto fixed = kin({"run", "train.py", "-a", "v5litepod-1"});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
}

// A GPU image: Ubuntu's python3 from apt (externally managed, PEP 668: the recipe's
// PIP_BREAK_SYSTEM_PACKAGES lets pip install), and a `jax` requirement becomes jax[cuda12],
// which reaches the GPU that JAX_PLATFORMS=cuda demands.
TEST_F(GkeImages, AGpuImageInstallsTheCudaBuildOfJaxPastPep668) {
  ASSERT_EQ(kin({"pool", "add", "--accelerator", "l4"}).exit_code, 0);
  sb.write("proj/requirements.txt", "jax\n");
  sb.write("proj/devices.py",
           "import jax\nprint('jax', jax.__version__, jax.devices(), jax.__kinetic_stub__)\n");
  auto r = kin({"run", "devices.py", "-a", "l4"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("['cuda:0']"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'extras': ['cuda12']"), std::string::npos) << r.out;
}

// The build sees requirements.txt alone: an included file is expanded into it (so its content
// is in the image and decides the tag), and a line naming a local path, or a URL carrying
// credentials, fails in one line before anything is uploaded (issue #10 point 7).
TEST_F(GkeImages, RequirementsNamingOtherFilesAreExpandedOrRefusedBeforeAnyUpload) {
  sb.write("proj/requirements.txt", "-r deps/base.txt\n");
  sb.write("proj/deps/base.txt", "jax\n");
  sb.write("proj/devices.py", "import jax\nprint('jax', jax.__version__)\n");
  auto r = kin({"run", "devices.py", "-a", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("jax "), std::string::npos) << r.out;

  for (const std::string line :
       {"-e ./mypkg", "--index-url https://user:s3cr3t@pypi.corp/simple",
        "--index-url https://pypi.corp/simple?token=s3cr3t", "-r https://example.com/reqs.txt"}) {
    sb.write("proj/requirements.txt", line + "\n");
    const int requests = cloud_->gcs().total_requests();
    const int builds = cloud_->gcp().builds_created();
    auto refused = kin({"run", "devices.py", "-a", "v5litepod-1"});
    EXPECT_EQ(refused.exit_code, 125) << refused.err;
    EXPECT_EQ(line_count(refused.err), 1u) << refused.err;
    EXPECT_NE(refused.err.find("requirements.txt: '"), std::string::npos) << refused.err;
    EXPECT_EQ(refused.err.find("s3cr3t"), std::string::npos) << refused.err;
    EXPECT_EQ(cloud_->gcs().total_requests(), requests) << line;
    EXPECT_EQ(cloud_->gcp().builds_created(), builds) << line;
  }
}

}  // namespace
}  // namespace kinetic::test
