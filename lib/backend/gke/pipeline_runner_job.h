// The in-cluster runner of a detached pipeline (docs/pipelines.md "Detached on GKE"): one Job in
// the default pool running lib/backend/gke/pipeline_runner.py, embedded, as a ServiceAccount of
// its own whose Roles let it create this namespace's Jobs and JobSets, read and delete its
// pipeline's steps' ones and delete their Secrets, by name, and nothing else (it never reads a
// Secret, a pod or a log). Its Workload
// Identity principal may use the job bucket's objects, as the job pods' may. The plan it runs is
// gs://BUCKET/pipelines/ID/plan.json; the run's record gs://BUCKET/pipelines/ID/pipeline.json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/gke/session.h"
#include "k8s/client.h"

namespace kinetic::gke {

inline constexpr const char* kPipelineRunnerName = "kinetic-pipeline-runner";

// The script, as embedded (comments dropped).
std::string_view pipeline_runner_source();

// "kinetic-pipe-1a2b3c4d": the runner Job of pipeline ID.
std::string pipeline_runner_job(const std::string& pipeline_id);

// gs://BUCKET/pipelines/ID/NAME: where pipeline ID's plan, record and cancel mark are.
std::string pipeline_object(const std::string& pipeline_id, const std::string& name);

// The ServiceAccount, the namespace's Role and RoleBinding, pipeline ID's own Role and
// RoleBinding (its PLAN's steps' objects, by name) and the Job that runs the plan at PLAN_URI,
// whose bytes have PLAN_SHA256 (the runner refuses any others), in the order they are applied
// (golden: tests/golden/manifests/).
std::vector<nlohmann::ordered_json> pipeline_runner_manifests(const Target& target,
                                                              const std::string& pipeline_id,
                                                              const nlohmann::ordered_json& plan,
                                                              const std::string& plan_uri,
                                                              const std::string& plan_sha256);

// Grants the runner's principal the bucket's objects (once per namespace), adds to PLAN its
// namespace and the one service account its steps' pods run as, writes PLAN to plan.json and its
// record (PLAN's `record`, naming the runner) to pipeline.json, then applies the manifests: the
// runner starts, and the record is there before it. Returns the record's `runner`.
nlohmann::ordered_json start_pipeline_runner(const Session& session, k8s::Client& kube,
                                             const std::string& pipeline_id,
                                             nlohmann::ordered_json plan);

}  // namespace kinetic::gke
