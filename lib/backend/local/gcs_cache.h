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
// (gcs_copy_path) is refused before anything is downloaded. BEFORE_DOWNLOAD, when set, is told what
// is about to be downloaded (not called when the cache has it).
GcsCacheResult fetch_gcs_prefix(
    gcp::StorageClient& storage, const fs::path& state_dir, const std::string& bucket,
    const std::string& prefix,
    const std::function<void(const GcsCacheResult&)>& before_download = nullptr);

// Where OBJECT (a name under DIR_PREFIX, "PREFIX/" or "") goes in the copy: a relative,
// normalized path of non-empty components; `folder` for a folder placeholder ("a/b/"), and an
// empty path for the prefix's own placeholder. Object names are the bucket writer's: one with an
// empty component ("a//b", which would otherwise join as an absolute path), "." or ".." is
// Error(Errc::usage) naming it, so nothing is ever written outside the copy (issue #28).
struct GcsCopyPath {
  fs::path rel;
  bool folder = false;
};
GcsCopyPath gcs_copy_path(const std::string& object, const std::string& dir_prefix,
                          const std::string& bucket);

// Where the copies live: STATE/cache/data/.
fs::path gcs_cache_root(const fs::path& state_dir);

}  // namespace kinetic
