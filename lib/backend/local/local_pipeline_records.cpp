#include "backend/local/local_pipeline_records.h"

#include <algorithm>

#include "backend/process_identity.h"
#include "core/duration.h"
#include "core/error.h"
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
    if (e.path().extension() != ".json" || !looks_like_pipeline_id(e.path().stem().string()))
      continue;
    if (auto doc = parse_record(e.path())) out.push_back(std::move(*doc));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.value("created", "") > b.value("created", "");
  });
  return out;
}

void LocalPipelineRecords::remove(const std::string& id) {
  std::error_code ec;
  for (const char* extension : {".cancel", ".log", ".json"})  // the record last
    fs::remove(record_path(id).replace_extension(extension), ec);
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
  return this_process_runner();
}

bool LocalPipelineRecords::runner_alive(const PipelineDocument& doc) {
  const auto it = doc.find("runner");
  return it != doc.end() && process_runner_alive(*it);
}

bool LocalPipelineRecords::wake_runner(const PipelineDocument& doc) {
  const auto it = doc.find("runner");
  return it != doc.end() && wake_process_runner(*it);
}

}  // namespace kinetic
