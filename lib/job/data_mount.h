// `run --data SRC:DST[:ro|:rw]`: data that appears in the job at DST without being part of its
// context (README "Data"). Parsing and the checks that need no file are pure, so `run` refuses
// a bad flag before anything is read; the spec carries the mounts (docs/schemas.md).
//
// DST is either relative, to the job's working directory (the same place on every backend), or
// absolute (GKE mounts there; the local backend only when DST is SRC itself, since the job runs
// as you and cannot make /data). SRC is a local directory or gs://BUCKET[/PREFIX].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinetic {

// Where a pod mounts a gs:// source whose DST is relative (the pod's working directory is made
// when it starts, after the volumes): DST under this root, which the bootstrap links DST to.
inline constexpr const char* kDataMountRoot = "/mnt/kinetic-data";

struct DataMount {
  std::string source;     // "gs://BUCKET[/PREFIX]" (no trailing '/'), or a local directory
  std::string target;     // normalized DST: relative ('/'-separated, no "..") or absolute
  bool writable = false;  // :rw (gs:// only)
  // Where the runner finds the data, set when it is staged: a local directory's archive in the
  // jobs bucket (gke), or a local path (the local backend: the directory itself, or the cache
  // a gs:// source was downloaded into). Empty for a gs:// mount on gke (the CSI driver).
  std::string staged_uri;
  std::string staged_sha256;  // of the archive at staged_uri, when it is one

  bool is_gcs() const;
  bool absolute_target() const { return !target.empty() && target.front() == '/'; }
  std::string bucket() const;  // gs:// only
  std::string prefix() const;  // gs:// only: "" for the whole bucket, else without a '/' at the end
};

// Parses one --data value. Throws Error(Errc::usage), one line naming the value and how to fix
// it, for a missing ':', an empty side, an unknown mode, a malformed gs:// URI or bucket name,
// a DST that climbs out (".."), is the working directory itself, or is a system directory.
// A local SRC is kept as given (resolve it against the working directory later).
DataMount parse_data_flag(std::string_view value);

// Checks the mounts together: no DST twice, none inside another. Throws Error(Errc::usage).
void check_data_mounts(const std::vector<DataMount>& mounts);

// The mount's path on the job's filesystem: TARGET under WORKDIR when relative.
std::string data_mount_path(const DataMount& mount, const std::string& workdir);

// Where a pod mounts a gs:// MOUNT: DST when absolute, else DST under kDataMountRoot.
std::string csi_mount_path(const DataMount& mount);

nlohmann::json to_json(const DataMount& mount);
DataMount data_mount_from_json(const nlohmann::json& j);

}  // namespace kinetic
