#include "backend/gke/gke_pipeline_records.h"

#include <algorithm>

#include "backend/gke/gke_pipeline_store.h"
#include "backend/gke/job_state.h"
#include "backend/gke/pipeline_runner_job.h"
#include "backend/pipeline_document.h"
#include "backend/process_identity.h"
#include "core/duration.h"
#include "core/error.h"
#include "gcp/storage.h"

namespace kinetic::gke {

namespace {

std::string checked_object(const std::string& id, const std::string& name) {
  if (!looks_like_pipeline_id(id))
    throw Error(Errc::usage, "'" + id + "' is not a pipeline id; ids look like pipe-1a2b3c4d");
  return pipeline_object(id, name);
}

}  // namespace

std::optional<PipelineDocument> GkePipelineRecords::load(const std::string& id) {
  std::string text;
  try {
    text =
        session_.storage().download_string(session_.bucket(), checked_object(id, "pipeline.json"));
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return std::nullopt;
    throw;
  }
  return read_pipeline_document(
      text, "gs://" + session_.bucket() + "/" + pipeline_object(id, "pipeline.json"));
}

void GkePipelineRecords::save(const std::string& id, const PipelineDocument& doc) {
  // One upload: a reader sees the old object or the new one, whole.
  session_.storage().upload_string(session_.bucket(), checked_object(id, "pipeline.json"),
                                   doc.dump(2) + "\n", {.content_type = "application/json"});
}

std::vector<PipelineDocument> GkePipelineRecords::list() {
  std::vector<PipelineDocument> out;
  const auto listed = session_.storage().list(session_.bucket(), kPipelinesPrefix, "",
                                              std::string(kPipelinesPrefix) + "*/pipeline.json");
  for (const auto& o : listed.objects) {
    const std::string id = o.name.substr(std::string(kPipelinesPrefix).size(),
                                         o.name.size() - std::string(kPipelinesPrefix).size() -
                                             std::string("/pipeline.json").size());
    if (!looks_like_pipeline_id(id)) continue;
    try {
      if (auto doc = load(id)) out.push_back(std::move(*doc));
    } catch (const Error& e) {
      if (e.code() != Errc::api) throw;  // not a record: `status ID` says why; the list goes on
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.value("created", "") > b.value("created", "");
  });
  return out;
}

// Everything under pipelines/ID/ (the record, the plan, the cancel mark), the record last: a
// cleanup cut short leaves a run that still lists. The step cache (pipelines/cache/) stays.
void GkePipelineRecords::remove(const std::string& id) {
  gcp::StorageClient& storage = session_.storage();
  std::vector<std::string> names;
  for (const auto& o : storage.list(session_.bucket(), checked_object(id, "")).objects)
    if (!o.name.ends_with("/pipeline.json")) names.push_back(o.name);
  names.push_back(checked_object(id, "pipeline.json"));
  for (const auto& name : names) storage.delete_object(session_.bucket(), name);
}

void GkePipelineRecords::request_cancel(const std::string& id) {
  session_.storage().upload_string(session_.bucket(), checked_object(id, "cancel"),
                                   rfc3339(now_unix()) + "\n", {.content_type = "text/plain"});
}

bool GkePipelineRecords::cancel_requested(const std::string& id) {
  return session_.storage().get_object(session_.bucket(), checked_object(id, "cancel")).has_value();
}

nlohmann::ordered_json GkePipelineRecords::this_runner() {
  return this_process_runner();
}

bool GkePipelineRecords::runner_alive(const PipelineDocument& doc) {
  const auto it = doc.find("runner");
  if (it == doc.end() || !it->is_object()) return false;
  const auto& runner = *it;
  if (runner.contains("job")) {
    try {
      auto job = kube_().get(
          k8s::job_path(runner.value("namespace", session_.target.ns), runner.value("job", "")));
      return job && !workload_finished(*job);
    } catch (const Error&) {
      return false;  // no cluster to run in any more
    }
  }
  // A foreground run's CLI: knowable on the machine (and boot) it runs on only.
  if (runner.value("boot_id", "") != current_boot_id()) return true;
  return process_runner_alive(runner);
}

std::vector<nlohmann::ordered_json> plan_launches(std::string_view plan_text,
                                                  const std::string& where) {
  const auto plan = nlohmann::ordered_json::parse(plan_text, nullptr, false);
  const auto bad = [&where](const std::string& what) {
    return Error(Errc::api, where + " is not a pipeline plan kinetic wrote (" + what +
                                "); a job may have overwritten it");
  };
  if (!plan.is_object() || !plan.contains("steps") || !plan["steps"].is_array())
    throw bad("no steps");
  std::vector<nlohmann::ordered_json> out;
  for (const auto& step : plan["steps"]) {
    if (!step.is_object()) throw bad("a step is not an object");
    const auto launch = step.find("launch");
    if (launch == step.end()) continue;  // reused: nothing staged
    if (!launch->is_object() || !launch->contains("job") || !(*launch)["job"].is_string())
      throw bad("a step's launch names no job");
    out.push_back(*launch);
  }
  return out;
}

std::vector<nlohmann::ordered_json> GkePipelineRecords::live_launches() {
  std::vector<nlohmann::ordered_json> out;
  for (const auto& doc : list()) {
    const auto runner = doc.value("runner", nlohmann::ordered_json::object());
    if (doc.value("state", "") != "running" || !runner.contains("job") || !runner_alive(doc))
      continue;
    const std::string id = doc.value("id", "");
    if (!looks_like_pipeline_id(id))
      throw Error(Errc::api, "a running pipeline's record names no pipeline id ('" + id + "')");
    const std::string object = pipeline_object(id, "plan.json");
    const std::string where = "gs://" + session_.bucket() + "/" + object;
    std::string text;
    try {
      text = session_.storage().download_string(session_.bucket(), object);
    } catch (const Error& e) {
      if (e.code() != Errc::not_found) throw;
      throw Error(Errc::api, where + " is missing; a job may have deleted it");
    }
    for (auto& launch : plan_launches(text, where)) out.push_back(std::move(launch));
  }
  return out;
}

bool GkePipelineRecords::wake_runner(const PipelineDocument& doc) {
  const auto it = doc.find("runner");
  if (it == doc.end() || !it->is_object()) return false;
  // The in-cluster runner looks at the cancel mark every few seconds.
  if (it->contains("job")) return runner_alive(doc);
  if (it->value("boot_id", "") != current_boot_id()) return true;
  return wake_process_runner(*it);
}

}  // namespace kinetic::gke
