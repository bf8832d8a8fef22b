// `kinetic run --data` on GKE against the fake cloud: a local directory is staged like a context
// (once) and unpacked at DST by the bootstrap; gs:// is a Cloud Storage FUSE CSI volume the
// fake kubelet sets up only with the add-on, the pod annotation and read access for the pods'
// principal (docs/fakes.md); `up` turns the add-on on and `--grant` gives the access.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include <nlohmann/json.hpp>

#include "gcp/gke.h"
#include "gke_fixture.h"
#include "http/transport.h"
#include "show_data_job.h"

namespace kinetic::test {
namespace {

constexpr const char* kDataBucket = "acme-training-data";

// The user's token on every request, as kinetic's own transport sends it.
class WithToken : public http::Transport {
 public:
  http::Response send(const http::Request& request) override {
    http::Request r = request;
    r.headers.emplace_back("Authorization", "Bearer fake-access-token");
    return curl_->send(r);
  }

 private:
  std::unique_ptr<http::Transport> curl_ = http::make_curl_transport();
};

class GkeData : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    sb.write("proj/show.py", kShowData);
    if (!cloud_->gcs().has_bucket(kDataBucket)) {
      cloud_->gcs().create_bucket(kDataBucket, "acme-ml");
      cloud_->gcs().put_object(kDataBucket, "sets/one/a.txt", "alpha\n");
      cloud_->gcs().put_object(kDataBucket, "sets/one/sub/b.txt", "beta\n");
      cloud_->gcs().put_object(kDataBucket, "sets/other.txt", "not mounted\n");
    }
  }
  nlohmann::json spec_of(const std::string& id) {
    return nlohmann::json::parse(
        cloud_->gcs().object_data(kGkeBucket, "jobs/" + id + "/spec.json").value_or("{}"));
  }
  // The cluster's add-on set as a console user would set it (clusters.update).
  void set_gcs_fuse_addon(bool enabled) {
    WithToken transport;
    std::string endpoint = cloud_->gcp().url("container");
    if (endpoint.back() == '/') endpoint.pop_back();
    gcp::PollOptions poll;
    poll.initial = poll.max = std::chrono::milliseconds(1);
    gcp::GkeClient gke(transport, endpoint, poll);
    gke.update_cluster(
        "acme-ml", "us-central1-a", "kinetic",
        {{"desiredAddonsConfig", {{"gcsFuseCsiDriverConfig", {{"enabled", enabled}}}}}});
  }
};

TEST_F(GkeData, ALocalDirectoryIsStagedOnceAndUnpackedAtDst) {
  sb.write("datasets/set1/a.txt", "alpha\n");
  sb.write("datasets/set1/sub/b.txt", "beta\n");
  const std::vector<std::string> run = {
      "run", "show.py", "-a", "v5litepod-1", "--data", "../datasets/set1:in/set1", "--", "in/set1"};
  auto first = kin(run);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("seen a.txt alpha\nseen sub/b.txt beta\n"), std::string::npos)
      << first.out;
  const auto staged = spec_of(job_id_in(first.err))["data"][0];
  const std::string uri = staged["staged_uri"];
  EXPECT_EQ(uri.rfind(std::string("gs://") + kGkeBucket + "/contexts/", 0), 0u) << uri;
  const size_t contexts = cloud_->gcs().object_names(kGkeBucket, "contexts/").size();

  // Unchanged: neither packed nor uploaded again; the same archive is unpacked.
  auto second = kin(run);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("seen sub/b.txt beta\n"), std::string::npos) << second.out;
  EXPECT_EQ(spec_of(job_id_in(second.err))["data"][0]["staged_uri"], uri);
  EXPECT_EQ(cloud_->gcs().object_names(kGkeBucket, "contexts/").size(), contexts);
}

