#include "gcp/storage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/checksum.h"
#include "core/duration.h"
#include "core/strings.h"
#include "gcp/google_error.h"
#include "gcp/json_fields.h"
#include "http/retry.h"

namespace kinetic::gcp {

namespace {

constexpr uint64_t kQuantum = 256 * 1024;  // resumable chunks are multiples of this
constexpr int kMaxStalls = 8;              // consecutive failures without progress
constexpr int kCorruptTries = 3;  // downloads whose checksum did not match, before giving up
constexpr int kIamAttempts = 5;   // read-modify-write rounds lost to concurrent changes

[[noreturn]] void fail(const http::Response& r, const std::string& what) {
  throw google_error(r.status, r.body, what);
}

ObjectInfo object_from_json(const nlohmann::json& j) {
  ObjectInfo o;
  o.bucket = str(j, "bucket");
  o.name = str(j, "name");
  o.generation = as_int64(member(j, "generation"));
  o.size = static_cast<uint64_t>(std::max<int64_t>(0, as_int64(member(j, "size"))));
  o.content_type = str(j, "contentType");
  o.crc32c = str(j, "crc32c");
  o.md5 = str(j, "md5Hash");
  o.updated = str(j, "updated");
  o.custom_time = str(j, "customTime");
  if (const auto m = j.find("metadata"); m != j.end() && m->is_object())
    for (const auto& [key, value] : m->items())
      if (value.is_string()) o.metadata[key] = value.get<std::string>();
  return o;
}

namespace {

nlohmann::json lifecycle_json(const std::vector<LifecycleRule>& rules) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rules) {
    nlohmann::json condition = {{"matchesPrefix", r.prefixes}};
    condition[r.since_custom_time ? "daysSinceCustomTime" : "age"] = r.days;
    out.push_back({{"action", {{"type", "Delete"}}}, {"condition", condition}});
  }
  return {{"rule", out}};
}

std::vector<LifecycleRule> lifecycle_rules(const nlohmann::json& bucket) {
  std::vector<LifecycleRule> rules;
  if (!bucket.contains("lifecycle") || !bucket["lifecycle"].contains("rule")) return rules;
  for (const auto& rule : bucket["lifecycle"]["rule"]) {
    if (rule.value("action", nlohmann::json::object()).value("type", "") != "Delete") continue;
    const nlohmann::json c = rule.value("condition", nlohmann::json::object());
    LifecycleRule r;
    r.since_custom_time = c.contains("daysSinceCustomTime");
    r.days = c.value(r.since_custom_time ? "daysSinceCustomTime" : "age", 0);
    for (const auto& p : c.value("matchesPrefix", nlohmann::json::array()))
      if (p.is_string()) r.prefixes.push_back(p.get<std::string>());
    rules.push_back(r);
  }
  return rules;
}

}  // namespace

nlohmann::json parse_json(const http::Response& r, const std::string& what) {
  return gcp::parse_json(r, what, "Cloud Storage");
}

// The bucket resource's projectNumber (a uint64 sent as a string; a number is tolerated).
std::string project_number_from(const nlohmann::json& j) {
  if (!j.contains("projectNumber")) return "";
  const auto& v = j["projectNumber"];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return "";
}

std::string gs(const std::string& bucket, const std::string& name) {
  return "gs://" + bucket + "/" + name;
}

// "bytes=0-N" → N+1; no header → 0.
uint64_t persisted_from_range(const std::optional<std::string>& range) {
  if (!range) return 0;
  auto dash = range->rfind('-');
  if (dash == std::string::npos) return 0;
  return std::stoull(range->substr(dash + 1)) + 1;
}

// The crc32c in "x-goog-hash: crc32c=AAAAAA==,md5=..." (several headers may be folded).
std::string crc_from_hash_header(const std::optional<std::string>& h) {
  if (!h) return "";
  for (const auto& part : split(*h, ',')) {
    std::string_view p = trim(part);
    if (starts_with(p, "crc32c=")) return std::string(p.substr(7));
  }
  return "";
}

}  // namespace

