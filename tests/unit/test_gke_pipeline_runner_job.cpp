// A detached pipeline's runner Job and what it may do (golden:
// tests/golden/manifests/pipeline-runner.yaml; backend/gke/pipeline_runner_job.h). The script
// itself runs for real in the e2e suite (tests/e2e/test_gke_pipeline.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "backend/gke/pipeline_runner_job.h"
#include "backend/gke/script_pod.h"
#include "manifest_golden.h"
#include "render/yaml.h"

namespace kinetic::gke {
namespace {

const std::string kPlanSha256(64, 'a');

// Two steps to run, one with a Secret; a third reused (nothing staged for it).
const nlohmann::ordered_json kPlan = nlohmann::ordered_json::parse(R"({"steps": [
  {"name": "prep", "launch": {"object": "/apis/batch/v1/namespaces/acme/jobs/kinetic-job-1",
                              "secret": "/api/v1/namespaces/acme/secrets/kinetic-job-1"}},
  {"name": "train", "launch": {
     "object": "/apis/jobset.x-k8s.io/v1alpha2/namespaces/acme/jobsets/kinetic-job-2",
     "secret": ""}},
  {"name": "old"}]})");

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
  auto docs = pipeline_runner_manifests(runner_target(), "pipe-1a2b3c4d", kPlan,
                                        "gs://b/pipelines/pipe-1a2b3c4d/plan.json", kPlanSha256);
  for (auto& d : docs)
    if (d["kind"] == "Job")
      d["spec"]["template"]["spec"]["containers"][0]["command"][2] =
          "<lib/backend/gke/pipeline_runner.py>";
  test::expect_manifest_golden("pipeline-runner", to_yaml_stream(docs));
}

TEST(PipelineRunnerManifests, TheJobRunsTheEmbeddedScriptAsItsOwnAccountInTheDefaultPool) {
  auto docs = pipeline_runner_manifests(runner_target(), "pipe-1a2b3c4d", kPlan, "gs://b/plan.json",
                                        kPlanSha256);
  const auto* job = of_kind(docs, "Job");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ((*job)["metadata"]["name"], "kinetic-pipe-1a2b3c4d");
  const auto& pod = (*job)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], kPipelineRunnerName);
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-nodepool"], "default-pool");
  EXPECT_EQ(pod["containers"][0]["command"][2], std::string(pipeline_runner_source()));
  // It launches jobs: the image is the one kinetic names, pinned by digest, not a movable tag.
  EXPECT_EQ(pod["containers"][0]["image"], kScriptImage);
  EXPECT_NE(std::string(kScriptImage).find("@sha256:"), std::string::npos);
  EXPECT_EQ(pod["containers"][0]["env"][0]["value"], "gs://b/plan.json");
  // What the plan's bytes must hash to, in the Job's own (immutable) pod template: a pod that
  // rewrites plan.json cannot change it.
  EXPECT_EQ(pod["containers"][0]["env"][1]["name"], "KINETIC_PLAN_SHA256");
  EXPECT_EQ(pod["containers"][0]["env"][1]["value"], kPlanSha256);
  // Not a job of kinetic's: status lists jobs, and auto-down counts them, by kinetic.dev/job.
  EXPECT_FALSE((*job)["metadata"]["labels"].contains("kinetic.dev/job"));
  EXPECT_FALSE((*job)["spec"]["template"]["metadata"]["labels"].contains("kinetic.dev/job"));
  // No deadline: a pipeline may run for days.
  EXPECT_FALSE((*job)["spec"].contains("activeDeadlineSeconds"));
}

// The rules of ROLE: resource -> (verbs, resourceNames).
std::map<std::string, std::pair<nlohmann::ordered_json, nlohmann::ordered_json>> rules_of(
    const nlohmann::ordered_json& role) {
  std::map<std::string, std::pair<nlohmann::ordered_json, nlohmann::ordered_json>> out;
  for (const auto& rule : role["rules"])
    for (const auto& resource : rule["resources"])
      out[resource] = {rule["verbs"], rule.value("resourceNames", nlohmann::ordered_json())};
  return out;
}

TEST(PipelineRunnerManifests, TheRolesCreateAndTouchOnlyThePipelinesStepsByName) {
  auto docs = pipeline_runner_manifests(runner_target(), "pipe-1a2b3c4d", kPlan, "gs://b/plan.json",
                                        kPlanSha256);
  std::vector<const nlohmann::ordered_json*> roles, bindings;
  for (const auto& d : docs) {
    if (d["kind"] == "Role") roles.push_back(&d);
    if (d["kind"] == "RoleBinding") bindings.push_back(&d);
  }
  ASSERT_EQ(roles.size(), 2u);
  ASSERT_EQ(bindings.size(), 2u);
  // The namespace's: create, which RBAC cannot limit by name (the runner checks each launch).
  const auto shared = rules_of(*roles[0]);
  EXPECT_EQ(shared.size(), 2u);
  EXPECT_EQ(shared.at("jobs").first, nlohmann::ordered_json({"create"}));
  EXPECT_EQ(shared.at("jobsets").first, nlohmann::ordered_json({"create"}));
  // The pipeline's: its steps' objects by name; never a Secret's values, a pod or a log.
  EXPECT_EQ((*roles[1])["metadata"]["name"], "kinetic-pipe-1a2b3c4d");
  const auto own = rules_of(*roles[1]);
  EXPECT_EQ(own.size(), 3u);
  EXPECT_EQ(own.at("jobs"), std::make_pair(nlohmann::ordered_json({"get", "delete"}),
                                           nlohmann::ordered_json({"kinetic-job-1"})));
  EXPECT_EQ(own.at("jobsets"), std::make_pair(nlohmann::ordered_json({"get", "delete"}),
                                              nlohmann::ordered_json({"kinetic-job-2"})));
  EXPECT_EQ(own.at("secrets"), std::make_pair(nlohmann::ordered_json({"delete"}),
                                              nlohmann::ordered_json({"kinetic-job-1"})));
  for (const auto* binding : bindings) {
    EXPECT_EQ((*binding)["subjects"][0]["name"], kPipelineRunnerName);
    EXPECT_EQ((*binding)["roleRef"]["name"], (*binding)["metadata"]["name"]);
  }
  // A pipeline whose steps are all reused may touch nothing: no rule at all, never a rule
  // without names (which would cover every object).
  auto reused = pipeline_runner_manifests(runner_target(), "pipe-1a2b3c4d",
                                          nlohmann::ordered_json::parse(R"({"steps":[{}]})"),
                                          "gs://b/plan.json", kPlanSha256);
  EXPECT_EQ(reused[3]["rules"], nlohmann::ordered_json::array());
}

TEST(PipelineRunnerObjects, LiveUnderTheBucketsPipelinesFolder) {
  EXPECT_EQ(pipeline_object("pipe-1a2b3c4d", "plan.json"), "pipelines/pipe-1a2b3c4d/plan.json");
  EXPECT_EQ(pipeline_runner_job("pipe-1a2b3c4d"), "kinetic-pipe-1a2b3c4d");
}

}  // namespace
}  // namespace kinetic::gke
