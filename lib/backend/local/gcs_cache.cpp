#include "backend/local/gcs_cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/error.h"
#include "core/strings.h"
#include "pack/sha256.h"

namespace kinetic {

GcsCopyPath gcs_copy_path(const std::string& object, const std::string& dir_prefix,
                          const std::string& bucket) {
  auto refuse = [&](const std::string& why) {
    throw Error(Errc::usage, "gs://" + bucket + "/" + object +
                                 " cannot be copied to this machine (" + why +
                                 "); rename it, or run on a gke context");
  };
  if (object.compare(0, dir_prefix.size(), dir_prefix) != 0) refuse("it is not under the prefix");
  std::string rel = object.substr(dir_prefix.size());
  GcsCopyPath out;
  if (rel.empty()) return out;  // the prefix's own placeholder
  out.folder = rel.back() == '/';
  if (out.folder) rel.pop_back();
  for (const auto& part : split(rel, '/')) {
    if (part.empty()) refuse("its name has an empty path component, '//' or a leading '/'");
    if (part == ".." || part == ".") refuse("its name climbs out of the folder");
  }
  out.rel = fs::path(rel);
  return out;
}

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

  // Every name checked before anything is downloaded: a bad one leaves nothing behind.
  std::vector<GcsCopyPath> paths;
  for (const auto& o : objects) paths.push_back(gcs_copy_path(o.name, dir_prefix, bucket));

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
  for (size_t i = 0; i < objects.size(); ++i) {
    const auto& o = objects[i];
    const fs::path file = (copy / paths[i].rel).lexically_normal();
    // Defence in depth: whatever the name, the file is inside the copy.
    const fs::path inside = file.lexically_relative(copy);
    if (inside.empty() || *inside.begin() == "..")
      throw Error(Errc::internal,
                  "gs://" + bucket + "/" + o.name + " would land outside " + copy.string());
    if (paths[i].folder || paths[i].rel.empty()) {
      make_dirs(file, 0755);
      continue;
    }
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