std::string encode_object_name(const std::string& name) {
  return percent_encode(name);
}

StorageClient::StorageClient(http::Transport& transport, std::string endpoint)
    : transport_(transport), endpoint_(std::move(endpoint)) {}

std::optional<BucketInfo> StorageClient::get_bucket(const std::string& bucket) {
  http::Request req;
  req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket);
  auto r = transport_.send(req);
  if (r.status == 404) return std::nullopt;
  if (!ok(r.status)) fail(r, "reading bucket gs://" + bucket);
  auto j = parse_json(r, "reading bucket gs://" + bucket);
  BucketInfo b;
  b.name = j.value("name", bucket);
  b.location = j.value("location", "");
  b.project_number = project_number_from(j);
  b.lifecycle = lifecycle_rules(j);
  return b;
}

BucketInfo StorageClient::ensure_bucket(const std::string& project, const std::string& bucket,
                                        const std::string& location,
                                        const std::vector<LifecycleRule>& rules) {
  if (auto existing = get_bucket(bucket)) return *existing;
  nlohmann::json body = {{"name", bucket},
                         {"location", location},
                         {"iamConfiguration", {{"uniformBucketLevelAccess", {{"enabled", true}}}}},
                         {"lifecycle", lifecycle_json(rules)}};
  http::Request req;
  req.method = "POST";
  req.url = endpoint_ + "/storage/v1/b?project=" + encode_object_name(project);
  req.headers = {{"Content-Type", "application/json"}};
  req.body = body.dump();
  // Replaying a create is safe: a 409 after a replay is recognised below by reading the bucket.
  auto r = transport_.send(req);
  if (r.status == 409) {
    if (auto mine = get_bucket(bucket)) return *mine;
    throw Error(Errc::api, "bucket name gs://" + bucket +
                               " is taken by another project; choose another cluster name or "
                               "project");
  }
  if (!ok(r.status)) fail(r, "creating bucket gs://" + bucket);
  BucketInfo b;
  b.name = bucket;
  b.location = location;
  b.lifecycle = rules;
  auto created = nlohmann::json::parse(r.body, nullptr, false);
  if (!created.is_discarded()) {
    b.location = created.value("location", location);
    b.project_number = project_number_from(created);
  }
  return b;
}

bool StorageClient::ensure_lifecycle(const std::string& bucket,
                                     const std::vector<LifecycleRule>& rules) {
  auto current = get_bucket(bucket);
  if (!current) throw Error(Errc::not_found, "bucket gs://" + bucket + " not found");
  if (current->lifecycle == rules) return false;
  http::Request req;
  req.method = "PATCH";
  req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket);
  req.headers = {{"Content-Type", "application/json"}};
  req.body = nlohmann::json({{"lifecycle", lifecycle_json(rules)}}).dump();
  req.idempotent = true;  // the same rules twice are the same rules
  auto r = transport_.send(req);
  if (!ok(r.status)) fail(r, "setting the lifecycle of gs://" + bucket);
  return true;
}

void StorageClient::touch(const std::string& bucket, const std::string& object) {
  http::Request req;
  req.method = "PATCH";
  req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/o/" +
            encode_object_name(object);
  req.headers = {{"Content-Type", "application/json"}};
  req.body = nlohmann::json({{"customTime", rfc3339(now_unix())}}).dump();
  req.idempotent = true;
  auto r = transport_.send(req);
  if (!ok(r.status)) fail(r, "touching gs://" + bucket + "/" + object);
}

bool StorageClient::delete_bucket(const std::string& bucket) {
  http::Request req;
  req.method = "DELETE";
  req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket);
  auto r = transport_.send(req);
  if (r.status == 404) return false;
  if (!ok(r.status)) fail(r, "deleting bucket gs://" + bucket);
  return true;
}

