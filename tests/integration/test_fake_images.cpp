// The fake image store (tests/fakes/fake_images.h): what `docker build` of a Dockerfile makes of
// a base image, what it refuses, and that a pod of the image sees only what the image holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fakes/fake_images.h"

namespace kinetic::fakes {
namespace {

namespace fs = std::filesystem;

class FakeImages : public ::testing::Test {
 protected:
  FakeImageBuild build(const std::string& dockerfile,
                       std::map<std::string, std::string> files = {}) {
    return store.build(dockerfile, files, nullptr, {"no-such-package"}, [] { return "0123abcd"; });
  }
  static std::string text(const FakeImageBuild& b) {
    std::string s;
    for (const auto& l : b.lines) s += l + "\n";
    return s;
  }
  // Runs COMMAND with sh inside the image's runtime: its PATH and ENV only.
  std::string run_in(const FakeImage& img, const std::string& command) {
    store.put("example.com/test/img:1", img);
    auto rt = store.runtime("example.com/test/img:1");
    std::string env = "env -i";
    for (const auto& [k, v] : rt.env) env += " '" + k + "=" + v + "'";
    std::string out;
    if (FILE* p =
            ::popen((env + " " + rt.dir + "/bin/sh -c '" + command + "' 2>&1").c_str(), "r")) {
      char buf[512];
      while (std::fgets(buf, sizeof buf, p)) out += buf;
      ::pclose(p);
    }
    return out;
  }
  FakeImageStore store;
};

TEST_F(FakeImages, ReferencesAreCanonical) {
  EXPECT_EQ(canonical_image_ref("python:3.11-slim"), "docker.io/library/python:3.11-slim");
  EXPECT_EQ(canonical_image_ref("debian"), "docker.io/library/debian:latest");
  EXPECT_EQ(canonical_image_ref("nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04"),
            "docker.io/nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04");
  EXPECT_EQ(canonical_image_ref("us-docker.pkg.dev/p/r/i:t"), "us-docker.pkg.dev/p/r/i:t");
  EXPECT_EQ(canonical_image_ref("localhost:5000/x"), "localhost:5000/x:latest");
}

TEST_F(FakeImages, PublicImagesHoldWhatTheRealOnesDo) {
  auto slim = FakeImageStore::public_image("python:3.11-slim");
  ASSERT_TRUE(slim);
  EXPECT_TRUE(slim->has("python3") && slim->has("pip") && slim->has("sh"));
  EXPECT_FALSE(slim->has("g++"));
  EXPECT_EQ(slim->python, "3.11");
  EXPECT_TRUE(FakeImageStore::public_image("python:3.12")->has("g++")) << "buildpack-deps";
  EXPECT_FALSE(FakeImageStore::public_image("debian:12-slim")->has("python3"));
  auto cuda = FakeImageStore::public_image("nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04");
  ASSERT_TRUE(cuda);
  EXPECT_FALSE(cuda->has("python3"));
  EXPECT_EQ(cuda->distro, "ubuntu24.04");
  EXPECT_FALSE(FakeImageStore::public_image("python:2.7-slim-stretch"));
  EXPECT_FALSE(FakeImageStore::public_image("example.com/nobody/knows:1"));
}

// A reference with a digest resolves by the digest alone, as a registry does: the digest Docker's
// official images published for a tag is that image whatever tag is written beside it, and a
// digest nobody published is not found.
TEST_F(FakeImages, ADigestResolvesOnlyWhenItWasPublished) {
  const std::string published =
      "sha256:229a2c5bfa27522db7815ea81f9bed70af17ccb9de9fc7ad142b1877b5830d36";
  auto pinned = FakeImageStore::public_image("python:3.12-slim@" + published);
  ASSERT_TRUE(pinned);
  EXPECT_EQ(pinned->python, "3.12");
  EXPECT_TRUE(FakeImageStore::public_image("docker.io/library/python@" + published));
  EXPECT_FALSE(FakeImageStore::public_image("python:3.12-slim@sha256:" + std::string(64, '0')));
  EXPECT_FALSE(FakeImageStore::public_image("debian:12@" + published));
}

TEST_F(FakeImages, AptNeedsItsListsAndKnowsItsPackages) {
  auto no_update = build("FROM python:3.11-slim\nRUN apt-get install -y g++\n");
  EXPECT_TRUE(no_update.failed);
  EXPECT_NE(text(no_update).find("E: Unable to locate package g++"), std::string::npos);
  EXPECT_NE(text(no_update).find("returned a non-zero code: 100"), std::string::npos);

  auto unknown = build("FROM python:3.11-slim\nRUN apt-get update && apt-get install -y nosuch\n");
  EXPECT_TRUE(unknown.failed);
  EXPECT_NE(text(unknown).find("E: Unable to locate package nosuch"), std::string::npos);

  auto ok = build(
      "FROM python:3.11-slim\nRUN apt-get update && apt-get install -y --no-install-recommends "
      "g++ make && rm -rf /var/lib/apt/lists/*\n");
  ASSERT_FALSE(ok.failed) << text(ok);
  EXPECT_TRUE(ok.image.has("g++") && ok.image.has("as") && ok.image.has("make"));
  EXPECT_FALSE(ok.image.apt_lists) << "the lists were removed";
}

TEST_F(FakeImages, PipHonoursPep668OnTheDistributionsPython) {
  const std::string ubuntu =
      "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y python3 python3-pip\n";
  auto managed = build(ubuntu + "RUN python3 -m pip install numpy\n");
  EXPECT_TRUE(managed.failed);
  EXPECT_NE(text(managed).find("error: externally-managed-environment"), std::string::npos);

  auto allowed =
      build(ubuntu + "ENV PIP_BREAK_SYSTEM_PACKAGES=1\nRUN python3 -m pip install numpy\n");
  ASSERT_FALSE(allowed.failed) << text(allowed);
  EXPECT_EQ(allowed.image.python, "3.12");
  EXPECT_EQ(allowed.image.packages.count("numpy"), 1u);

  auto no_pip = build(
      "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y python3\n"
      "RUN python3 -m pip install numpy\n");
  EXPECT_TRUE(no_pip.failed);
  EXPECT_NE(text(no_pip).find("No module named pip"), std::string::npos);
}

TEST_F(FakeImages, PipReadsRequirementsFromTheImageAndFailsOnUnknownPackages) {
  std::map<std::string, std::string> files = {{"requirements.txt", "jax[tpu]==0.7.2\nrich>=13\n"},
                                              {"bad.txt", "no-such-package\n"}};
  auto ok = build(
      "FROM python:3.11-slim\nWORKDIR /app\nCOPY requirements.txt .\n"
      "RUN pip install --no-cache-dir -r requirements.txt -f https://x/y.html\n",
      files);
  ASSERT_FALSE(ok.failed) << text(ok);
  EXPECT_EQ(ok.image.files.count("/app/requirements.txt"), 1u);
  EXPECT_EQ(ok.image.packages.at("jax").version, "0.7.2");
  EXPECT_EQ(ok.image.packages.at("jax").extras, std::set<std::string>{"tpu"});
  EXPECT_EQ(ok.image.packages.at("jaxlib").version, "0.7.2") << "jax[tpu] brings jaxlib";
  EXPECT_EQ(ok.image.packages.at("rich").version, "13");

  auto missing_file = build("FROM python:3.11-slim\nRUN pip install -r /nowhere.txt\n");
  EXPECT_TRUE(missing_file.failed);
  EXPECT_NE(text(missing_file).find("Could not open requirements file"), std::string::npos);

  auto unknown =
      build("FROM python:3.11-slim\nCOPY bad.txt /r.txt\nRUN pip install -r /r.txt\n", files);
  EXPECT_TRUE(unknown.failed);
  EXPECT_NE(text(unknown).find("No matching distribution found for no-such-package"),
            std::string::npos);
}

TEST_F(FakeImages, WhatTheFakeDoesNotModelIsRefusedNeverRunHere) {
  const fs::path marker = fs::temp_directory_path() / "kinetic-fake-images-marker";
  fs::remove(marker);
  auto redirect = build("FROM python:3.11-slim\nRUN echo hi > " + marker.string() + "\n");
  EXPECT_TRUE(redirect.failed);
  EXPECT_NE(text(redirect).find("cannot run the shell operator '>'"), std::string::npos);
  EXPECT_FALSE(fs::exists(marker));

  auto other = build("FROM python:3.11-slim\nRUN useradd bob\n");
  EXPECT_TRUE(other.failed);
  EXPECT_NE(text(other).find("/bin/sh: 1: useradd: not found"), std::string::npos)
      << "a program the image lacks fails as the shell says";
  auto unmodelled = build("FROM python:3.11-slim\nRUN touch /x\n");
  EXPECT_TRUE(unmodelled.failed);
  EXPECT_NE(text(unmodelled).find("cannot run `touch /x`"), std::string::npos);

  auto from = build("FROM nobody/nothing:1\n");
  EXPECT_TRUE(from.failed);
  EXPECT_NE(text(from).find("pull access denied for nobody/nothing"), std::string::npos);
  auto copy = build("FROM python:3.11-slim\nCOPY absent.txt /x\n");
  EXPECT_TRUE(copy.failed);
  EXPECT_NE(text(copy).find("COPY failed: file not found in build context"), std::string::npos);
  EXPECT_TRUE(build("RUN true\n").failed) << "no FROM";
  EXPECT_TRUE(build("FROM python:3.11-slim\nFROBNICATE x\n").failed);
}

// RUN sh FILE really runs inside the image as it stands: the script sees the image's programs
// and ENV, and its exit code decides the step.
TEST_F(FakeImages, ScriptsRunInsideTheImageAsItStands) {
  std::map<std::string, std::string> files = {
      {"check.sh",
       "echo \"mode=$MODE\"\ncommand -v g++ >/dev/null 2>&1 || { echo 'no g++'; exit 3; }\n"
       "echo 'g++ found'\n"}};
  const std::string head =
      "FROM python:3.11-slim\nENV MODE=\"smoke test\"\nCOPY check.sh /k/check.sh\n";
  auto without = build(head + "RUN sh /k/check.sh\n", files);
  EXPECT_TRUE(without.failed);
  EXPECT_NE(text(without).find("mode=smoke test"), std::string::npos) << text(without);
  EXPECT_NE(text(without).find("no g++"), std::string::npos) << text(without);
  EXPECT_NE(text(without).find("returned a non-zero code: 3"), std::string::npos);

  auto with =
      build(head + "RUN apt-get update && apt-get install -y g++\nRUN sh /k/check.sh\n", files);
  ASSERT_FALSE(with.failed) << text(with);
  EXPECT_NE(text(with).find("g++ found"), std::string::npos);

  auto python = build("FROM python:3.11-slim\nRUN python3 -c 'print(6 * 7)'\n");
  ASSERT_FALSE(python.failed) << text(python);
  EXPECT_NE(text(python).find("\n42\n"), std::string::npos) << text(python);
}

// A pod's view: PATH names only the image's programs, and its Python is a venv holding only
// the image's packages (none of this machine's).
TEST_F(FakeImages, ARuntimeHoldsOnlyTheImagesProgramsAndPackages) {
  auto slim = *FakeImageStore::public_image("python:3.11-slim");
  EXPECT_EQ(run_in(slim, "command -v g++ || echo missing"), "missing\n");
  EXPECT_NE(run_in(slim, "command -v python3"), "") << "python3 is there";
  slim.packages["jax"] = {"jax", "0.7.2", {"tpu"}};
  auto sys_path = run_in(slim,
                         "python3 -c \"import sys, jax; print(jax.__version__, sys.prefix == "
                         "sys.base_prefix, any(\\\"dist-packages\\\" in p for p in sys.path))\"");
  EXPECT_EQ(sys_path, "0.7.2 False False\n");
  auto tpu = run_in(slim, "JAX_PLATFORMS=tpu python3 -c \"import jax; print(jax.devices())\"");
  EXPECT_EQ(tpu, "['tpu:0']\n");
  auto cuda = run_in(slim, "JAX_PLATFORMS=cuda python3 -c \"import jax; jax.devices()\"");
  EXPECT_NE(cuda.find("Unable to initialize backend 'cuda'"), std::string::npos) << cuda;

  auto debian = *FakeImageStore::public_image("debian:12-slim");
  EXPECT_EQ(run_in(debian, "command -v python3 || echo missing"), "missing\n");
}

}  // namespace
}  // namespace kinetic::fakes
