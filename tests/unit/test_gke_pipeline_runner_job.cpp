// A detached pipeline's runner Job and what it may do (golden:
// tests/golden/manifests/pipeline-runner.yaml; backend/gke/pipeline_runner_job.h). The script
// itself runs for real in the e2e suite (tests/e2e/test_gke_pipeline.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "backend/gke/pipeline_runner_job.h"
#include "manifest_golden.h"
#include "render/yaml.h"

namespace kinetic::gke {
namespace {

Target runner_target() {
  return test::acme_target();
}

const nlohmann::ordered_json* of_kind(const std::vector<nlohmann::ordered_json>& docs,
                                      const std::string& kind) {
  for (const auto& d : docs)
    if (d["kind"] == kind) return &d;
  return nullptr;
}

TEST(PipelineRunnerManifests, Golden) {
  auto docs = pipeline_runner_manifests(runner_target(), "pipe-1a2b3c4d",
                                        "gs://b/pipelines/pipe-1a2b3c4d/plan.json");
  for (auto& d : docs)
    if (d["kind"] == "Job")
      d["spec"]["template"]["spec"]["containers"][0]["command"][2] =
          "<lib/backend/gke/pipeline_runner.py>";
  test::expect_manifest_golden("pipeline-runner", to_yaml_stream(docs));
}

TEST(PipelineRunnerManifests, TheJobRunsTheEmbeddedScriptAsItsOwnAccountInTheDefaultPool) {
  auto docs = pipeline_runner_manifests(runner_target(), "pipe-1a2b3c4d", "gs://b/plan.json");
  const auto* job = of_kind(docs, "Job");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ((*job)["metadata"]["name"], "kinetic-pipe-1a2b3c4d");
  const auto& pod = (*job)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], kPipelineRunnerName);
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-nodepool"], "default-pool");
  EXPECT_EQ(pod["containers"][0]["command"][2], std::string(pipeline_runner_source()));
  EXPECT_EQ(pod["containers"][0]["env"][0]["value"], "gs://b/plan.json");
  // Not a job of kinetic's: status lists jobs, and auto-down counts them, by kinetic.dev/job.
  EXPECT_FALSE((*job)["metadata"]["labels"].contains("kinetic.dev/job"));
  EXPECT_FALSE((*job)["spec"]["template"]["metadata"]["labels"].contains("kinetic.dev/job"));
  // No deadline: a pipeline may run for days.
  EXPECT_FALSE((*job)["spec"].contains("activeDeadlineSeconds"));
}

TEST(PipelineRunnerManifests, TheRoleNeverReadsASecretAPodOrALog) {
  auto docs = pipeline_runner_manifests(runner_target(), "pipe-1a2b3c4d", "gs://b/plan.json");
  const auto* role = of_kind(docs, "Role");
  ASSERT_NE(role, nullptr);
  std::map<std::string, nlohmann::ordered_json> verbs;
  for (const auto& rule : (*role)["rules"])
    for (const auto& resource : rule["resources"]) verbs[resource] = rule["verbs"];
  EXPECT_EQ(verbs.size(), 3u);
  EXPECT_EQ(verbs["jobs"], nlohmann::ordered_json({"create", "get", "delete"}));
  EXPECT_EQ(verbs["jobsets"], nlohmann::ordered_json({"create", "get", "delete"}));
  EXPECT_EQ(verbs["secrets"], nlohmann::ordered_json({"delete"}));
  const auto* binding = of_kind(docs, "RoleBinding");
  ASSERT_NE(binding, nullptr);
  EXPECT_EQ((*binding)["subjects"][0]["name"], kPipelineRunnerName);
}

TEST(PipelineRunnerObjects, LiveUnderTheBucketsPipelinesFolder) {
  EXPECT_EQ(pipeline_object("pipe-1a2b3c4d", "plan.json"), "pipelines/pipe-1a2b3c4d/plan.json");
  EXPECT_EQ(pipeline_runner_job("pipe-1a2b3c4d"), "kinetic-pipe-1a2b3c4d");
}

}  // namespace
}  // namespace kinetic::gke