namespace {

nlohmann::json read_iam_policy(http::Transport& transport, const std::string& endpoint,
                               const std::string& bucket, const std::string& what) {
  http::Request req;
  // Version 3, so that a policy with conditional bindings can be read (and written back) whole.
  req.url = endpoint + "/storage/v1/b/" + encode_object_name(bucket) +
            "/iam?optionsRequestedPolicyVersion=3";
  auto r = transport.send(req);
  if (!ok(r.status)) fail(r, what);
  auto j = parse_json(r, what);
  if (!j.is_object()) throw Error(Errc::api, what + ": the policy is not a JSON object");
  return j;
}

}  // namespace

nlohmann::json StorageClient::get_bucket_iam_policy(const std::string& bucket) {
  return read_iam_policy(transport_, endpoint_, bucket, "reading the IAM policy of gs://" + bucket);
}

bool StorageClient::update_bucket_iam_policy(
    const std::string& bucket, const std::string& what,
    const std::function<bool(nlohmann::json& bindings)>& edit) {
  for (int attempt = 1;; ++attempt) {
    nlohmann::json policy = read_iam_policy(transport_, endpoint_, bucket, what);
    auto& bindings = policy["bindings"];
    if (!bindings.is_array()) bindings = nlohmann::json::array();
    if (!edit(bindings)) return false;
    bool conditional = false;
    for (const auto& b : bindings) conditional = conditional || b.contains("condition");
    nlohmann::json body = {{"bindings", bindings}};
    if (policy.contains("etag")) body["etag"] = policy["etag"];
    // Version 3 is required when writing conditional bindings; 1 otherwise, as read.
    body["version"] = conditional ? 3 : policy.value("version", 1);
    http::Request req;
    req.method = "PUT";
    req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/iam";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = body.dump();
    // Replaying the PUT is safe: it carries the etag, so a replay after a success fails 412 and
    // the re-read finds the change made.
    auto r = transport_.send(req);
    if (ok(r.status)) return true;
    if (r.status == 412 && attempt < kIamAttempts) continue;  // changed since read: redo
    if (r.status == 412)
      throw Error(Errc::api, what + ": the policy kept changing under us (" +
                                 std::to_string(kIamAttempts) + " attempts); try again");
    fail(r, what);
  }
}

bool StorageClient::add_bucket_iam_member(const std::string& bucket, const std::string& role,
                                          const std::string& member) {
  const std::string what = "granting " + role + " on gs://" + bucket + " to " + member;
  return update_bucket_iam_policy(bucket, what, [&](nlohmann::json& bindings) {
    nlohmann::json* target = nullptr;
    for (auto& b : bindings) {
      // A conditional grant of ROLE is not the grant asked for.
      if (b.contains("condition") || b.value("role", "") != role) continue;
      auto& members = b["members"];
      if (!members.is_array()) members = nlohmann::json::array();
      for (const auto& m : members)
        if (m.is_string() && m.get<std::string>() == member) return false;
      if (!target) target = &b;
    }
    if (target)
      (*target)["members"].push_back(member);
    else
      bindings.push_back({{"role", role}, {"members", nlohmann::json::array({member})}});
    return true;
  });
}

std::vector<std::pair<std::string, std::string>> StorageClient::remove_bucket_iam_members(
    const std::string& bucket, const std::function<bool(const std::string& member)>& which) {
  std::vector<std::pair<std::string, std::string>> removed;
  update_bucket_iam_policy(
      bucket, "revoking access to gs://" + bucket, [&](nlohmann::json& bindings) {
        removed.clear();  // a redone round starts again
        nlohmann::json kept = nlohmann::json::array();
        for (auto& b : bindings) {
          nlohmann::json members = nlohmann::json::array();
          for (const auto& m : b.value("members", nlohmann::json::array())) {
            if (m.is_string() && !b.contains("condition") && which(m.get<std::string>()))
              removed.emplace_back(b.value("role", ""), m.get<std::string>());
            else
              members.push_back(m);
          }
          // A binding left with no member goes, as gcloud leaves it.
          if (members.empty() && !b.value("members", nlohmann::json::array()).empty()) continue;
          b["members"] = members;
          kept.push_back(b);
        }
        bindings = kept;
        return !removed.empty();
      });
  return removed;
}

