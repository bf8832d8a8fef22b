// The gke backend's PipelineStore (backend.h): documents under the job bucket's pipelines/, and
// a step's outputs as its job left them, gs://BUCKET/jobs/JOB/results/outputs.tar.gz, which the
// steps that need it download in their pods (bucket to bucket, never through the laptop) and a
// cache entry names for as long as the object is there.
#pragma once

#include "backend/backend.h"
#include "backend/gke/session.h"

namespace kinetic::gke {

inline constexpr const char* kPipelinesPrefix = "pipelines/";

// Unpacks a job's outputs archive into DIR. The job wrote these: a symlink to /etc/passwd is
// left out (with a warning on IO), not a reason to lose the rest. Shared by collect and a reused
// step's outputs.
void unpack_job_outputs(const fs::path& archive, const fs::path& dir, const IOStreams& io);

class GkePipelineStore final : public PipelineStore {
 public:
  // SESSION (its thread's transport) outlives the store.
  explicit GkePipelineStore(const Session& session) : session_(session) {}

  std::optional<std::string> read(const std::string& name) override;
  void write(const std::string& name, const std::string& data) override;
  std::string outputs_of(const std::string& job, const fs::path& output_dir) const override;
  bool outputs_present(const std::string& location) override;
  // Downloads and unpacks the outputs into DIR (an unsafe symlink is left out, as collect
  // does), with their job's status.json beside them.
  void fetch_outputs(const std::string& location, const fs::path& dir) override;
  // gs://BUCKET/pipelines/NAME.
  std::string location(const std::string& name) const override;

 private:
  const Session& session_;
};

}  // namespace kinetic::gke