// The jobs bucket: the pods may read it already (`up` granted it), so nothing is said.
TEST_F(GkeData, TheJobsBucketIsMountedReadOnlyAndThePodSeesDst) {
  cloud_->gcs().put_object(kGkeBucket, "mine/a.txt", "alpha\n");
  auto r = kin({"run", "show.py", "-a", "v5litepod-1", "--data",
                std::string("gs://") + kGkeBucket + "/mine:in", "--", "in"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("seen a.txt alpha\nwritable False\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("may not read"), std::string::npos) << r.err;
}

// Another bucket: kinetic says how to grant the pods access; the pod cannot mount it until
// then (the kubelet's FailedMount, exit 126); --grant grants it and the job sees the data.
TEST_F(GkeData, AnotherBucketNeedsAGrantWhichGrantGives) {
  const std::vector<std::string> run = {
      "run",         "show.py", "-a",
      "v5litepod-1", "--data",  std::string("gs://") + kDataBucket + "/sets/one:in",
      "--",          "in"};
  auto refused = kin(run);
  EXPECT_EQ(refused.exit_code, 126) << refused.err;
  const std::string member =
      fakes::FakeGcp::workload_identity_principal("acme-ml", "default", "kinetic-job");
  EXPECT_NE(refused.err.find(std::string("grant it with `gcloud storage buckets "
                                         "add-iam-policy-binding gs://") +
                             kDataBucket + " --member=" + member +
                             " --role=roles/storage.objectViewer`, or run with --grant"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("storage.objects.list"), std::string::npos) << refused.err;

  auto granted = kin([&] {
    auto args = run;
    args.insert(args.begin() + 2, "--grant");
    return args;
  }());
  ASSERT_EQ(granted.exit_code, 0) << granted.err;
  EXPECT_NE(granted.err.find("roles/storage.objectViewer for the job's pods granted"),
            std::string::npos)
      << granted.err;
  EXPECT_NE(granted.out.find("seen a.txt alpha\nseen sub/b.txt beta\nwritable False\n"),
            std::string::npos)
      << granted.out;
  const auto policy = cloud_->gcs().bucket_iam_policy(kDataBucket);
  ASSERT_TRUE(policy.has_value());
  EXPECT_NE(policy->dump().find(member), std::string::npos) << policy->dump();
}

// A cluster without the CSI driver: the run says `kinetic up` turns it on before submitting
// anything, and `up` does.
TEST_F(GkeData, UpTurnsTheCsiDriverOnForAClusterWithout) {
  cloud_->gcs().put_object(kGkeBucket, "mine/a.txt", "alpha\n");
  set_gcs_fuse_addon(false);
  const std::vector<std::string> run = {"run",    "show.py",
                                        "-a",     "v5litepod-1",
                                        "--data", std::string("gs://") + kGkeBucket + "/mine:in",
                                        "--",     "in"};
  const size_t records = cloud_->gcs().object_names(kGkeBucket, "jobs/").size();
  auto without = kin(run);
  EXPECT_EQ(without.exit_code, 125) << without.err;
  EXPECT_NE(without.err.find("has no Cloud Storage FUSE CSI driver, which mounts gs:// data; "
                             "`kinetic up` turns it on"),
            std::string::npos)
      << without.err;
  EXPECT_EQ(cloud_->gcs().object_names(kGkeBucket, "jobs/").size(), records)
      << "a job was submitted";

  auto up = kin(kGkeUp);
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_NE(up.err.find("cluster add-on Cloud Storage FUSE CSI driver: enabled"), std::string::npos)
      << up.err;
  auto again = kin(kGkeUp);
  EXPECT_EQ(again.err.find("cluster add-on"), std::string::npos) << again.err;

  auto with = kin(run);
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_NE(with.out.find("seen a.txt alpha"), std::string::npos) << with.out;
}

// `cleanup` keeps what a live job may need again (a retry, a preemption unpacks it anew): its
// --data archive, which only its spec names.
TEST_F(GkeData, CleanupKeepsALiveJobsDataArchive) {
  sb.write("datasets/set2/a.txt", "alpha\n");
  sb.write("proj/wait.sh", "echo started\nsleep 120\n");
  auto detached =
      kin({"run", "wait.sh", "-a", "v5litepod-1", "--detach", "--data", "../datasets/set2:in"});
  ASSERT_EQ(detached.exit_code, 0) << detached.err;
  const std::string id = first_line(detached.out);
  const std::string uri = spec_of(id)["data"][0]["staged_uri"];
  const std::string object = uri.substr(("gs://" + std::string(kGkeBucket) + "/").size());
  auto cleanup = kin({"cleanup", "--older-than", "0s"});
  ASSERT_EQ(cleanup.exit_code, 0) << cleanup.err;
  EXPECT_TRUE(cloud_->gcs().object_data(kGkeBucket, object).has_value()) << cleanup.out;
  EXPECT_EQ(kin({"cancel", id}).exit_code, 0);
}

// --dry-run -o yaml: the manifests carry the CSI volume, its mount and the pod annotation.
TEST_F(GkeData, TheDryRunShowsTheCsiVolume) {
  auto r = kin({"run", "show.py", "-a", "v5litepod-1", "--dry-run", "-o", "yaml", "--data",
                std::string("gs://") + kDataBucket + "/sets/one:/data", "--data",
                std::string("gs://") + kDataBucket + ":scratch:rw"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"gke-gcsfuse/volumes: \"true\"", "driver: gcsfuse.csi.storage.gke.io",
        "bucketName: acme-training-data", "mountOptions: implicit-dirs,only-dir=sets/one",
        "mountPath: /data", "mountPath: /mnt/kinetic-data/scratch", "readOnly: false"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

}  // namespace
}  // namespace kinetic::test