ObjectInfo StorageClient::upload_string(const std::string& bucket, const std::string& name,
                                        const std::string& data, const UploadOptions& options) {
  ObjectInfo o = upload_single(bucket, name, data, options, crc32c(data));
  if (options.progress) options.progress(data.size(), data.size());
  return o;
}

ObjectInfo StorageClient::upload_single(const std::string& bucket, const std::string& name,
                                        const std::string& data, const UploadOptions& options,
                                        uint32_t crc) {
  // One multipart/related request: metadata (with the checksum, which the server verifies)
  // and the bytes.
  const std::string boundary = "kinetic_boundary_7e3f9a1c";
  nlohmann::json meta = {
      {"name", name}, {"contentType", options.content_type}, {"crc32c", crc32c_base64(crc)}};
  if (!options.custom_time.empty()) meta["customTime"] = options.custom_time;
  http::Request req;
  req.method = "POST";
  req.url =
      endpoint_ + "/upload/storage/v1/b/" + encode_object_name(bucket) + "/o?uploadType=multipart";
  if (options.if_generation_match)
    req.url += "&ifGenerationMatch=" + std::to_string(*options.if_generation_match);
  req.headers = {{"Content-Type", "multipart/related; boundary=" + boundary}};
  req.body.reserve(data.size() + 512);
  req.body += "--" + boundary + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n";
  req.body +=
      meta.dump() + "\r\n--" + boundary + "\r\nContent-Type: " + options.content_type + "\r\n\r\n";
  req.body += data;
  req.body += "\r\n--" + boundary + "--\r\n";
  // With a precondition a replay is harmless (it fails 412 or finds the same object); without
  // one, rewriting the same bytes is too.
  auto r = transport_.send(req);
  if (!ok(r.status)) fail(r, "uploading " + gs(bucket, name));
  return object_from_json(parse_json(r, "uploading " + gs(bucket, name)));
}

ObjectInfo StorageClient::upload_file(const std::string& bucket, const std::string& name,
                                      const fs::path& file, const UploadOptions& options) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0)
    throw Error(Errc::internal, "cannot read " + file.string() + ": " + std::strerror(errno));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size <= options.single_request_limit) {
    std::string data = read_file(file).value_or("");
    ObjectInfo o = upload_single(bucket, name, data, options, crc32c(data));
    if (options.progress) options.progress(size, size);
    return o;
  }
  return upload_resumable(bucket, name, file, 0, size, options);
}

ObjectInfo StorageClient::upload_file_range(const std::string& bucket, const std::string& name,
                                            const fs::path& file, uint64_t first, uint64_t length,
                                            const UploadOptions& options) {
  return upload_resumable(bucket, name, file, first, length, options);
}

