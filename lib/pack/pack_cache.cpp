#include "pack/pack_cache.h"

#include <nlohmann/json.hpp>

namespace kinetic {

namespace {

fs::path entry_path(const fs::path& state_dir, const std::string& signature) {
  return state_dir / "pack-cache" / (signature + ".json");
}

}  // namespace

std::optional<PackResult> pack_cache_lookup(const fs::path& state_dir,
                                            const std::string& signature) {
  auto text = read_file(entry_path(state_dir, signature));
  if (!text) return std::nullopt;
  try {
    auto j = nlohmann::json::parse(*text);
    std::optional<PackResult> r(std::in_place);
    r->sha256 = j.at("sha256").get<std::string>();
    r->archive_bytes = j.at("archiveBytes").get<uint64_t>();
    r->files = j.at("files").get<uint64_t>();
    r->input_bytes = j.at("inputBytes").get<uint64_t>();
    if (r->sha256.size() != 64) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is a miss
  }
}

void pack_cache_remember(const fs::path& state_dir, const std::string& signature,
                         const PackResult& result, double newest, double now) {
  if (now - newest < kPackCacheSettleSeconds) return;
  nlohmann::json j = {{"sha256", result.sha256},
                      {"archiveBytes", result.archive_bytes},
                      {"files", result.files},
                      {"inputBytes", result.input_bytes}};
  try {
    fs::path file = entry_path(state_dir, signature);
    make_dirs(file.parent_path());
    atomic_write(file, j.dump(), 0600, Durability::unsynced);
  } catch (const std::exception&) {
  }
}

}  // namespace kinetic
