#include "backend/local/local_pipeline_store.h"

#include <nlohmann/json.hpp>

#include "core/copy_tree.h"
#include "core/error.h"

namespace kinetic {

fs::path LocalPipelineStore::path_of(const std::string& name) const {
  // Names are kinetic's own ("cache/KEY.json"); a climbing one is a bug, not a path.
  const fs::path rel = fs::path(name).lexically_normal();
  if (name.empty() || rel.is_absolute() || *rel.begin() == "..")
    throw Error(Errc::internal, "pipeline store: bad document name '" + name + "'");
  return root_ / rel;
}

std::optional<std::string> LocalPipelineStore::read(const std::string& name) {
  try {
    return read_file(path_of(name));
  } catch (const Error&) {
    return std::nullopt;
  }
}

void LocalPipelineStore::write(const std::string& name, const std::string& data) {
  atomic_write(path_of(name), data, 0600);
}

std::string LocalPipelineStore::outputs_of(const std::string&, const fs::path& output_dir) const {
  return output_dir.string();
}

bool LocalPipelineStore::outputs_present(const std::string& location) {
  if (location.empty()) return false;
  std::optional<std::string> text;
  try {
    text = read_file(fs::path(location) / "status.json");
  } catch (const Error&) {
    return false;
  }
  if (!text) return false;
  const auto status = nlohmann::json::parse(*text, nullptr, false);
  return status.is_object() && status.value("state", "") == "succeeded";
}

void LocalPipelineStore::fetch_outputs(const std::string& location, const fs::path& dir) {
  std::error_code ec;
  if (fs::equivalent(location, dir, ec)) return;
  copy_tree(location, dir, "the outputs");
}

}  // namespace kinetic
