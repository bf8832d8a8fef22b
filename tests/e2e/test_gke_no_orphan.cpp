// "No hang, no orphan" (issue #8 item 5): the gke backend end to end when the API loses an
// answer, refuses pods, lets a deadline pass before any pod ran, when cleanup meets a live job,
// and when a job's outputs hold unsafe symlinks. The fake orders every race (the answer is lost
// after the Job was stored; the deadline fails the Job while its pod cannot be scheduled).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

const std::string kJobsPost = "POST /apis/batch/v1/namespaces/{ns}/jobs";
const std::string kJobs = "/apis/batch/v1/namespaces/default/jobs/";
const std::string kSecrets = "/api/v1/namespaces/default/secrets/";
const std::string kSecretDelete = "DELETE /api/v1/namespaces/{ns}/secrets/{name}";

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The last line of S (without its newline).
std::string last_line(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s.substr(s.rfind('\n') == std::string::npos ? 0 : s.rfind('\n') + 1);
}

class GkeNoOrphan : public GkeFixture {};

TEST_F(GkeNoOrphan, ALostAnswerToTheJobCreateIsAdoptedNotAnOrphan) {
  const int posts = cloud_->kube().request_counts()[kJobsPost];
  cloud_->kube().lose_next_response(kJobsPost);
  auto r = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--env", "API_TOKEN=t0k3n", "--",
                "--epochs", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(cloud_->kube().request_counts()[kJobsPost] - posts, 1) << "the Job was created twice";
  EXPECT_EQ(occurrences(r.out, "training --epochs 3\n"), 1u) << r.out;
  std::string id = job_id_in(r.err);
  ASSERT_FALSE(id.empty()) << r.err;
  EXPECT_EQ(slurp(proj / "kinetic-out" / id / "model.txt"), "weights\n");
  // Nothing left behind: the adopted Job and its Secret were cleaned like any other.
  EXPECT_FALSE(exists(kJobs + "kinetic-" + id));
  EXPECT_FALSE(exists(kSecrets + "kinetic-" + id));
  auto dry = kin({"cleanup", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.out.find(id), std::string::npos) << dry.out;
}

TEST_F(GkeNoOrphan, ALostAnswerToTheSecretCreateIsAdopted) {
  cloud_->kube().lose_next_response("POST /api/v1/namespaces/{ns}/secrets");
  sb.write("proj/secret.py", "import os\nprint('token is', os.environ['API_TOKEN'])\n");
  auto r = kin({"run", "secret.py", "--accelerator", "v5litepod-1", "--env", "API_TOKEN=t0k3n"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(occurrences(r.out, "token is t0k3n\n"), 1u) << r.out;
  std::string id = job_id_in(r.err);
  EXPECT_FALSE(exists(kSecrets + "kinetic-" + id));
}

TEST_F(GkeNoOrphan, ASubmitThatFailsAfterALostAnswerLeavesNothingBehind) {
  // The answer is lost, then the look-up is refused: the run fails, and what the lost POST
  // created goes with it.
  cloud_->kube().lose_next_response(kJobsPost);
  cloud_->kube().fail_next(1, 403, "GET /apis/batch/v1/namespaces/{ns}/jobs/{name}");
  const int secret_deletes = cloud_->kube().request_counts()[kSecretDelete];
  const int deletes =
      cloud_->kube().request_counts()["DELETE /apis/batch/v1/namespaces/{ns}/jobs/{name}"];
  auto r = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--env", "API_TOKEN=x"});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(occurrences(r.err, "error: "), 1u) << r.err;
  EXPECT_EQ(cloud_->kube().request_counts()["DELETE /apis/batch/v1/namespaces/{ns}/jobs/{name}"] -
                deletes,
            1);
  EXPECT_EQ(cloud_->kube().request_counts()[kSecretDelete] - secret_deletes, 1);
}

TEST_F(GkeNoOrphan, RefusedPodCreationExits126WithTheReasonAndCleansUp) {
  const std::string quota =
      "exceeded quota: tpu-quota, requested: google.com/tpu=1, used: google.com/tpu=0, "
      "limited: google.com/tpu=0";
  cloud_->kube().fail_pod_creates(quota);
  auto r = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--env", "API_TOKEN=x"});
  cloud_->kube().fail_pod_creates("");
  EXPECT_EQ(r.exit_code, 126) << r.err;
  std::string id = job_id_in(r.err);
  // One line quoting the API: which pod, forbidden, and the quota.
  std::string error;
  for (size_t at = 0, end; at < r.err.size(); at = end + 1) {
    end = r.err.find('\n', at);
    if (end == std::string::npos) end = r.err.size();
    std::string line = r.err.substr(at, end - at);
    if (line.rfind("error: ", 0) == 0) error = line;
  }
  EXPECT_NE(error.find("is forbidden: " + quota), std::string::npos) << r.err;
  // The Job and its Secret went with the failed run. The pod named is kinetic-ID-xxxxx.
  const size_t at = error.find("pods \"kinetic-");
  ASSERT_NE(at, std::string::npos) << r.err;
  std::string pod = error.substr(at + 6, error.find('"', at + 6) - (at + 6));
  std::string job = pod.substr(0, pod.rfind('-'));
  if (!id.empty()) {
    EXPECT_EQ(job, "kinetic-" + id);
  }
  EXPECT_FALSE(exists(kJobs + job)) << r.err;
  EXPECT_FALSE(exists(kSecrets + job)) << r.err;
  auto st = kin({"status", "-o", "json"});
  const auto doc = nlohmann::json::parse(st.out);
  for (const auto& j : doc["jobs"]) EXPECT_NE(j["state"], "pending") << st.out;
}

TEST_F(GkeNoOrphan, DeadlinePassingWhileThePodIsPendingExits124) {
  // No l4 pool: the pod can never be scheduled, and the grace for that is long; the Job's
  // deadline (1 s) fails it first and the controller deletes the pending pod.
  auto r = kin({"run", "train.py", "--accelerator", "l4", "--timeout", "1s"},
               {{"KINETIC_SCHEDULING_GRACE_SECONDS", "3600"}});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  EXPECT_NE(last_line(r.err).find("timed out"), std::string::npos) << r.err;
  std::string id = job_id_in(r.err);
  ASSERT_FALSE(id.empty()) << r.err;
  EXPECT_FALSE(exists(kJobs + "kinetic-" + id));
}

TEST_F(GkeNoOrphan, CleanupKeepsTheContextOfAPendingJob) {
  // A job that waits for a node (no l4 pool) still needs its context when it starts.
  auto d = kin({"run", "train.py", "--accelerator", "l4", "--detach"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  std::string id = first_line(d.out);
  auto job = cloud_->kube().object(kJobs + "kinetic-" + id);
  ASSERT_TRUE(job.has_value()) << d.err;
  std::string context;
  for (const auto& e : (*job)["spec"]["template"]["spec"]["containers"][0]["env"])
    if (e.value("name", "") == "KINETIC_CONTEXT_URI") context = e.value("value", "");
  ASSERT_EQ(context.rfind("gs://acme-ml-kinetic-kinetic/contexts/", 0), 0u) << job->dump();
  const std::string object = context.substr(std::string("gs://acme-ml-kinetic-kinetic/").size());

  // Its image's build source too (builds/TAG.tar.gz; the image is built by this first run).
  const std::string image = (*job)["spec"]["template"]["spec"]["containers"][0]["image"];
  const std::string build = "builds/" + image.substr(image.rfind(':') + 1) + ".tar.gz";
  ASSERT_TRUE(cloud_->gcs().object_data("acme-ml-kinetic-kinetic", build).has_value()) << build;

  auto dry = kin({"cleanup", "--older-than", "0s", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.out.find(object), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find(build), std::string::npos) << dry.out;
  auto clean = kin({"cleanup", "--older-than", "0s"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_TRUE(cloud_->gcs().object_data("acme-ml-kinetic-kinetic", object).has_value())
      << clean.out;
  EXPECT_TRUE(exists(kJobs + "kinetic-" + id));

  // Once the job is gone, its context may go.
  ASSERT_EQ(kin({"cancel", id}).exit_code, 0);
  auto after = kin({"cleanup", "--older-than", "0s", "--dry-run"});
  EXPECT_NE(after.out.find(object), std::string::npos) << after.out;
  EXPECT_NE(after.out.find(build), std::string::npos) << after.out;
}

// A job cancelled while pending (no pod ever ran, so no bootstrap wrote a verdict) keeps a record
// that says so: it stayed in the bucket but had vanished from `status` ("no job").
TEST_F(GkeNoOrphan, AJobCancelledWhilePendingIsRecordedAsCancelled) {
  auto d = kin({"run", "train.py", "--accelerator", "l4", "--detach"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string id = first_line(d.out);
  ASSERT_EQ(kin({"cancel", id}).exit_code, 0);
  auto st = kin({"status", id, "-o", "json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  const auto record = nlohmann::json::parse(st.out);
  EXPECT_EQ(record.value("state", ""), "cancelled") << st.out;
  EXPECT_EQ(record.value("exit_code", 0), 130) << st.out;
  EXPECT_EQ(kin({"wait", id}).exit_code, 130);
  EXPECT_NE(kin({"status"}).out.find(id), std::string::npos) << "listed with the others";
  ASSERT_EQ(kin({"cancel", id}).exit_code, 0) << "again: nothing to do";
  auto clean = kin({"cleanup", "--older-than", "0s"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(kin({"status", id}).exit_code, 1) << "its record went with cleanup";
}

// A record with neither a workload nor a verdict, just written, is a submission in flight
// (another kinetic has staged its spec and is creating its Job): `cleanup --older-than 0s`
// leaves it and the context its spec names, and removes the finished job beside it.
TEST_F(GkeNoOrphan, CleanupLeavesASubmissionInFlightAndItsContext) {
  auto r = kin({"run", "train.py", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string done = job_id_in(r.err);
  const std::string bucket = "acme-ml-kinetic-kinetic";
  auto& gcs = cloud_->gcs();
  const std::string spec = *gcs.object_data(bucket, "jobs/" + done + "/spec.json");
  auto doc = nlohmann::json::parse(spec);
  const std::string context = doc.value("context_uri", "");
  ASSERT_EQ(context.rfind("gs://" + bucket + "/contexts/", 0), 0u) << spec;
  const std::string flying = "job-0000f1f1";
  doc["id"] = flying;
  gcs.put_object(bucket, "jobs/" + flying + "/spec.json", doc.dump(), "application/json");

  auto clean = kin({"cleanup", "--older-than", "0s"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.out.find(flying), std::string::npos) << clean.out;
  EXPECT_TRUE(gcs.object_data(bucket, "jobs/" + flying + "/spec.json").has_value());
  EXPECT_TRUE(gcs.object_data(bucket, context.substr(6 + bucket.size())).has_value())
      << "the context the submission will run with";
  EXPECT_TRUE(gcs.object_names(bucket, "jobs/" + done + "/").empty()) << "the finished one went";
}

TEST_F(GkeNoOrphan, UnsafeSymlinksInTheOutputsAreLeftOutWithOneWarning) {
  sb.write("proj/links.py",
           "import os, pathlib\n"
           "out = pathlib.Path(os.environ['KINETIC_OUTPUT_DIR'])\n"
           "(out / 'model.txt').write_text('weights\\n')\n"
           "os.symlink('/etc/passwd', out / 'a')\n"
           "os.symlink('model.txt', out / 'latest')\n"
           "print('linked')\n");
  auto r = kin({"run", "links.py", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The pod's bootstrap leaves it out of the archive and says so once (the CLI's own unpacking
  // skips such links too, for archives made elsewhere: tests/unit/test_pack_archive.cpp).
  EXPECT_EQ(occurrences(r.err, "left out of the outputs: unsafe symlinks a -> /etc/passwd\n"), 1u)
      << r.err;
  std::string id = job_id_in(r.err);
  ASSERT_FALSE(id.empty()) << r.err;
  const fs::path out = proj / "kinetic-out" / id;
  EXPECT_EQ(slurp(out / "model.txt"), "weights\n");
  EXPECT_EQ(slurp(out / "latest"), "weights\n");
  EXPECT_FALSE(fs::exists(fs::symlink_status(out / "a")));
  auto st = nlohmann::json::parse(slurp(out / "status.json"));
  EXPECT_EQ(st["state"], "succeeded");
  EXPECT_FALSE(exists(kJobs + "kinetic-" + id));
}

}  // namespace
}  // namespace kinetic::test
