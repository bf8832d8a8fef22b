// Which JobSet release manifests kinetic applies (jobset_release.h): the download from GitHub
// only when it has the pinned sha256, a copy the user named as named.
#include <gtest/gtest.h>

#include "backend/gke/jobset_release.h"
#include "core/env.h"
#include "core/error.h"
#include "pack/sha256.h"

namespace kinetic::gke {
namespace {

const std::string kText = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: jobset-system\n";

TEST(JobSetRelease, TheDownloadFromGitHubMustHaveThePinnedDigest) {
  const std::string url = default_jobset_manifests_url();
  EXPECT_EQ(url,
            "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/"
            "manifests.yaml");
  EXPECT_EQ(verify_manifests(kText, url, sha256_hex(kText)), sha256_hex(kText));
  try {
    verify_manifests(kText + "# changed\n", url, sha256_hex(kText));
    FAIL() << "a changed release was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refusing the JobSet release from " + url),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("not the pinned " + sha256_hex(kText)), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("pass --jobset-manifests FILE"), std::string::npos);
  }
  // No pin yet: the HTTPS download is taken (its digest said where it is installed).
  EXPECT_EQ(verify_manifests(kText, url, ""), sha256_hex(kText));
}

TEST(JobSetRelease, ACopyTheUserNamedIsTakenAsNamed) {
  for (const std::string source : {"/srv/mirror/manifests.yaml", "https://mirror.example/js.yaml"})
    EXPECT_EQ(verify_manifests(kText, source, "0000"), sha256_hex(kText)) << source;
  const Env env = Env::from_map({{"KINETIC_JOBSET_MANIFESTS", "/srv/js.yaml"}});
  EXPECT_EQ(jobset_manifests_source("", env), "/srv/js.yaml");
  EXPECT_EQ(jobset_manifests_source("/flag.yaml", env), "/flag.yaml");
  EXPECT_EQ(jobset_manifests_source("", Env::from_map({})), default_jobset_manifests_url());
}

}  // namespace
}  // namespace kinetic::gke
