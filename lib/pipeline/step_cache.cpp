#include "pipeline/step_cache.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"
#include "pack/sha256.h"

namespace kinetic {

namespace {

std::optional<nlohmann::json> read_json(PipelineStore& store, const std::string& name) {
  const std::optional<std::string> text = store.read(name);
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

constexpr TextFields<CachedStep, 5> kCachedStepText = {{{"key", &CachedStep::key},
                                                        {"step", &CachedStep::step},
                                                        {"job", &CachedStep::job},
                                                        {"pipeline", &CachedStep::pipeline},
                                                        {"outputs", &CachedStep::outputs}}};

nlohmann::json cached_step_json(const CachedStep& e) {
  nlohmann::json j = nlohmann::json::object();
  put_text_fields(j, e, kCachedStepText);
  return j;
}

CachedStep cached_step_from_json(const nlohmann::json& j) {
  CachedStep e;
  get_text_fields(j, e, kCachedStepText);
  // Entries of the first slice named a folder "output_dir".
  if (!j.contains("outputs")) e.outputs = j.value("output_dir", "");
  return e;
}

bool looks_like_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::optional<CachedStep> StepCache::find(const std::string& key) const {
  if (!looks_like_key(key)) return std::nullopt;
  auto j = read_json(store_, entry_name(key));
  if (!j) return std::nullopt;
  CachedStep e = cached_step_from_json(*j);
  if (e.key != key || !store_.outputs_present(e.outputs)) return std::nullopt;
  return e;
}

void StepCache::remember(const CachedStep& entry) const {
  if (!looks_like_key(entry.key)) throw Error(Errc::internal, "a step key must be 64 hex digits");
  store_.write(entry_name(entry.key), cached_step_json(entry).dump(2) + "\n");
}

nlohmann::json StepCache::entry_json(const CachedStep& entry) {
  return cached_step_json(entry);
}

std::string StepCache::latest_name(const fs::path& pipeline) {
  return "latest/" + sha256_hex(pipeline.lexically_normal().string()).substr(0, 16) + ".json";
}

std::optional<CachedStep> StepCache::latest(const fs::path& pipeline,
                                            const std::string& step) const {
  auto j = read_json(store_, latest_name(pipeline));
  if (!j || !j->contains("steps") || !(*j)["steps"].contains(step)) return std::nullopt;
  CachedStep e = cached_step_from_json((*j)["steps"][step]);
  if (!store_.outputs_present(e.outputs)) return std::nullopt;
  return e;
}

void StepCache::remember_latest(const fs::path& pipeline, const CachedStep& entry) const {
  const std::string name = latest_name(pipeline);
  nlohmann::json j = read_json(store_, name).value_or(nlohmann::json::object());
  j["pipeline"] = pipeline.lexically_normal().string();
  j["steps"][entry.step] = cached_step_json(entry);
  store_.write(name, j.dump(2) + "\n");
}

}  // namespace kinetic
