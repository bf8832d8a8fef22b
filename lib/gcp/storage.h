// The Cloud Storage JSON API client: buckets, objects, resumable uploads that survive a dropped
// connection, streamed downloads that resume with Range, checksums verified both ways.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fs.h"
#include "http/transport.h"

namespace kinetic::gcp {

struct ObjectInfo {
  std::string bucket;
  std::string name;
  int64_t generation = 0;
  uint64_t size = 0;
  std::string content_type;
  std::string crc32c;  // base64, as GCS reports it
  std::string md5;     // base64; empty for composite objects
  std::string updated;
  std::string custom_time;                      // RFC 3339; empty when unset
  std::map<std::string, std::string> metadata;  // the object's custom metadata
};

// A Delete rule of a bucket's lifecycle: the objects under PREFIXES go DAYS after they were
// created or, with SINCE_CUSTOM_TIME, DAYS after their customTime (an object without one is never
// deleted by such a rule). kinetic sets a context's customTime each time a run uses it.
struct LifecycleRule {
  int days = 0;
  bool since_custom_time = false;
  std::vector<std::string> prefixes;
  bool operator==(const LifecycleRule&) const = default;
};

struct BucketInfo {
  std::string name;
  std::string location;
  std::vector<LifecycleRule> lifecycle;  // its Delete rules, as kinetic reads them
  std::string project_number;            // the owning project's number (digits); may be empty
};

struct ListResult {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> prefixes;  // with a delimiter: the "directories"
};

// Progress of a transfer: bytes done of TOTAL (0 when unknown).
using TransferProgress = std::function<void(uint64_t done, uint64_t total)>;

struct UploadOptions {
  std::string content_type = "application/octet-stream";
  // 0: only if the object does not exist yet. Unset: unconditional.
  std::optional<int64_t> if_generation_match;
  std::string custom_time;  // RFC 3339; empty: none
  // Objects up to this size go in one multipart request; larger ones resumable.
  uint64_t single_request_limit = 8ull << 20;
  // Resumable chunk size; a multiple of 256 KiB (rounded down, at least 256 KiB). Chunks are
  // streamed from the file, so a large one costs no memory: each chunk is one request on a new
  // connection, and fewer of them save round trips.
  uint64_t chunk_size = 128ull << 20;
  TransferProgress progress;
};

class StorageClient {
 public:
  // TRANSPORT should be authed and retried (a cloud client stack); ENDPOINT is the API root
  // (gcp::api_endpoint("storage", env)).
  StorageClient(http::Transport& transport, std::string endpoint);

  std::optional<BucketInfo> get_bucket(const std::string& bucket);
  // Creates BUCKET in PROJECT at LOCATION with RULES as its lifecycle. An existing bucket we can
  // read is returned as it is (idempotent `up`; ensure_lifecycle reconciles its rules); one owned
  // by someone else is an error saying to pick another name.
  BucketInfo ensure_bucket(const std::string& project, const std::string& bucket,
                           const std::string& location, const std::vector<LifecycleRule>& rules);
  // Gives BUCKET exactly RULES as its lifecycle when it has others; true when it changed them.
  bool ensure_lifecycle(const std::string& bucket, const std::vector<LifecycleRule>& rules);
  // Sets OBJECT's customTime to now: "last used", which a since_custom_time rule counts from.
  void touch(const std::string& bucket, const std::string& object);
  // Deletes an empty bucket; false when it did not exist.
  bool delete_bucket(const std::string& bucket);

