// `run --data gs://...` on the local backend: the objects under a gs:// prefix, downloaded once
// into STATE/cache/data/KEY/ and shared by every later run that finds them unchanged. KEY hashes
// the listing (each object's name, generation and CRC32C), so a changed, added or removed
// object makes a new copy and an unchanged prefix costs one listing request.
#pragma once

#include <functional>
#include <string>

#include "core/fs.h"
#include "gcp/storage.h"

namespace kinetic {

struct GcsCacheResult {
  fs::path dir;             // the prefix's objects as files (read-only), '/' in names as folders
  bool downloaded = false;  // false: the cache already had this listing
  uint64_t objects = 0;
  uint64_t bytes = 0;
};

// The directory holding gs://BUCKET/PREFIX/ (PREFIX "" for the whole bucket). Throws
// Error(Errc::not_found) when the prefix holds no object, naming how to check it; download
// failures are the storage client's errors. An object name that would leave the directory
// ("..", absolute) is refused. BEFORE_DOWNLOAD, when set, is told what is about to be
// downloaded (not called when the cache has it).
GcsCacheResult fetch_gcs_prefix(
    gcp::StorageClient& storage, const fs::path& state_dir, const std::string& bucket,
    const std::string& prefix,
    const std::function<void(const GcsCacheResult&)>& before_download = nullptr);

// Where the copies live: STATE/cache/data/.
fs::path gcs_cache_root(const fs::path& state_dir);

}  // namespace kinetic
