// The gke backend's pipeline records (backend/pipeline_records.h): in the job bucket, so a run
// is seen from any machine that reaches the cluster.
//
//   pipelines/ID/pipeline.json  the record (written by the CLI, or by the in-cluster runner of a
//                               detached run: pipeline_runner_job.h)
//   pipelines/ID/cancel         `kinetic cancel ID`: the runner looks for it between steps
//
// The runner is either the in-cluster Job of a detached run (the record names it {job,
// namespace}: alive while it exists and has not finished) or the CLI process of a foreground run
// ({pid, start_time, boot_id}: alive while that process runs; from another machine it cannot be
// told, and is taken to be).
#pragma once

#include <string_view>
#include <vector>

#include "backend/gke/session.h"
#include "backend/pipeline_records.h"
#include "k8s/client.h"

namespace kinetic::gke {

// The launches of a plan's steps to run (each an object naming its `job`), from plan.json's
// TEXT; Error(Errc::api) naming WHERE when it is not a plan kinetic wrote.
std::vector<nlohmann::ordered_json> plan_launches(std::string_view plan_text,
                                                  const std::string& where);

class GkePipelineRecords final : public PipelineRecords {
 public:
  // SESSION outlives the records; KUBE gives the cluster's API when a runner Job is looked at.
  GkePipelineRecords(const Session& session, std::function<k8s::Client&()> kube)
      : session_(session), kube_(std::move(kube)) {}

  std::optional<PipelineDocument> load(const std::string& id) override;
  void save(const std::string& id, const PipelineDocument& doc) override;
  std::vector<PipelineDocument> list() override;
  void remove(const std::string& id) override;
  void request_cancel(const std::string& id) override;
  bool cancel_requested(const std::string& id) override;
  nlohmann::ordered_json this_runner() override;
  bool runner_alive(const PipelineDocument& doc) override;
  bool wake_runner(const PipelineDocument& doc) override;
  // The launches (Backend::stage_step) of every step to run of each detached pipeline still
  // running: its record says running and its runner Job exists and has not finished. Their
  // workloads may not exist yet; their Secrets and specs are the runner's to use, and `cleanup`
  // keeps them. Error(Errc::api) when such a pipeline's plan cannot be read.
  std::vector<nlohmann::ordered_json> live_launches();

 private:
  const Session& session_;
  std::function<k8s::Client&()> kube_;
};

}  // namespace kinetic::gke
