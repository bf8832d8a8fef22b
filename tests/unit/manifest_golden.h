// What the manifest unit tests share: golden files under tests/golden/manifests/ (regenerate
// with KINETIC_UPDATE_GOLDEN=1 and review the diff), and the gke target they render for.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "backend/gke/session.h"

namespace kinetic::test {

// ACTUAL against tests/golden/manifests/NAME.yaml (rewritten instead with KINETIC_UPDATE_GOLDEN=1).
inline void expect_manifest_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path =
      std::filesystem::path(KINETIC_GOLDEN_DIR) / "manifests" / (name + ".yaml");
  const char* update = std::getenv("KINETIC_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << actual;
    std::fprintf(stderr, "updated golden file %s\n", path.c_str());
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; run the test with KINETIC_UPDATE_GOLDEN=1 to create it";
  std::ifstream f(path, std::ios::binary);
  std::stringstream want;
  want << f.rdbuf();
  EXPECT_EQ(want.str(), actual) << "differs from " << path << "; if the change is intended, "
                                << "rerun with KINETIC_UPDATE_GOLDEN=1 and review the diff";
}

// acme-ml's cluster kinetic in us-central1-a, namespace default (the e2e suites' too).
inline gke::Target acme_target() {
  gke::Target t;
  t.project = "acme-ml";
  t.location = "us-central1-a";
  t.region = "us-central1";
  t.cluster = "kinetic";
  t.ns = "default";
  return t;
}

}  // namespace kinetic::test
