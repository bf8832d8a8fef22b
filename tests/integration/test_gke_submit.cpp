// Submitting a job's objects when answers get lost (issue #8 item 5, "no hang, no orphan"):
// create_or_adopt against the fake Kubernetes API with its faults. The fake orders each race:
// the response is lost after the object was stored.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "auth/sources.h"
#include "auth/token_cache.h"
#include "backend/gke/create_or_adopt.h"
#include "backend/gke/job_watch.h"
#include "core/error.h"
#include "fakes/fake_kube.h"
#include "http/transport.h"
#include "k8s/client.h"
#include "render/output.h"

namespace kinetic::gke {
namespace {

using nlohmann::json;

const std::string kToken = "ya29.test-token";
const std::string kJobsRoute = "POST /apis/batch/v1/namespaces/{ns}/jobs";
const std::string kSecretsRoute = "POST /api/v1/namespaces/{ns}/secrets";

json job(const std::string& id) {
  const std::string name = "kinetic-" + id;
  json labels = {{"app.kubernetes.io/managed-by", "kinetic"}, {"kinetic.dev/job", id}};
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", name}, {"labels", labels}}},
      {"spec",
       {{"backoffLimit", 0},
        {"template",
         {{"metadata", {{"labels", labels}}},
          {"spec",
           {{"restartPolicy", "Never"},
            {"containers", {{{"name", "main"}, {"image", "app:1"}, {"command", {"true"}}}}}}}}}}}};
}

json secret(const std::string& id) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata",
           {{"name", "kinetic-" + id},
            {"labels", {{"app.kubernetes.io/managed-by", "kinetic"}, {"kinetic.dev/job", id}}}}},
          {"stringData", {{"API_TOKEN", "x"}}}};
}

class GkeSubmit : public ::testing::Test {
 protected:
  void SetUp() override {
    fakes::FakeKubeOptions options;
    options.expected_token = kToken;
    kube_ = std::make_unique<fakes::FakeKube>(options);
    transport_ = k8s::make_kube_transport(
        kube_->ca_pem(),
        std::make_shared<auth::TokenCache>(auth::fixed_token_source(kToken, "test")), 0);
    client_ = std::make_unique<k8s::Client>(*transport_, kube_->url());
  }
  void TearDown() override {
    client_.reset();
    transport_.reset();
    kube_.reset();
  }
  int count(const std::string& route) { return kube_->request_counts()[route]; }

  std::unique_ptr<fakes::FakeKube> kube_;
  std::shared_ptr<http::Transport> transport_;
  std::unique_ptr<k8s::Client> client_;
  const std::string jobs_ = k8s::jobs_path("default");
  const std::string secrets_ = k8s::secrets_path("default");
};

TEST_F(GkeSubmit, TheFakeLosesTheAnswerAfterStoringTheObject) {
  kube_->lose_next_response(kJobsRoute);
  EXPECT_THROW(client_->create(jobs_, job("job-0001")), http::TransportError);
  EXPECT_TRUE(kube_->object(jobs_ + "/kinetic-job-0001").has_value());
  // Only the next one: the second create gets its answer (409, the name is taken).
  try {
    client_->create(jobs_, job("job-0001"));
    ADD_FAILURE() << "the second create succeeded";
  } catch (const k8s::ApiError& e) {
    EXPECT_EQ(e.code(), 409);
  }
}

TEST_F(GkeSubmit, ALostJobCreateIsAdoptedNotRepeated) {
  kube_->lose_next_response(kJobsRoute);
  json got = create_or_adopt(*client_, jobs_, job("job-0002"));
  EXPECT_EQ(got["metadata"]["name"], "kinetic-job-0002");
  EXPECT_FALSE(got["metadata"].value("uid", "").empty()) << got.dump();
  EXPECT_EQ(count(kJobsRoute), 1) << "created twice";
  EXPECT_EQ(count("GET /apis/batch/v1/namespaces/{ns}/jobs/{name}"), 1);
  auto stored = kube_->object(jobs_ + "/kinetic-job-0002");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ((*stored)["metadata"]["uid"], got["metadata"]["uid"]);
}

TEST_F(GkeSubmit, ALostSecretCreateIsAdopted) {
  kube_->lose_next_response(kSecretsRoute);
  json got = create_or_adopt(*client_, secrets_, secret("job-0003"));
  EXPECT_EQ(got["metadata"]["name"], "kinetic-job-0003");
  EXPECT_EQ(count(kSecretsRoute), 1);
}

TEST_F(GkeSubmit, AServerErrorBeforeTheCreateIsCreatedAgain) {
  // fail_next answers before the store changes: nothing to adopt, so a second POST creates it.
  kube_->fail_next(1, 503, kJobsRoute);
  json got = create_or_adopt(*client_, jobs_, job("job-0004"));
  EXPECT_EQ(got["metadata"]["name"], "kinetic-job-0004");
  EXPECT_EQ(count(kJobsRoute), 2);
  EXPECT_TRUE(kube_->object(jobs_ + "/kinetic-job-0004").has_value());
}

TEST_F(GkeSubmit, AlreadyExistsIsAdoptedWhenOurs) {
  json first = client_->create(jobs_, job("job-0005"));
  json got = create_or_adopt(*client_, jobs_, job("job-0005"));
  EXPECT_EQ(got["metadata"]["uid"], first["metadata"]["uid"]);
}

