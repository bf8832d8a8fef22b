#include "pipeline/pipeline_record.h"

#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

bool pipeline_finished(const PipelineDocument& doc) {
  const std::string state = doc.value("state", "");
  return state != "running" && !state.empty();
}

std::optional<PipelineDocument> pipeline_view(PipelineRecords& records, const std::string& id) {
  auto doc = records.load(id);
  if (!doc || pipeline_finished(*doc) || records.runner_alive(*doc)) return doc;
  // The runner may have written its final word just before exiting: read once more.
  doc = records.load(id);
  if (!doc || pipeline_finished(*doc)) return doc;
  (*doc)["state"] = "lost";
  (*doc)["exit_code"] = exit_codes::kinetic;
  (*doc)["error"] =
      "the pipeline's runner stopped unexpectedly (killed, or the machine restarted); `kinetic "
      "cancel " +
      id + "` stops its running steps";
  return doc;
}

PipelineDocument require_pipeline(PipelineRecords& records, const std::string& id) {
  if (auto doc = pipeline_view(records, id)) return *doc;
  std::vector<std::string> ids;
  for (const auto& d : records.list()) ids.push_back(d.value("id", ""));
  const auto near = closest_matches(id, ids);
  throw Error(Errc::not_found, "no pipeline '" + id + "'" +
                                   (near.empty() ? "" : "; did you mean " + join_or(near) + "?") +
                                   " (run `kinetic status` to list pipelines)");
}

}  // namespace kinetic
