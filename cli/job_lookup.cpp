#include "job_lookup.h"

#include <ctime>

#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "pipeline/pipeline_runner.h"

namespace kinetic::cli {

JobStatus require_job(JobStore& backend, const std::string& id) {
  require_job_id(id);
  if (auto st = backend.get(id)) return *st;
  std::vector<std::string> ids;
  for (const auto& j : backend.list()) ids.push_back(j.id);
  auto near = closest_matches(id, ids);
  throw Error(Errc::not_found, "no job '" + id + "' in the " + backend.name() + " backend" +
                                   (near.empty() ? "" : "; did you mean " + join_or(near) + "?") +
                                   " (run `kinetic status` to list jobs)");
}

std::unique_ptr<PipelineRecords> pipeline_records(Backend& backend) {
  require_pipeline_backend(backend.name());
  auto records = backend.pipeline_records();
  if (!records) throw Error(Errc::internal, "the " + backend.name() + " backend keeps no records");
  return records;
}

void require_job_or_pipeline_id(const std::string& id) {
  if (looks_like_pipeline_id(id)) return;
  if (starts_with(id, "pipe-"))
    throw Error(Errc::usage, "'" + id +
                                 "' is not a pipeline id; ids look like pipe-1a2b3c4d; run "
                                 "`kinetic status` to list pipelines");
  require_job_id(id);
}

std::string age_of(const std::string& t) {
  if (t.size() < 19) return "";
  std::tm tm{};
  if (::strptime(t.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return "";
  double then = static_cast<double>(::timegm(&tm));
  double age = now_unix() - then;
  if (age < 0) age = 0;
  std::string d = format_duration(age);
  // Ages read better without tenths: "42s", "3m04s".
  if (age < 60) d = std::to_string(static_cast<long>(age)) + "s";
  return d;
}

}  // namespace kinetic::cli
