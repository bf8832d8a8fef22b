#include "job/data_mount.h"

#include <filesystem>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/strings.h"

namespace kinetic {

namespace {

constexpr std::string_view kGs = "gs://";

[[noreturn]] void bad(std::string_view value, const std::string& why) {
  throw Error(Errc::usage, "--data '" + std::string(value) + "': " + why);
}

bool is_alnum_lower(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// Cloud Storage's naming rules: 3-63 characters (222 with dots, 63 per dot-separated part) of
// lowercase letters, digits, '-', '_' and '.', starting and ending with a letter or digit.
void check_bucket(std::string_view value, const std::string& bucket) {
  if (bucket.empty()) bad(value, "no bucket named; expected gs://BUCKET[/PATH]:DST");
  if (to_lower(bucket) != bucket)
    bad(value, "bucket names are lowercase (did you mean gs://" + to_lower(bucket) + "?)");
  bool ok = bucket.size() >= 3 && bucket.size() <= 222 && is_alnum_lower(bucket.front()) &&
            is_alnum_lower(bucket.back());
  for (char c : bucket) ok = ok && (is_alnum_lower(c) || c == '-' || c == '_' || c == '.');
  for (const auto& part : split(bucket, '.')) ok = ok && !part.empty() && part.size() <= 63;
  if (!ok)
    bad(value, "'" + bucket +
                   "' is not a bucket name (3-63 lowercase letters, digits, '-', '_' or '.', "
                   "starting and ending with a letter or digit)");
}

// Where a mount would hide what the job itself needs to run.
bool is_system_path(const std::string& p) {
  for (const char* exact : {"/", "/tmp", "/var", "/home", "/root", "/opt", "/mnt", "/srv"})
    if (p == exact) return true;
  for (const char* tree :
       {"/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64",
        "/boot", "/run", "/var/run", "/var/lib", kDataMountRoot})
    if (p == tree || starts_with(p, std::string(tree) + "/")) return true;
  return false;
}

std::string normalize_target(std::string_view value, const std::string& dst) {
  if (dst.empty()) bad(value, "no DST; expected SRC:DST, e.g. --data ./dataset:data");
  if (dst.front() == '~')
    bad(value,
        "'~' is not expanded in the job; give DST relative to the job's working "
        "directory (e.g. data) or absolute (e.g. /data)");
  std::string norm = std::filesystem::path(dst).lexically_normal().generic_string();
  while (norm.size() > 1 && norm.back() == '/') norm.pop_back();
  const bool absolute = norm.front() == '/';
  if (!absolute && (norm == "." || norm.empty()))
    bad(value, "DST is the job's working directory itself; name a directory in it, e.g. data");
  if (!absolute && (norm == ".." || starts_with(norm, "../")))
    bad(value, "DST '" + dst +
                   "' climbs out of the job's working directory; give a path inside it (e.g. "
                   "data) or an absolute one (e.g. /data)");
  if (absolute && is_system_path(norm))
    bad(value,
        "DST '" + norm + "' is a system directory the job needs; pick another, e.g. /data or data");
  return norm;
}

}  // namespace

bool DataMount::is_gcs() const {
  return starts_with(source, kGs);
}

std::string DataMount::bucket() const {
  const std::string rest = source.substr(kGs.size());
  return rest.substr(0, rest.find('/'));
}

std::string DataMount::prefix() const {
  const std::string rest = source.substr(kGs.size());
  const size_t slash = rest.find('/');
  return slash == std::string::npos ? "" : rest.substr(slash + 1);
}

DataMount parse_data_flag(std::string_view value) {
  DataMount m;
  std::string v(value);
  if (ends_with(v, ":ro") || ends_with(v, ":rw")) {
    m.writable = ends_with(v, ":rw");
    v.resize(v.size() - 3);
  }
  // Another scheme, or gs:// mistyped.
  const size_t scheme_end = v.find("://");
  const size_t first_colon = v.find(':');
  if (scheme_end != std::string::npos && scheme_end == first_colon && !starts_with(v, kGs))
    bad(value,
        "only gs://BUCKET[/PATH] and local directories can be mounted; copy the data to "
        "Cloud Storage (gcloud storage cp -r) or to this machine first");
  if ((starts_with(v, "gs:/") || starts_with(v, "gs:")) && !starts_with(v, kGs)) {
    const size_t start = v.find_first_not_of("/", 3);
    bad(value,
        "did you mean gs://" + v.substr(start == std::string::npos ? v.size() : start) + "?");
  }
  const bool gcs = starts_with(v, kGs);
  const size_t colon = gcs ? v.find(':', kGs.size()) : v.rfind(':');
  if (colon == std::string::npos)
    bad(value,
        "expected SRC:DST[:ro|:rw], e.g. --data ./dataset:data or --data "
        "gs://BUCKET/PATH:/data");
  std::string src = v.substr(0, colon);
  std::string dst = v.substr(colon + 1);
  // SRC:DST:MODE with a mode kinetic does not know ("./d:data:r", "gs://b:/data:wr").
  const size_t last = dst.rfind(':');
  const std::string maybe_mode = last != std::string::npos ? dst.substr(last + 1) : dst;
  const bool extra_colon =
      last != std::string::npos || (!gcs && src.find(':') != std::string::npos);
  if (extra_colon && maybe_mode.size() <= 4 &&
      maybe_mode.find_first_of("/.") == std::string::npos) {
    auto near = closest_matches(to_lower(maybe_mode), {"ro", "rw"});
    const std::string hint = near.empty() ? "" : " (did you mean :" + near.front() + "?)";
    bad(value, "unknown mode '" + maybe_mode + "'; the mode is :ro (the default) or :rw" + hint);
  }
  if (src.empty()) bad(value, "no SRC; expected SRC:DST, e.g. --data ./dataset:data");
  if (gcs) {
    std::string rest = src.substr(kGs.size());
    const size_t slash = rest.find('/');
    const std::string bucket = rest.substr(0, slash);
    check_bucket(value, bucket);
    std::string prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    // The prefix travels in the CSI driver's comma-separated mount options.
    if (prefix.find(',') != std::string::npos)
      bad(value, "a path with ',' cannot be mounted; move the data to a path without one");
    m.source = std::string(kGs) + bucket + (prefix.empty() ? "" : "/" + prefix);
  } else {
    if (m.writable)
      bad(value,
          ":rw needs a gs:// source: a local directory reaches a GKE job as a copy, and "
          "changes to it would not come back; write results to $KINETIC_OUTPUT_DIR");
    m.source = src;
  }
  m.target = normalize_target(value, dst);
  return m;
}

void check_data_mounts(const std::vector<DataMount>& mounts) {
  for (size_t i = 0; i < mounts.size(); ++i) {
    for (size_t j = 0; j < mounts.size(); ++j) {
      if (i == j) continue;
      const std::string& a = mounts[i].target;
      const std::string& b = mounts[j].target;
      if (a == b && i < j)
        throw Error(Errc::usage, "--data: " + mounts[i].source + " and " + mounts[j].source +
                                     " both mount at " + a + "; give each its own DST");
      if (starts_with(a, b + "/"))
        throw Error(Errc::usage, "--data: DST " + a + " (" + mounts[i].source + ") is inside DST " +
                                     b + " (" + mounts[j].source +
                                     "); mount them side by side, e.g. " + b + "-2");
    }
  }
}

std::string data_mount_path(const DataMount& mount, const std::string& workdir) {
  if (mount.absolute_target()) return mount.target;
  if (workdir.empty()) return mount.target;
  return workdir + (workdir.back() == '/' ? "" : "/") + mount.target;
}

std::string csi_mount_path(const DataMount& mount) {
  if (mount.absolute_target()) return mount.target;
  std::string path = kDataMountRoot;
  path += '/';
  path += mount.target;
  return path;
}

namespace {

constexpr TextFields<DataMount, 4> kDataMountText = {
    {{"source", &DataMount::source},
     {"target", &DataMount::target},
     {"staged_uri", &DataMount::staged_uri},
     {"staged_sha256", &DataMount::staged_sha256}}};

}  // namespace

nlohmann::json to_json(const DataMount& m) {
  nlohmann::json j = {{"mode", m.writable ? "rw" : "ro"}};
  put_text_fields(j, m, kDataMountText);
  return j;
}

DataMount data_mount_from_json(const nlohmann::json& j) {
  DataMount m;
  get_text_fields(j, m, kDataMountText);
  m.writable = j.value("mode", "ro") == "rw";
  return m;
}

}  // namespace kinetic
