// A faithful in-memory fake of the Cloud Storage JSON API (see docs/gcp-api.md
// §5) served on 127.0.0.1 by cpp-httplib. It is exercised by Google's own Node client
// (tests/node/gcs_roundtrip.mjs) so that our client is tested against the real protocol shape:
// string int64s, base64 big-endian crc32c, 308 + Range resumable sessions, GCS error bodies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinetic::fakes {

class FakeGcs {
 public:
  // Starts serving on host:port (port 0 = a random free port) in a background thread.
  explicit FakeGcs(std::string host = "127.0.0.1", int port = 0);
  ~FakeGcs();  // stops the server and joins the thread
  FakeGcs(const FakeGcs&) = delete;
  FakeGcs& operator=(const FakeGcs&) = delete;

  int port() const;
  std::string url() const;  // "http://127.0.0.1:PORT" (no trailing slash)

  // ---- deterministic fault injection --------------------------------------------------------
  // The next `n` requests whose "METHOD /path" starts with `route_prefix` (empty = any request)
  // answer `status` with a GCS error body; `retry_after_seconds >= 0` adds a Retry-After header.
  void fail_next(int n, int status, int retry_after_seconds = -1, std::string route_prefix = {});
  // From now on each bucket takes at most WRITES_PER_SECOND writes a second (a token bucket
  // holding one second's worth; 0 = no quota): a write past it (an upload, a resumable session's
  // start, a patch, a delete, an IAM policy write) answers GCS's 429 rateLimitExceeded, without
  // Retry-After, as GCS sends none. Refusals count as "rate_limited".
  void set_write_quota(double writes_per_second);
  // The next N writes (as counted by the quota) wait for one another and then go on together: a
  // burst of N clients' writes, ordered (fake_quota.h WriteGathering).
  void gather_next_writes(int n);
  // The next upload request carrying a body (media, multipart or a resumable PUT) has its
  // connection shut down after `bytes` body bytes were read, without any answer. For a resumable
  // chunk the largest multiple of 256 KiB of what was read is persisted (as GCS may do).
  void drop_connection_after(std::size_t bytes);
  // The next non-final resumable chunk has only its first `bytes` (a multiple of 256 KiB)
  // persisted, and its 308's Range says so, as GCS documents it may do.
  void persist_at_most_next(std::size_t bytes);
  // The next object mutation (upload finalisation, delete, patch) or bucket setIamPolicy answers
  // 412 conditionNotMet regardless of the real state.
  void fail_precondition_next();
  // A concurrent writer: right after the next getIamPolicy of BUCKET is answered, MEMBER is added
  // to ROLE (bumping the policy's etag), so a read-modify-write based on that read is stale.
  void change_iam_policy_after_next_read(const std::string& bucket, const std::string& role,
                                         const std::string& member);
  // The next N media downloads serve one flipped byte while keeping the true x-goog-hash, so a
  // validating client must notice. (Also: POST /_fake/corrupt-next-download.)
  void corrupt_next_download(int n = 1);
  // A race ordered: the next request whose "METHOD /path" starts with ROUTE_PREFIX runs ACTION
  // once its answer is ready and before it is sent (outside the fake's lock: ACTION may call this
  // object's state methods), so the client sees the state from before ACTION and its next request
  // the state after.
  void after_next(std::string route_prefix, std::function<void()> action);
  // Clears every pending fault.
  void clear_faults();
  // Faults set up but not yet triggered (a test checks its fault really hit).
  int pending_faults() const;

  // ---- counters -----------------------------------------------------------------------------
  // Route names: buckets.insert buckets.get buckets.list buckets.patch buckets.delete
  // buckets.getIamPolicy buckets.setIamPolicy objects.get objects.download objects.list
  // objects.delete objects.patch objects.compose upload.media upload.multipart
  // upload.resumable.start upload.resumable.put upload.resumable.cancel not_found;
  // "injected_failures" and "dropped_connections" count faults; "resent_bytes" counts chunk bytes
  // at offsets a session had already persisted (accepted and ignored, as GCS does);
  // "with_authorization" counts requests that carried an Authorization header. The same map is
  // served as JSON at GET /_fake/counters (for out-of-process clients).
  int request_count(const std::string& route) const;
  int total_requests() const;
  std::map<std::string, int> request_counts() const;
  void reset_counters();

  // ---- direct state access (seeding and assertions) -----------------------------------------
  // The bucket's projectNumber derives from PROJECT (digits are kept as they are; an id hashes to
  // 12 digits, as the fake GCP control plane numbers projects); its IAM policy is the default one
  // GCS gives a new bucket of PROJECT.
  void create_bucket(const std::string& name, const std::string& project = "test-project");
  bool has_bucket(const std::string& name) const;
  std::optional<nlohmann::json> bucket_resource(const std::string& name) const;
  // The bucket's IAM policy as getIamPolicy answers it ({kind, resourceId, version, etag,
  // bindings}); nullopt for a missing bucket.
  std::optional<nlohmann::json> bucket_iam_policy(const std::string& bucket) const;
  // Stores an object (creating the bucket if needed); returns the object resource.
  nlohmann::json put_object(const std::string& bucket, const std::string& name, std::string data,
                            const std::string& content_type = "application/octet-stream");
  // objects.compose as the API does it: DEST becomes the concatenation of SOURCES (names in
  // BUCKET), its resource's fields from DESTINATION (contentType, metadata, ...).
  nlohmann::json compose_objects(const std::string& bucket, const std::string& dest,
                                 const std::vector<std::string>& sources,
                                 const nlohmann::json& destination = nlohmann::json::object());
  bool delete_object(const std::string& bucket, const std::string& name);
  std::optional<std::string> object_data(const std::string& bucket, const std::string& name) const;
  // Names of the objects under PREFIX, in name order.
  std::vector<std::string> object_names(const std::string& bucket, const std::string& prefix) const;
  std::optional<nlohmann::json> object_resource(const std::string& bucket,
                                                const std::string& name) const;
  std::size_t open_resumable_sessions() const;
  // One request to a resumable session (a chunk, a "bytes */N" status query, or a chunk whose
  // connection was dropped), as the fake received it.
  struct ResumableRequest {
    std::string content_range;           // the header as sent, "" when absent
    std::uint64_t persisted_before = 0;  // the session's persisted size when it arrived
    std::uint64_t body_bytes = 0;        // bytes read (up to the drop for a dropped one)
    bool dropped = false;                // drop_connection_after cut it
  };
  // Every request to a resumable session since the start or reset_counters(), in arrival order.
  std::vector<ResumableRequest> resumable_requests() const;

  // ---- helpers (exposed for tests) ----------------------------------------------------------
  static std::uint32_t crc32c(std::string_view data);
  static std::string base64(std::string_view bytes);
  static std::string crc32c_base64(std::string_view data);  // big-endian 4 bytes, base64
  static std::string md5_base64(std::string_view data);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kinetic::fakes
