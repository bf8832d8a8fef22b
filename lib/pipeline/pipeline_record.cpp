#include "pipeline/pipeline_record.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "backend/local/process_identity.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "job/spec.h"

namespace kinetic {

namespace {

std::optional<PipelineDocument> parse_record(const fs::path& file) {
  auto text = read_file(file);
  if (!text) return std::nullopt;
  auto doc = PipelineDocument::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  return doc;
}

}  // namespace

bool looks_like_pipeline_id(const std::string& s) {
  return looks_like_id(s, "pipe-");
}

LocalPipelineRecords::LocalPipelineRecords(fs::path state_dir)
    : dir_(std::move(state_dir) / "pipelines" / "runs") {}

fs::path LocalPipelineRecords::record_path(const std::string& id) const {
  if (!looks_like_pipeline_id(id))
    throw Error(Errc::usage, "'" + id + "' is not a pipeline id; ids look like pipe-1a2b3c4d");
  return dir_ / (id + ".json");
}

fs::path LocalPipelineRecords::log_path(const std::string& id) const {
  return record_path(id).replace_extension(".log");
}

std::optional<PipelineDocument> LocalPipelineRecords::load(const std::string& id) {
  return parse_record(record_path(id));
}

void LocalPipelineRecords::save(const std::string& id, const PipelineDocument& doc) {
  const fs::path file = record_path(id);
  make_dirs(dir_);
  atomic_write(file, doc.dump(2) + "\n", 0600, Durability::unsynced);
}

std::vector<PipelineDocument> LocalPipelineRecords::list() {
  std::vector<PipelineDocument> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".json" || !looks_like_pipeline_id(e.path().stem().string()))
      continue;
    if (auto doc = parse_record(e.path())) out.push_back(std::move(*doc));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.value("created", "") > b.value("created", "");
  });
  return out;
}

void LocalPipelineRecords::request_cancel(const std::string& id) {
  const fs::path file = record_path(id).replace_extension(".cancel");
  make_dirs(dir_);
  atomic_write(file, rfc3339(now_unix()) + "\n", 0600, Durability::unsynced);
}

bool LocalPipelineRecords::cancel_requested(const std::string& id) {
  std::error_code ec;
  return fs::exists(record_path(id).replace_extension(".cancel"), ec);
}

nlohmann::ordered_json LocalPipelineRecords::this_runner() {
  const pid_t pid = ::getpid();
  return {{"pid", pid}, {"start_time", process_start_time(pid)}, {"boot_id", current_boot_id()}};
}

bool LocalPipelineRecords::runner_alive(const PipelineDocument& doc) {
  const auto it = doc.find("runner");
  if (it == doc.end() || !it->is_object()) return false;
  return is_recorded_process(it->value("pid", 0), it->value("start_time", ""),
                             it->value("boot_id", ""));
}

bool LocalPipelineRecords::wake_runner(const PipelineDocument& doc) {
  if (!runner_alive(doc)) return false;
  return ::kill(doc["runner"].value("pid", 0), SIGTERM) == 0;
}

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
