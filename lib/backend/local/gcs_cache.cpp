#include "backend/local/gcs_cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/error.h"
#include "core/strings.h"
#include "pack/sha256.h"

namespace kinetic {

namespace {

// OBJECT's path under the copy, or empty for a folder placeholder ("a/b/").
fs::path relative_path(const std::string& object, const std::string& dir_prefix,
                       const std::string& bucket) {
  const std::string rel = object.substr(dir_prefix.size());
  for (const auto& part : split(rel, '/'))
    if (part == ".." || part == ".")
      throw Error(Errc::usage, "gs://" + bucket + "/" + object +
                                   " cannot be copied to this machine (its name climbs out of "
                                   "the folder); rename it, or run on a gke context");
  if (rel.empty() || rel.back() == '/') return {};
  return fs::path(rel).lexically_normal();
}

}  // namespace

fs::path gcs_cache_root(const fs::path& state_dir) {
  return state_dir / "cache" / "data";
}

GcsCacheResult fetch_gcs_prefix(gcp::StorageClient& storage, const fs::path& state_dir,
                                const std::string& bucket, const std::string& prefix,
                                const std::function<void(const GcsCacheResult&)>& before_download) {
  const std::string dir_prefix = prefix.empty() ? "" : prefix + "/";
  gcp::ListResult listing = storage.list(bucket, dir_prefix);
  auto& objects = listing.objects;
  std::sort(objects.begin(), objects.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  const std::string uri = "gs://" + bucket + "/" + dir_prefix;
  if (objects.empty())
    throw Error(Errc::not_found, uri +
                                     " holds no objects, so there is nothing to mount; check it "
                                     "with `gcloud storage ls " +
                                     uri + "`");

  GcsCacheResult result;
  std::string key = uri + "\n";
  for (const auto& o : objects) {
    key += o.name + "\t" + std::to_string(o.generation) + "\t" + o.crc32c + "\n";
    result.bytes += o.size;
  }
  result.objects = objects.size();
  result.dir = gcs_cache_root(state_dir) / sha256_hex(key);
  std::error_code ec;
  if (fs::is_directory(result.dir, ec)) {
    ::utimensat(AT_FDCWD, result.dir.c_str(), nullptr, 0);  // "last used", for `cleanup`
    return result;
  }

  if (before_download) before_download(result);
  // Downloaded aside and renamed into place whole: a run never sees half a copy, and two runs
  // fetching the same listing at once each end with the same directory.
  make_dirs(state_dir / "tmp");
  TempDir temp(state_dir / "tmp", "data-");
  const fs::path copy = temp / "copy";
  make_dirs(copy, 0755);
  for (const auto& o : objects) {
    const fs::path rel = relative_path(o.name, dir_prefix, bucket);
    if (rel.empty()) {
      make_dirs(copy / o.name.substr(dir_prefix.size()), 0755);
      continue;
    }
    const fs::path file = copy / rel;
    make_dirs(file.parent_path(), 0755);
    storage.download_file(bucket, o.name, file);
    // Read-only, as the job sees a gs:// mount on GKE without :rw.
    ::chmod(file.c_str(), 0444);
  }
  make_dirs(result.dir.parent_path(), 0755);
  fs::rename(copy, result.dir, ec);
  if (ec && !fs::is_directory(result.dir))
    throw Error(Errc::internal, "cannot keep the copy of " + uri + " in " + result.dir.string() +
                                    ": " + ec.message());
  result.downloaded = !ec;
  return result;
}

}  // namespace kinetic
