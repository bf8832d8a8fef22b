// Who the job pods are to Google (#28 point 4, docs/security.md "Every identity kinetic creates
// holds the least it needs"): the Kubernetes service account kinetic-job, not the namespace's
// `default` that every other pod of the namespace runs as. Its principal, and only it, holds the
// jobs bucket and the --grant data buckets, and `down` takes those grants back. The fake kubelet
// mounts a gs:// volume only for a principal the bucket's policy names (docs/fakes.md), so a
// job that reads its data ran as the account that was granted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "backend/gke/names.h"
#include "gcp/storage.h"
#include "gke_fixture.h"
#include "http/transport.h"
#include "show_data_job.h"

namespace kinetic::test {
namespace {

constexpr const char* kDataBucket = "acme-shared-data";

std::string principal(const std::string& ksa) {
  return fakes::FakeGcp::workload_identity_principal("acme-ml", "default", ksa);
}

// The members POLICY gives ROLE.
std::vector<std::string> members(const std::optional<nlohmann::json>& policy,
                                 const std::string& role) {
  std::vector<std::string> out;
  if (!policy) return out;
  for (const auto& b : policy->value("bindings", nlohmann::json::array()))
    if (b.value("role", "") == role)
      for (const auto& m : b.value("members", nlohmann::json::array())) out.push_back(m);
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(GkeJobIdentity, JobsRunAsKineticJobWhoseGrantsDownTakesBack) {
  fakes::FakeCloud cloud;
  Sandbox sb;
  const fs::path proj = sb.project("proj");
  sb.write("proj/show.py", kShowData);
  auto env = cloud.client_env();
  cloud.gcs().create_bucket(kDataBucket, "acme-ml");
  cloud.gcs().put_object(kDataBucket, "sets/a.txt", "alpha\n");

  ASSERT_EQ(sb.run(kGkeUp, proj, env).exit_code, 0);
  // What an older kinetic granted: every pod of the namespace held the jobs bucket. The next
  // `up` takes it back. Someone else's grant on a data bucket is theirs: it stays throughout.
  auto transport = http::make_curl_transport();
  gcp::StorageClient storage(*transport, cloud.gcs().url());
  storage.add_bucket_iam_member(kGkeBucket, "roles/storage.objectUser", principal("default"));
  storage.add_bucket_iam_member(kDataBucket, "roles/storage.objectViewer", "user:ana@acme.example");
  auto again = sb.run(kGkeUp, proj, env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("for every pod of namespace default (service account default): revoked"),
            std::string::npos)
      << again.err;
  auto jobs_policy = cloud.gcs().bucket_iam_policy(kGkeBucket);
  EXPECT_TRUE(has(members(jobs_policy, "roles/storage.objectUser"), principal("kinetic-job")))
      << jobs_policy->dump();
  EXPECT_EQ(jobs_policy->dump().find("/sa/default"), std::string::npos) << jobs_policy->dump();

  // The job runs as kinetic-job (created before the submit: the admission plugin refuses a pod
  // naming an account that does not exist) and reads the data it was granted.
  auto run = sb.run({"run", "show.py", "--grant", "-a", "v5litepod-1", "--data",
                     std::string("gs://") + kDataBucket + "/sets:in", "--", "in"},
                    proj, env);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("seen a.txt alpha"), std::string::npos) << run.out;
  auto account = cloud.kube().object("/api/v1/namespaces/default/serviceaccounts/" +
                                     std::string(gke::kJobServiceAccount));
  ASSERT_TRUE(account.has_value());
  EXPECT_EQ(std::string(gke::kJobServiceAccount), "kinetic-job");  // the runner's check reads it
  auto data_policy = cloud.gcs().bucket_iam_policy(kDataBucket);
  EXPECT_TRUE(has(members(data_policy, "roles/storage.objectViewer"), principal("kinetic-job")))
      << data_policy->dump();
  EXPECT_EQ(data_policy->dump().find("/sa/default"), std::string::npos) << data_policy->dump();

  // `down` keeping the bucket: the jobs' grants go, on it and on the data bucket; the user's
  // stays.
  auto down = sb.run({"down", "--yes", "--keep-bucket", "--keep-images"}, proj, env);
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_NE(down.err.find("data access gs://acme-shared-data for the job pods: revoked"),
            std::string::npos)
      << down.err;
  jobs_policy = cloud.gcs().bucket_iam_policy(kGkeBucket);
  EXPECT_EQ(jobs_policy->dump().find("svc.id.goog"), std::string::npos) << jobs_policy->dump();
  data_policy = cloud.gcs().bucket_iam_policy(kDataBucket);
  EXPECT_EQ(data_policy->dump().find("svc.id.goog"), std::string::npos) << data_policy->dump();
  EXPECT_TRUE(has(members(data_policy, "roles/storage.objectViewer"), "user:ana@acme.example"))
      << data_policy->dump();
}

}  // namespace
}  // namespace kinetic::test