namespace {

// The CRC32C of LENGTH bytes of FILE from FIRST, read through FD.
uint32_t crc32c_of_range(int fd, const fs::path& file, uint64_t first, uint64_t length) {
  uint32_t crc = 0;
  std::string rb(kQuantum * 16, '\0');
  for (uint64_t done = 0; done < length;) {
    uint64_t n = std::min<uint64_t>(rb.size(), length - done);
    if (::pread(fd, rb.data(), n, static_cast<off_t>(first + done)) != static_cast<ssize_t>(n))
      throw Error(Errc::internal, "cannot read " + file.string() + " while uploading it");
    crc = crc32c_extend(crc, rb.data(), n);
    done += n;
  }
  return crc;
}

// The POST that opens a resumable session for SIZE bytes.
http::Request session_start_request(const std::string& endpoint, const std::string& bucket,
                                    const std::string& name, uint64_t size,
                                    const UploadOptions& options) {
  http::Request start;
  start.method = "POST";
  start.url = endpoint + "/upload/storage/v1/b/" + encode_object_name(bucket) +
              "/o?uploadType=resumable&name=" + encode_object_name(name);
  if (options.if_generation_match)
    start.url += "&ifGenerationMatch=" + std::to_string(*options.if_generation_match);
  start.headers = {{"Content-Type", "application/json; charset=UTF-8"},
                   {"X-Upload-Content-Type", options.content_type},
                   {"X-Upload-Content-Length", std::to_string(size)}};
  nlohmann::json meta = {{"name", name}, {"contentType", options.content_type}};
  if (!options.custom_time.empty()) meta["customTime"] = options.custom_time;
  start.body = meta.dump();
  return start;
}

// The object's bytes [OFFSET, OFFSET + LEN) as one chunk of a resumable session, streamed from
// the file (FIRST is where the object starts in it): memory stays flat whatever the chunk size.
// The CRC is extended as the bytes go out when they continue what it covers.
struct ChunkReader {
  int fd;
  const fs::path& file;
  uint64_t first, offset, len;
  uint32_t& crc;
  uint64_t& crc_upto;
  const TransferProgress& progress;
  uint64_t size;
  uint64_t sent = 0;

  size_t operator()(char* buf, size_t room) {
    const uint64_t n = std::min<uint64_t>(room, len - sent);
    if (n == 0) return 0;
    const uint64_t at = offset + sent;
    if (::pread(fd, buf, n, static_cast<off_t>(first + at)) != static_cast<ssize_t>(n))
      throw Error(Errc::internal, "cannot read " + file.string() + " while uploading it");
    if (at == crc_upto) {
      crc = crc32c_extend(crc, buf, n);
      crc_upto += n;
    }
    sent += n;
    if (progress) progress(at + n, size);
    return static_cast<size_t>(n);
  }
};

}  // namespace

ObjectInfo StorageClient::upload_resumable(const std::string& bucket, const std::string& name,
                                           const fs::path& file, uint64_t first, uint64_t size,
                                           const UploadOptions& options) {
  const std::string what = "uploading " + gs(bucket, name);
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw Error(Errc::internal, "cannot read " + file.string() + ": " + std::strerror(errno));
  const uint64_t chunk = std::max(kQuantum, options.chunk_size / kQuantum * kQuantum);

  // 1. Open the session.
  auto r = transport_.send(session_start_request(endpoint_, bucket, name, size, options));
  if (!ok(r.status)) fail(r, what);
  auto session = r.header("Location");
  if (!session) throw Error(Errc::api, what + ": the upload session has no Location");

  // 2. Send chunks; after a failure ask the session how much it kept and go on from there.
  uint64_t offset = 0;
  uint32_t crc = 0;  // over the object's bytes [0, crc_upto)
  uint64_t crc_upto = 0;
  int stalls = 0;
  auto query = [&]() -> std::optional<nlohmann::json> {
    http::Request q;
    q.method = "PUT";
    q.url = *session;
    q.headers = {{"Content-Range", "bytes */" + std::to_string(size)}};
    auto s = transport_.send(q);
    if (s.status == 200 || s.status == 201) return parse_json(s, what);
    if (s.status != 308) fail(s, what);
    offset = persisted_from_range(s.header("Range"));
    return std::nullopt;
  };
  for (;;) {
    const uint64_t len = std::min(chunk, size - offset);
    http::Request put;
    put.method = "PUT";
    put.url = *session;
    put.idempotent = false;  // after a failure the session, not a blind replay, says what landed
    put.fresh_connection = true;  // nor libcurl's own replay after a kept-alive connection died
    put.headers = {{"Content-Range", "bytes " + std::to_string(offset) + "-" +
                                         std::to_string(offset + len - 1) + "/" +
                                         std::to_string(size)}};
    put.body_source =
        ChunkReader{fd.get(), file, first, offset, len, crc, crc_upto, options.progress, size};
    put.body_size = len;
    std::optional<nlohmann::json> done;
    const uint64_t before = offset;
    try {
      auto p = transport_.send(put);
      if (p.status == 200 || p.status == 201) {
        done = parse_json(p, what);
      } else if (p.status == 308) {
        offset = persisted_from_range(p.header("Range"));
      } else if (http::retryable_status(p.status) || p.status == 401) {
        // A streamed body is never replayed below us (an expired token's 401 included): the
        // session says what it kept, and the query goes through the retries and a new token.
        done = query();
      } else {
        fail(p, what);
      }
    } catch (const http::TransportError& e) {
      if (!e.retryable()) throw;
      done = query();
    }
    if (done) {
      ObjectInfo o = object_from_json(*done);
      if (crc_upto == size && !o.crc32c.empty() && o.crc32c != crc32c_base64(crc)) {
        delete_object(bucket, name);
        throw Error(Errc::api, what +
                                   ": the stored object's CRC32C does not match the file; "
                                   "it was deleted, try again");
      }
      if (options.progress) options.progress(size, size);
      return o;
    }
    if (options.progress) options.progress(offset, size);
    stalls = offset > before ? 0 : stalls + 1;
    if (stalls >= kMaxStalls)
      throw Error(Errc::api, what + ": no progress after " + std::to_string(kMaxStalls) +
                                 " attempts; check the network and try again");
    if (offset < crc_upto) {
      // The server kept less than we hashed: rehash from the start up to what it has.
      crc = crc32c_of_range(fd.get(), file, first, offset);
      crc_upto = offset;
    }
  }
}

