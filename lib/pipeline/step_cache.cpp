#include "pipeline/step_cache.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "pack/sha256.h"

namespace kinetic {

namespace {

std::optional<nlohmann::json> read_json(const fs::path& path) {
  std::optional<std::string> text;
  try {
    text = read_file(path);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

nlohmann::json to_json(const CachedStep& e) {
  return {{"key", e.key},
          {"step", e.step},
          {"job", e.job},
          {"pipeline", e.pipeline},
          {"output_dir", e.output_dir}};
}

CachedStep cached_step_from_json(const nlohmann::json& j) {
  CachedStep e;
  e.key = j.value("key", "");
  e.step = j.value("step", "");
  e.job = j.value("job", "");
  e.pipeline = j.value("pipeline", "");
  e.output_dir = j.value("output_dir", "");
  return e;
}

bool looks_like_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

bool outputs_present(const fs::path& dir) {
  if (dir.empty()) return false;
  auto status = read_json(dir / "status.json");
  return status && status->value("state", "") == "succeeded";
}

std::optional<CachedStep> StepCache::find(const std::string& key) const {
  if (!looks_like_key(key)) return std::nullopt;
  auto j = read_json(root_ / "cache" / (key + ".json"));
  if (!j) return std::nullopt;
  CachedStep e = cached_step_from_json(*j);
  if (e.key != key || !outputs_present(e.output_dir)) return std::nullopt;
  return e;
}

void StepCache::remember(const CachedStep& entry) const {
  if (!looks_like_key(entry.key)) throw Error(Errc::internal, "a step key must be 64 hex digits");
  atomic_write(root_ / "cache" / (entry.key + ".json"), to_json(entry).dump(2) + "\n", 0600);
}

fs::path StepCache::latest_path(const fs::path& pipeline) const {
  return root_ / "latest" /
         (sha256_hex(pipeline.lexically_normal().string()).substr(0, 16) + ".json");
}

std::optional<CachedStep> StepCache::latest(const fs::path& pipeline,
                                            const std::string& step) const {
  auto j = read_json(latest_path(pipeline));
  if (!j || !j->contains("steps") || !(*j)["steps"].contains(step)) return std::nullopt;
  CachedStep e = cached_step_from_json((*j)["steps"][step]);
  if (!outputs_present(e.output_dir)) return std::nullopt;
  return e;
}

void StepCache::remember_latest(const fs::path& pipeline, const CachedStep& entry) const {
  const fs::path path = latest_path(pipeline);
  nlohmann::json j = read_json(path).value_or(nlohmann::json::object());
  j["pipeline"] = pipeline.lexically_normal().string();
  j["steps"][entry.step] = to_json(entry);
  atomic_write(path, j.dump(2) + "\n", 0600);
}

}  // namespace kinetic