  // The bucket's IAM policy (buckets.getIamPolicy, requested as version 3): {kind:
  // "storage#policy", resourceId, version, etag, bindings: [{role, members[], condition?}]}.
  // A missing bucket is an Errc::not_found error.
  nlohmann::json get_bucket_iam_policy(const std::string& bucket);
  // Grants ROLE on BUCKET to MEMBER ("principal://...", "serviceAccount:...", ...) by a
  // read-modify-write of the policy conditioned on its etag; a write that loses a race with
  // another change (412) is redone on a fresh read, a few times. Idempotent: false (and no
  // write) when MEMBER already holds ROLE unconditionally, true when the policy was changed.
  bool add_bucket_iam_member(const std::string& bucket, const std::string& role,
                             const std::string& member);
  // Removes every member for which WHICH holds from BUCKET's unconditional bindings (a binding
  // left empty goes), by the same read-modify-write. Returns the (role, member) pairs removed;
  // none: nothing was written. A missing bucket is an Errc::not_found error.
  std::vector<std::pair<std::string, std::string>> remove_bucket_iam_members(
      const std::string& bucket, const std::function<bool(const std::string& member)>& which);

  ObjectInfo upload_file(const std::string& bucket, const std::string& name, const fs::path& file,
                         const UploadOptions& options = {});
  // Bytes [FIRST, FIRST + LENGTH) of FILE as the object NAME, through a resumable session (a
  // component of a parallel composite upload).
  ObjectInfo upload_file_range(const std::string& bucket, const std::string& name,
                               const fs::path& file, uint64_t first, uint64_t length,
                               const UploadOptions& options = {});
  ObjectInfo upload_string(const std::string& bucket, const std::string& name,
                           const std::string& data, const UploadOptions& options = {});

  // objects.compose: SOURCES (each pinned to its generation) concatenated, in order, as NAME,
  // with OPTIONS' content type, customTime and ifGenerationMatch. At most 32 sources.
  ObjectInfo compose(const std::string& bucket, const std::string& name,
                     const std::vector<ObjectInfo>& sources, const UploadOptions& options = {});

  std::optional<ObjectInfo> get_object(const std::string& bucket, const std::string& name);
  // Streams the object to FILE (via a temp file renamed at the end), resuming with Range after a
  // dropped connection and verifying its CRC32C. Memory stays flat in object size.
  ObjectInfo download_file(const std::string& bucket, const std::string& name, const fs::path& file,
                           const TransferProgress& progress = nullptr);
  std::string download_string(const std::string& bucket, const std::string& name);
  // Bytes [FIRST, FIRST + LENGTH) of the object's generation GENERATION (0: the live one), fewer
  // at its end; nullopt when that generation is gone (404). A range has no checksum of its own
  // to verify: a reader that needs one downloads the whole object.
  std::optional<std::string> download_range(const std::string& bucket, const std::string& name,
                                            int64_t generation, uint64_t first, uint64_t length);

  // Every object under PREFIX (all pages); with DELIMITER, the common prefixes too.
  // With MATCH_GLOB, only the objects whose names match it (GCS matchGlob: '*' within a
  // '/'-separated segment, '**' across them).
  ListResult list(const std::string& bucket, const std::string& prefix = "",
                  const std::string& delimiter = "", const std::string& match_glob = "");
  // False when the object did not exist.
  bool delete_object(const std::string& bucket, const std::string& name);

 private:
  // One read-modify-write of BUCKET's IAM policy conditioned on its etag: EDIT changes the
  // bindings and says whether anything changed (false: nothing is written, and this returns
  // false); a write that loses a race (412) is redone on a fresh read, a few times.
  bool update_bucket_iam_policy(const std::string& bucket, const std::string& what,
                                const std::function<bool(nlohmann::json& bindings)>& edit);
  ObjectInfo upload_single(const std::string& bucket, const std::string& name,
                           const std::string& data, const UploadOptions& options, uint32_t crc);
  ObjectInfo upload_resumable(const std::string& bucket, const std::string& name,
                              const fs::path& file, uint64_t first, uint64_t size,
                              const UploadOptions& options);

  http::Transport& transport_;
  std::string endpoint_;
};

// Percent-encodes an object name for a URL path segment (everything but unreserved characters).
std::string encode_object_name(const std::string& name);

}  // namespace kinetic::gcp