ObjectInfo StorageClient::compose(const std::string& bucket, const std::string& name,
                                  const std::vector<ObjectInfo>& sources,
                                  const UploadOptions& options) {
  nlohmann::json source_objects = nlohmann::json::array();
  for (const auto& s : sources)
    source_objects.push_back({{"name", s.name}, {"generation", std::to_string(s.generation)}});
  nlohmann::json destination = {{"contentType", options.content_type}};
  if (!options.custom_time.empty()) destination["customTime"] = options.custom_time;
  http::Request req;
  req.method = "POST";
  req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/o/" +
            encode_object_name(name) + "/compose";
  if (options.if_generation_match)
    req.url += "?ifGenerationMatch=" + std::to_string(*options.if_generation_match);
  req.headers = {{"Content-Type", "application/json; charset=UTF-8"}};
  req.body = nlohmann::json{{"kind", "storage#composeRequest"},
                            {"sourceObjects", source_objects},
                            {"destination", destination}}
                 .dump();
  // The sources are pinned to their generations: a replay composes the same bytes (or, with
  // ifGenerationMatch=0, finds the object made and fails 412, which the caller checks).
  auto r = transport_.send(req);
  if (!ok(r.status)) fail(r, "composing " + gs(bucket, name));
  return object_from_json(parse_json(r, "composing " + gs(bucket, name)));
}

std::optional<ObjectInfo> StorageClient::get_object(const std::string& bucket,
                                                    const std::string& name) {
  http::Request req;
  req.url =
      endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/o/" + encode_object_name(name);
  auto r = transport_.send(req);
  if (r.status == 404) return std::nullopt;
  if (!ok(r.status)) fail(r, "reading " + gs(bucket, name));
  return object_from_json(parse_json(r, "reading " + gs(bucket, name)));
}

namespace {

// What a media download's answer says of its object. Without x-goog-generation (a proxy that
// drops it) the generation is 0, and a resume looks the object up first.
ObjectInfo object_from_download(const std::string& bucket, const std::string& name,
                                const http::Response& r, uint64_t received) {
  ObjectInfo o;
  o.bucket = bucket;
  o.name = name;
  try {
    o.generation = std::stoll(r.header("x-goog-generation").value_or("0"));
    o.size =
        std::stoull(r.header("x-goog-stored-content-length").value_or(std::to_string(received)));
  } catch (const std::exception&) {
    o.size = received;
  }
  o.content_type = r.header("content-type").value_or("");
  o.crc32c = crc_from_hash_header(r.header("x-goog-hash"));
  return o;
}

}  // namespace

