// A pipeline's record and plan as the bucket holds them (backend/pipeline_document.h,
// backend/gke/gke_pipeline_records.h): every job pod may rewrite them, so whatever their bytes,
// the CLI's readers either refuse them with kinetic's Error(Errc::api) or give a record whose
// every field `status`, `logs` and `cancel` read has the type they read it as (issue #28
// point 1): reading it as they do never throws.
#include <cstddef>
#include <cstdint>

#include "backend/gke/gke_pipeline_records.h"
#include "backend/pipeline_document.h"
#include "core/error.h"
#include "pipeline/pipeline_record.h"
#include "support.h"

using namespace kinetic;

namespace {

// What the commands read of a record (cli/cmd_status.cpp, cmd_logs.cpp, cmd_cancel.cpp).
void read_as_the_cli_does(const PipelineDocument& doc) {
  (void)pipeline_finished(doc);
  (void)doc.value("id", "");
  (void)doc.value("file", "");
  (void)doc.value("error", "");
  (void)doc.value("detached", false);
  (void)doc.value("output_dir", "");
  const auto runner = doc.value("runner", nlohmann::ordered_json::object());
  (void)runner.value("job", "");
  (void)runner.value("namespace", "");
  (void)runner.value("pid", 0);
  (void)runner.value("boot_id", "");
  (void)runner.value("start_time", "");
  for (const auto& step : doc.value("steps", nlohmann::ordered_json::array())) {
    for (const char* key : {"name", "state", "job", "error", "output_dir", "started", "finished"})
      (void)step.value(key, "");
    (void)step.value("reused", false);
    (void)step.value("duration_seconds", 0.0);
    (void)step.value("exit_code", nlohmann::ordered_json());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::text(data, size);
  try {
    read_as_the_cli_does(read_pipeline_document(text, "gs://b/pipelines/pipe-1/pipeline.json"));
  } catch (const Error& e) {
    fuzz::check(e.code() == Errc::api, "a record is refused only with Errc::api");
  }
  try {
    for (const auto& launch : gke::plan_launches(text, "gs://b/pipelines/pipe-1/plan.json"))
      fuzz::check(launch.is_object() && launch["job"].is_string(), "a launch names its job");
  } catch (const Error& e) {
    fuzz::check(e.code() == Errc::api, "a plan is refused only with Errc::api");
  }
  return 0;
}