TEST_F(GkeSubmit, AlreadyExistsNotOursIsAJobStartErrorNamingIt) {
  json other = job("job-0006");
  other["metadata"]["labels"]["kinetic.dev/job"] = "someone-else";
  client_->create(jobs_, other);
  try {
    create_or_adopt(*client_, jobs_, job("job-0006"));
    ADD_FAILURE() << "adopted someone else's Job";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::job_start);
    EXPECT_NE(std::string(e.what()).find("kinetic-job-0006"), std::string::npos) << e.what();
  }
}

TEST_F(GkeSubmit, BoundedTries) {
  kube_->fail_next(10, 500, kJobsRoute);
  EXPECT_THROW(create_or_adopt(*client_, jobs_, job("job-0007"), 3), k8s::ApiError);
  EXPECT_EQ(count(kJobsRoute), 3);
  EXPECT_FALSE(kube_->object(jobs_ + "/kinetic-job-0007").has_value());
}

TEST_F(GkeSubmit, AFailedLookupAfterALostAnswerThrowsAndRemoveIfOursUndoesIt) {
  kube_->lose_next_response(kJobsRoute);
  kube_->fail_next(1, 403, "GET /apis/batch/v1/namespaces/{ns}/jobs/{name}");
  EXPECT_THROW(create_or_adopt(*client_, jobs_, job("job-0008")), k8s::ApiError);
  ASSERT_TRUE(kube_->object(jobs_ + "/kinetic-job-0008").has_value()) << "the POST took effect";
  remove_if_ours(*client_, jobs_ + "/kinetic-job-0008", "someone-else");
  EXPECT_TRUE(kube_->object(jobs_ + "/kinetic-job-0008").has_value()) << "not theirs";
  remove_if_ours(*client_, jobs_ + "/kinetic-job-0008", "job-0008");
  EXPECT_TRUE(kube_->wait_for_object(
      jobs_ + "/kinetic-job-0008", [](const json& j) { return j.is_null(); }, 10000));
  remove_if_ours(*client_, jobs_ + "/kinetic-job-0008", "job-0008");  // gone: quiet
}

// ---- waiting for the pod when none will come ------------------------------------------------

class GkeWaitForPod : public GkeSubmit {
 protected:
  void SetUp() override {
    GkeSubmit::SetUp();
    io_.err = std::fopen("/dev/null", "w");
    options_.ns = "default";
    options_.io = &io_;
    options_.scheduling_grace_seconds = 3600;
    options_.failed_create_grace_seconds = 0;
  }
  void TearDown() override {
    std::fclose(io_.err);
    GkeSubmit::TearDown();
  }
  IOStreams io_;
  WatchOptions options_;
};

TEST_F(GkeWaitForPod, TheFakeRecordsFailedCreateAndRetries) {
  kube_->fail_pod_creates("exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1");
  client_->create(jobs_, job("job-0101"));
  ASSERT_TRUE(kube_->wait_for_event("default", "FailedCreate", 10000));
  std::vector<json> refused;
  for (const auto& e : kube_->events_for("default", "kinetic-job-0101"))
    if (e.value("reason", "") == "FailedCreate") refused.push_back(e);
  ASSERT_FALSE(refused.empty());
  const json& e = refused.front();
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["involvedObject"]["kind"], "Job");
  EXPECT_EQ(e["source"]["component"], "job-controller");
  const std::string m = e["message"];
  EXPECT_EQ(m.rfind("Error creating: pods \"kinetic-job-0101-", 0), 0u) << m;
  EXPECT_NE(m.find("\" is forbidden: exceeded quota: q, requested: pods=1"), std::string::npos)
      << m;
  EXPECT_TRUE(client_->list(k8s::pods_path("default"), "kinetic.dev/job=job-0101").items.empty());
  // Lifted: the next retry creates the pod.
  kube_->fail_pod_creates("");
  EXPECT_TRUE(kube_->wait_for_object(
      jobs_ + "/kinetic-job-0101",
      [](const json& j) { return j.contains("status") && j["status"].value("active", 0) == 1; },
      10000));
}

TEST_F(GkeWaitForPod, PersistentFailedCreateIsAJobStartErrorQuotingTheAPI) {
  kube_->fail_pod_creates("exceeded quota: tpu, requested: google.com/tpu=4");
  client_->create(jobs_, job("job-0102"));
  options_.job_id = "job-0102";
  try {
    wait_for_lead_pod(*client_, options_);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::job_start);
    const std::string m = e.what();
    EXPECT_NE(m.find("pods \"kinetic-job-0102-"), std::string::npos) << m;
    EXPECT_NE(m.find("is forbidden: exceeded quota: tpu, requested: google.com/tpu=4"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  // Refused twice at least: a one-off is not fatal.
  int refused = 0;
  for (const auto& e : kube_->events_for("default", "kinetic-job-0102"))
    if (e.value("reason", "") == "FailedCreate") refused += e.value("count", 1);
  EXPECT_GE(refused, 2);
}

TEST_F(GkeWaitForPod, AJobFailedBeforeItsPodRanEndsTheWait) {
  // No node pool: the pod stays unschedulable; the deadline fails the Job and deletes the pod.
  json j = job("job-0103");
  j["spec"]["activeDeadlineSeconds"] = 1;
  client_->create(jobs_, j);
  options_.job_id = "job-0103";
  EXPECT_EQ(wait_for_lead_pod(*client_, options_), std::nullopt);
  auto stored = kube_->object(jobs_ + "/kinetic-job-0103");
  ASSERT_TRUE(stored.has_value());
  EXPECT_NE(stored->dump().find("DeadlineExceeded"), std::string::npos) << stored->dump();
}

}  // namespace
}  // namespace kinetic::gke