ObjectInfo StorageClient::download_file(const std::string& bucket, const std::string& name,
                                        const fs::path& file, const TransferProgress& progress) {
  const std::string what = "downloading " + gs(bucket, name);
  // A progress display needs the size up front; otherwise the object's generation, size and
  // checksum come with its data (x-goog-generation, x-goog-stored-content-length, x-goog-hash):
  // one round trip instead of two.
  std::optional<ObjectInfo> meta;
  if (progress) {
    meta = get_object(bucket, name);
    if (!meta) throw Error(Errc::not_found, what + ": no such object");
  }
  make_dirs(file.parent_path(), 0755);
  fs::path tmp = file.parent_path() / ("." + file.filename().string() + ".part");
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0)
    throw Error(Errc::internal, "cannot write " + tmp.string() + ": " + std::strerror(errno));
  uint64_t written = 0;
  uint32_t crc = 0;
  std::string server_crc = meta ? meta->crc32c : "";
  int stalls = 0;
  // A transfer corrupted on the way (the checksum does not match) is fetched again from the
  // start, a few times, before the caller hears of it.
  for (int corrupted = 0;; ++corrupted) {
    for (;;) {
      http::Request req;
      // Pinned to the generation we saw, so a resume never splices two versions; a transfer
      // cut before the first answer told it looks it up.
      if ((!meta || meta->generation == 0) && written > 0) {
        meta = get_object(bucket, name);
        if (!meta) throw Error(Errc::not_found, what + ": no such object");
      }
      req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/o/" +
                encode_object_name(name) + "?alt=media";
      if (meta && meta->generation > 0)
        req.url += "&generation=" + std::to_string(meta->generation);
      if (written > 0) req.headers = {{"Range", "bytes=" + std::to_string(written) + "-"}};
      uint64_t before = written;
      bool write_failed = false;
      req.on_body = [&](std::string_view chunk) {
        if (::write(fd.get(), chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) {
          write_failed = true;
          return false;
        }
        crc = crc32c_extend(crc, chunk.data(), chunk.size());
        written += chunk.size();
        if (progress) progress(written, meta->size);  // meta is known with a progress display
        return true;
      };
      try {
        auto r = transport_.send(req);
        if (r.status == 416 && meta && written == meta->size) break;  // nothing left to fetch
        if (!meta && r.status == 404) {
          ::unlink(tmp.c_str());
          throw Error(Errc::not_found, what + ": no such object");
        }
        if (!ok(r.status)) {
          ::unlink(tmp.c_str());
          fail(r, what);
        }
        if (!meta) meta = object_from_download(bucket, name, r, written);
        if (r.status == 200 && before > 0)
          throw Error(Errc::api, what + ": the server ignored the Range of a resumed download");
        std::string h = crc_from_hash_header(r.header("x-goog-hash"));
        if (!h.empty()) server_crc = h;
        break;
      } catch (const http::TransportError& e) {
        if (write_failed)
          throw Error(Errc::internal, "cannot write " + tmp.string() + ": check free space");
        if (!e.retryable()) {
          ::unlink(tmp.c_str());
          throw;
        }
        stalls = written > before ? 0 : stalls + 1;
        if (stalls >= kMaxStalls) {
          ::unlink(tmp.c_str());
          throw Error(Errc::api, what + ": no progress after " + std::to_string(kMaxStalls) +
                                     " attempts: " + e.what());
        }
      }
    }
    if (server_crc.empty() || server_crc == crc32c_base64(crc)) break;
    if (corrupted + 1 >= kCorruptTries) {
      ::unlink(tmp.c_str());
      throw Error(Errc::api, what + ": CRC32C mismatch " + std::to_string(kCorruptTries) +
                                 " times (the download was corrupted each time); try again");
    }
    if (::ftruncate(fd.get(), 0) != 0 || ::lseek(fd.get(), 0, SEEK_SET) != 0) {
      ::unlink(tmp.c_str());
      throw Error(Errc::internal, "cannot write " + tmp.string() + ": " + std::strerror(errno));
    }
    written = 0;
    crc = 0;
    server_crc = meta ? meta->crc32c : "";
  }
  if (::fsync(fd.get()) != 0 || ::rename(tmp.c_str(), file.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw Error(Errc::internal, "cannot write " + file.string() + ": " + std::strerror(errno));
  }
  return *meta;
}

std::string StorageClient::download_string(const std::string& bucket, const std::string& name) {
  for (int corrupted = 0;; ++corrupted) {
    http::Request req;
    req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/o/" +
              encode_object_name(name) + "?alt=media";
    auto r = transport_.send(req);
    if (r.status == 404) throw Error(Errc::not_found, gs(bucket, name) + ": no such object");
    if (!ok(r.status)) fail(r, "downloading " + gs(bucket, name));
    std::string h = crc_from_hash_header(r.header("x-goog-hash"));
    if (h.empty() || h == crc32c_base64(crc32c(r.body))) return r.body;
    if (corrupted + 1 >= kCorruptTries)
      throw Error(Errc::api, "downloading " + gs(bucket, name) + ": CRC32C mismatch " +
                                 std::to_string(kCorruptTries) + " times; try again");
  }
}

std::optional<std::string> StorageClient::download_range(const std::string& bucket,
                                                         const std::string& name,
                                                         int64_t generation, uint64_t first,
                                                         uint64_t length) {
  if (length == 0) return std::string();
  http::Request req;
  req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/o/" +
            encode_object_name(name) + "?alt=media";
  if (generation > 0) req.url += "&generation=" + std::to_string(generation);
  req.headers = {
      {"Range", "bytes=" + std::to_string(first) + "-" + std::to_string(first + length - 1)}};
  auto r = transport_.send(req);
  if (r.status == 404) return std::nullopt;
  if (r.status == 416) return std::string();  // FIRST is past the end
  if (!ok(r.status)) fail(r, "downloading " + gs(bucket, name));
  // A server that ignores Range answers 200 with everything.
  if (r.status == 200) return r.body.substr(std::min<size_t>(first, r.body.size()), length);
  return std::move(r.body);
}

ListResult StorageClient::list(const std::string& bucket, const std::string& prefix,
                               const std::string& delimiter, const std::string& match_glob) {
  ListResult out;
  std::string page;
  do {
    http::Request req;
    req.url = endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/o?maxResults=1000";
    if (!prefix.empty()) req.url += "&prefix=" + encode_object_name(prefix);
    if (!delimiter.empty()) req.url += "&delimiter=" + encode_object_name(delimiter);
    if (!match_glob.empty()) req.url += "&matchGlob=" + encode_object_name(match_glob);
    if (!page.empty()) req.url += "&pageToken=" + encode_object_name(page);
    auto r = transport_.send(req);
    if (!ok(r.status)) fail(r, "listing gs://" + bucket + "/" + prefix);
    auto j = parse_json(r, "listing gs://" + bucket);
    if (j.contains("items"))
      for (const auto& item : j["items"]) out.objects.push_back(object_from_json(item));
    if (j.contains("prefixes"))
      for (const auto& p : j["prefixes"]) out.prefixes.push_back(p.get<std::string>());
    page = j.value("nextPageToken", "");
  } while (!page.empty());
  return out;
}

bool StorageClient::delete_object(const std::string& bucket, const std::string& name) {
  http::Request req;
  req.method = "DELETE";
  req.url =
      endpoint_ + "/storage/v1/b/" + encode_object_name(bucket) + "/o/" + encode_object_name(name);
  auto r = transport_.send(req);
  if (r.status == 404) return false;
  if (!ok(r.status)) fail(r, "deleting " + gs(bucket, name));
  return true;
}

}  // namespace kinetic::gcp
