#include "fakes/fake_gcs.h"

#include "fakes/fake_encoding.h"
#include "fakes/fake_latency.h"
#include "fakes/fake_quota.h"

#include <httplib.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <functional>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace kinetic::fakes {

using json = nlohmann::json;

namespace {

constexpr std::size_t kChunkGranularity = 256 * 1024;

// ---- encoding helpers ------------------------------------------------------------------------

std::string gcs_rfc3339_now() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

// The project number GCS reports for PROJECT: digits pass through, an id hashes to 12 digits
// (FNV-1a, the same derivation as the fake GCP control plane's, so the two fakes agree).
std::string project_number_of(const std::string& project) {
  if (!project.empty() &&
      std::all_of(project.begin(), project.end(), [](unsigned char c) { return std::isdigit(c); }))
    return project;
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : project) h = (h ^ c) * 1099511628211ull;
  return std::to_string(100000000000ull + h % 900000000000ull);
}

std::string trim_gcs(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The port of a socket address (-1 for a family without one).
int port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return -1;
}

// Calls FN(fd, local port) for each socket of this process: the server's listening socket and
// its accepted connections are httplib's, reached only through their descriptors.
void for_each_socket(const std::function<void(int fd, int local_port)>& fn) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  while (auto* entry = readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || fd < 0) continue;
    sockaddr_storage local{};
    socklen_t ll = sizeof local;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &ll) != 0) continue;
    fn(static_cast<int>(fd), port_of(local));
  }
  closedir(dir);
}

// Shuts down (without closing: httplib still owns the descriptor) the accepted socket whose
// local/peer ports match; the client sees the connection die mid-request.
void shutdown_connection(int local_port, int remote_port) {
  for_each_socket([&](int fd, int port) {
    sockaddr_storage peer{};
    socklen_t pl = sizeof peer;
    if (port == local_port && getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) == 0 &&
        port_of(peer) == remote_port)
      ::shutdown(fd, SHUT_RDWR);
  });
}

// httplib listens with a backlog of 5 (its library's CPPHTTPLIB_LISTEN_BACKLOG): a client that
// opens more connections at once (a log read 32 at once) has the extra SYNs dropped and resent
// a second later, a stall no real front end has. Listening again on the bound socket raises it.
void raise_listen_backlog(int local_port) {
  for_each_socket([&](int fd, int port) {
    int listening = 0;
    socklen_t size = sizeof listening;
    if (port == local_port && getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 &&
        listening)
      ::listen(fd, SOMAXCONN);
  });
}

// ---- model -----------------------------------------------------------------------------------

struct Object {
  std::string name;
  std::string data;
  std::int64_t generation = 0;
  std::int64_t metageneration = 1;
  std::int64_t component_count = 0;  // a composite's (objects.compose); 0 for any other
  json metadata = json::object();    // client-writable fields (contentType, metadata, ...)
  std::string time_created;
  std::string updated;
  // Checksums, computed once per generation as GCS stores them (not per metadata read: a
  // 10 MiB object would cost every GET tens of milliseconds).
  mutable std::int64_t hashed_generation = -1;
  mutable std::string md5;
  mutable std::string crc32c;
};

struct Bucket {
  std::string project;
  json resource;  // full bucket resource
  std::map<std::string, Object> objects;
  json iam_bindings = json::array();  // the IAM policy's bindings; its etag is the resource's
};

struct Preconditions {
  std::optional<std::int64_t> if_generation_match, if_generation_not_match;
  std::optional<std::int64_t> if_metageneration_match, if_metageneration_not_match;
};

struct Session {
  std::string bucket, name;
  json metadata = json::object();
  Preconditions pre;
  std::string data;  // persisted bytes
  std::optional<std::uint64_t> total;
  std::optional<json> result;  // finalised object resource
};

struct HttpError {
  int status;
  std::string reason;
  std::string message;
  std::map<std::string, std::string> headers = {};
  json extra = json::object();  // extra members of errors[0]
};

struct Route {
  std::string method;
  std::vector<std::string> segments;  // decoded path segments
  std::string raw_path;
};

}  // namespace

// ---- crc32c / md5 / base64 -------------------------------------------------------------------

std::uint32_t FakeGcs::crc32c(std::string_view data) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : data) crc = table[(crc ^ c) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::string FakeGcs::base64(std::string_view bytes) {
  return base64_encode(bytes);
}

std::string FakeGcs::crc32c_base64(std::string_view data) {
  std::uint32_t c = crc32c(data);
  char be[4] = {static_cast<char>(c >> 24), static_cast<char>(c >> 16), static_cast<char>(c >> 8),
                static_cast<char>(c)};
  return base64(std::string_view(be, 4));
}

std::string FakeGcs::md5_base64(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_md5(), nullptr);
  return base64(std::string_view(reinterpret_cast<const char*>(digest), len));
}

// ---- implementation --------------------------------------------------------------------------

struct FakeGcs::Impl {
  std::string host;
  int port = 0;
  httplib::Server server;
  std::thread thread;

  mutable std::mutex mu;
  std::map<std::string, Bucket> buckets;
  std::map<std::string, Session> sessions;
  std::int64_t last_generation = 0;
  std::uint64_t next_session = 1;

  // faults
  struct Failure {
    int remaining;
    int status;
    int retry_after;
    std::string prefix;
  };
  std::deque<Failure> failures;
  std::optional<std::size_t> drop_after;
  std::optional<std::size_t> persist_limit;  // persist_at_most_next
  bool precondition_next = false;
  int corrupt_downloads = 0;  // corrupt_next_download
  struct IamInterleave {
    std::string bucket, role, member;
  };
  std::deque<IamInterleave> iam_interleaves;
  // set_write_quota: one token bucket per bucket, made on the bucket's first write.
  double write_quota_rate = 0;
  std::map<std::string, WriteQuota> write_quotas;
  WriteGathering write_gathering;  // gather_next_writes (its own lock: waited on without mu)
  struct Interleave {
    std::string prefix;
    std::function<void()> action;
  };
  std::deque<Interleave> interleaves;  // after_next

  std::map<std::string, int> counters;
  int total = 0;
  // Every request to a resumable session, in arrival order, so tests can assert the offsets a
  // client resumes at (an overlap is accepted as GCS does, so only this log shows it).
  std::vector<FakeGcs::ResumableRequest> resumable_log;

  std::string base_url() const { return "http://" + host + ":" + std::to_string(port); }

  std::int64_t new_generation() {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    last_generation = std::max<std::int64_t>(us, last_generation + 1);
    return last_generation;
  }

  void count(const std::string& route) {
    std::lock_guard lock(mu);
    ++counters[route];
  }

  // ---- resources ----

  json object_resource(const std::string& bucket, const Object& o) const {
    json r = o.metadata;
    r.erase("crc32c");
    r.erase("md5Hash");
    r["kind"] = "storage#object";
    auto gen = std::to_string(o.generation);
    auto enc = percent_encode(o.name);
    r["id"] = bucket + "/" + o.name + "/" + gen;
    r["selfLink"] = base_url() + "/storage/v1/b/" + bucket + "/o/" + enc;
    r["mediaLink"] = base_url() + "/download/storage/v1/b/" + bucket + "/o/" + enc +
                     "?generation=" + gen + "&alt=media";
    r["name"] = o.name;
    r["bucket"] = bucket;
    r["generation"] = gen;
    r["metageneration"] = std::to_string(o.metageneration);
    if (!r.contains("contentType")) r["contentType"] = "application/octet-stream";
    r["storageClass"] = "STANDARD";
    r["size"] = std::to_string(o.data.size());
    if (o.hashed_generation != o.generation) {
      o.md5 = md5_base64(o.data);
      o.crc32c = crc32c_base64(o.data);
      o.hashed_generation = o.generation;
    }
    // A composite has no MD5 (GCS cannot derive one from its components' hashes), and says how
    // many components it is made of, as an integer.
    if (o.component_count > 0)
      r["componentCount"] = o.component_count;
    else
      r["md5Hash"] = o.md5;
    r["crc32c"] = o.crc32c;
    r["etag"] = base64(gen + "/" + std::to_string(o.metageneration));
    r["timeCreated"] = o.time_created;
    r["updated"] = o.updated;
    r["timeStorageClassUpdated"] = o.time_created;
    r["timeFinalized"] = o.time_created;
    return r;
  }

  // A bucket's etag, and its IAM policy's, encode its metageneration as GCS's do: base64 of a
  // protobuf varint field 1 ("CAE=" for 1, "CAI=" for 2, ...).
  static std::string metageneration_etag(std::int64_t metageneration) {
    std::string pb = "\x08";
    auto v = static_cast<std::uint64_t>(metageneration);
    do {
      unsigned char byte = v & 0x7F;
      v >>= 7;
      if (v) byte |= 0x80;
      pb.push_back(static_cast<char>(byte));
    } while (v);
    return base64(pb);
  }

  static std::int64_t metageneration_of(const Bucket& b) {
    return std::stoll(b.resource.value("metageneration", std::string("1")));
  }

  // Bumps the metageneration (and so both etags) after a change to the bucket's metadata.
  static void touch(Bucket& b) {
    auto mg = metageneration_of(b) + 1;
    b.resource["metageneration"] = std::to_string(mg);
    b.resource["etag"] = metageneration_etag(mg);
    b.resource["updated"] = gcs_rfc3339_now();
  }

  // The policy GCS gives a new bucket: the project's owners/editors own it, its viewers read it;
  // with uniform bucket-level access the object-level legacy roles are bindings too.
  static json default_bindings(const std::string& project, const json& resource) {
    json owners = {"projectEditor:" + project, "projectOwner:" + project};
    json viewers = {"projectViewer:" + project};
    json b = json::array({{{"role", "roles/storage.legacyBucketOwner"}, {"members", owners}},
                          {{"role", "roles/storage.legacyBucketReader"}, {"members", viewers}}});
    bool ubla = resource.contains("iamConfiguration") &&
                resource["iamConfiguration"]
                    .value("uniformBucketLevelAccess", json::object())
                    .value("enabled", false);
    if (ubla) {
      b.push_back({{"role", "roles/storage.legacyObjectOwner"}, {"members", owners}});
      b.push_back({{"role", "roles/storage.legacyObjectReader"}, {"members", viewers}});
    }
    return b;
  }

  Bucket new_bucket(const std::string& name, const std::string& project, const json& body) {
    Bucket b;
    b.project = project;
    b.resource = make_bucket(name, project, body);
    b.iam_bindings = default_bindings(project, b.resource);
    return b;
  }

  static json iam_policy(const std::string& name, const Bucket& b) {
    bool conditional = std::any_of(b.iam_bindings.begin(), b.iam_bindings.end(),
                                   [](const json& x) { return x.contains("condition"); });
    return {{"kind", "storage#policy"},
            {"resourceId", "projects/_/buckets/" + name},
            {"version", conditional ? 3 : 1},
            {"etag", metageneration_etag(metageneration_of(b))},
            {"bindings", b.iam_bindings}};
  }

  json make_bucket(const std::string& name, const std::string& project, const json& body) {
    json r = body.is_object() ? body : json::object();
    auto now = gcs_rfc3339_now();
    r["kind"] = "storage#bucket";
    r["id"] = name;
    r["name"] = name;
    r["selfLink"] = base_url() + "/storage/v1/b/" + name;
    r["projectNumber"] = project_number_of(project);
    r["metageneration"] = "1";
    r["timeCreated"] = now;
    r["updated"] = now;
    r["etag"] = metageneration_etag(1);
    std::string location = r.value("location", std::string("US"));
    std::transform(location.begin(), location.end(), location.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    r["location"] = location;
    r["locationType"] =
        (location == "US" || location == "EU" || location == "ASIA") ? "multi-region" : "region";
    if (!r.contains("storageClass")) r["storageClass"] = "STANDARD";
    if (!r.contains("rpo")) r["rpo"] = "DEFAULT";
    if (!r.contains("iamConfiguration")) {
      r["iamConfiguration"] = {{"bucketPolicyOnly", {{"enabled", false}}},
                               {"uniformBucketLevelAccess", {{"enabled", false}}},
                               {"publicAccessPrevention", "inherited"}};
    }
    if (!r.contains("softDeletePolicy")) {
      r["softDeletePolicy"] = {{"retentionDurationSeconds", "604800"}, {"effectiveTime", now}};
    }
    return r;
  }

  // ---- errors ----

  static json error_body(const HttpError& e) {
    json item = {{"message", e.message}, {"domain", "global"}, {"reason", e.reason}};
    for (auto& [k, v] : e.extra.items()) item[k] = v;
    return {
        {"error", {{"code", e.status}, {"message", e.message}, {"errors", json::array({item})}}}};
  }

  static void send_error(httplib::Response& res, const HttpError& e) {
    res.status = e.status;
    for (auto& [k, v] : e.headers) res.set_header(k, v);
    res.set_content(error_body(e).dump(), "application/json; charset=UTF-8");
  }

  static HttpError not_found(const std::string& what) { return {404, "notFound", what}; }
  static HttpError bucket_not_found() { return not_found("The specified bucket does not exist."); }
  static HttpError object_not_found(const std::string& bucket, const std::string& name) {
    return not_found("No such object: " + bucket + "/" + name);
  }
  static HttpError precondition_failed() {
    return {412,
            "conditionNotMet",
            "At least one of the pre-conditions you specified did not hold.",
            {},
            {{"locationType", "header"}, {"location", "If-Match"}}};
  }
  static HttpError invalid(const std::string& msg) { return {400, "invalid", msg}; }

  static void send_json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json; charset=UTF-8");
  }

  // ---- preconditions ----

  static std::optional<std::int64_t> int_param(const httplib::Request& req, const char* name) {
    if (!req.has_param(name)) return std::nullopt;
    try {
      return std::stoll(req.get_param_value(name));
    } catch (...) {
      throw HttpError{400, "invalid", std::string("Invalid value for ") + name};
    }
  }

  static Preconditions read_preconditions(const httplib::Request& req) {
    Preconditions p;
    p.if_generation_match = int_param(req, "ifGenerationMatch");
    p.if_generation_not_match = int_param(req, "ifGenerationNotMatch");
    p.if_metageneration_match = int_param(req, "ifMetagenerationMatch");
    p.if_metageneration_not_match = int_param(req, "ifMetagenerationNotMatch");
    return p;
  }

  // Throws 412 (or 304 for reads failing a *NotMatch condition) when a condition fails.
  void check_preconditions(const Preconditions& p, const Object* current, bool is_read) {
    if (precondition_next) {
      precondition_next = false;
      throw precondition_failed();
    }
    std::int64_t gen = current ? current->generation : 0;
    if (p.if_generation_match && *p.if_generation_match != gen) throw precondition_failed();
    if (p.if_generation_not_match && *p.if_generation_not_match == gen) {
      if (is_read) throw HttpError{304, "notModified", "Not Modified"};
      throw precondition_failed();
    }
    if (p.if_metageneration_match &&
        (!current || *p.if_metageneration_match != current->metageneration))
      throw precondition_failed();
    if (p.if_metageneration_not_match && current &&
        *p.if_metageneration_not_match == current->metageneration) {
      if (is_read) throw HttpError{304, "notModified", "Not Modified"};
      throw precondition_failed();
    }
  }

  Bucket& bucket_or_throw(const std::string& name) {
    auto it = buckets.find(name);
    if (it == buckets.end()) throw bucket_not_found();
    return it->second;
  }

  // Validates client-supplied hashes (metadata crc32c/md5Hash, X-Goog-Hash) against the data.
  static void validate_hashes(const json& metadata, const std::string& x_goog_hash,
                              const std::string& data) {
    std::optional<std::string> crc, md5;
    if (metadata.contains("crc32c") && metadata["crc32c"].is_string())
      crc = metadata["crc32c"].get<std::string>();
    if (metadata.contains("md5Hash") && metadata["md5Hash"].is_string())
      md5 = metadata["md5Hash"].get<std::string>();
    std::size_t pos = 0;
    while (pos < x_goog_hash.size()) {
      auto comma = x_goog_hash.find(',', pos);
      auto item = trim_gcs(
          x_goog_hash.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      pos = comma == std::string::npos ? x_goog_hash.size() : comma + 1;
      auto eq = item.find('=');
      if (eq == std::string::npos) continue;
      auto key = lower(item.substr(0, eq));
      auto val = item.substr(eq + 1);
      if (key == "crc32c") crc = val;
      if (key == "md5") md5 = val;
    }
    if (crc) {
      auto actual = crc32c_base64(data);
      if (base64_decode(*crc) != base64_decode(actual)) {
        throw HttpError{
            400, "invalid",
            "Provided CRC32C \"" + *crc + "\" doesn't match calculated CRC32C \"" + actual + "\"."};
      }
    }
    if (md5) {
      auto actual = md5_base64(data);
      if (base64_decode(*md5) != base64_decode(actual)) {
        throw HttpError{400, "invalid",
                        "Provided MD5 hash \"" + *md5 + "\" doesn't match calculated MD5 hash \"" +
                            actual + "\"."};
      }
    }
  }

  // Creates/overwrites an object after precondition and hash checks. Caller holds mu.
  json store_object(const std::string& bucket_name, const std::string& name, json metadata,
                    const Preconditions& pre, std::string data, const std::string& x_goog_hash,
                    const std::string& content_type_header) {
    if (name.empty()) throw HttpError{400, "required", "Required"};
    auto& bucket = bucket_or_throw(bucket_name);
    auto it = bucket.objects.find(name);
    check_preconditions(pre, it == bucket.objects.end() ? nullptr : &it->second, false);
    validate_hashes(metadata, x_goog_hash, data);
    Object o;
    o.name = name;
    o.data = std::move(data);
    o.generation = new_generation();
    o.time_created = o.updated = gcs_rfc3339_now();
    static const char* writable[] = {"contentType",     "contentEncoding", "contentDisposition",
                                     "contentLanguage", "cacheControl",    "metadata",
                                     "customTime",      "storageClass"};
    for (auto* k : writable) {
      if (metadata.contains(k) && !metadata[k].is_null()) o.metadata[k] = metadata[k];
    }
    o.metadata.erase("storageClass");
    if (!o.metadata.contains("contentType") && !content_type_header.empty())
      o.metadata["contentType"] = content_type_header;
    bucket.objects[name] = std::move(o);
    return object_resource(bucket_name, bucket.objects[name]);
  }

  // ---- routing ----

  static Route parse_route(const httplib::Request& req) {
    Route r;
    r.method = req.method;
    std::string target = req.target.empty() ? req.path : req.target;
    auto q = target.find('?');
    r.raw_path = target.substr(0, q);
    std::size_t pos = 1;
    while (pos <= r.raw_path.size()) {
      auto slash = r.raw_path.find('/', pos);
      auto seg =
          r.raw_path.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
      r.segments.push_back(percent_decode(seg));
      if (slash == std::string::npos) break;
      pos = slash + 1;
    }
    // Google's apitools clients (gcloud storage, gsutil) start resumable uploads at
    // /resumable/upload/storage/v1/b/BUCKET/o, their generated `resumable_path`; GCS serves it
    // as /upload/storage/v1/...
    if (r.segments.size() > 2 && r.segments[0] == "resumable" && r.segments[1] == "upload")
      r.segments.erase(r.segments.begin());
    return r;
  }

  // Returns the route name used by counters (and for fault filtering).
  static std::string route_name(const Route& r, const httplib::Request& req) {
    const auto& s = r.segments;
    const auto& m = r.method;
    bool storage = s.size() >= 3 && s[0] == "storage" && s[1] == "v1" && s[2] == "b";
    bool upload =
        s.size() >= 4 && s[0] == "upload" && s[1] == "storage" && s[2] == "v1" && s[3] == "b";
    bool download =
        s.size() >= 4 && s[0] == "download" && s[1] == "storage" && s[2] == "v1" && s[3] == "b";
    if (storage && s.size() == 3) {
      if (m == "POST") return "buckets.insert";
      if (m == "GET") return "buckets.list";
    }
    if (storage && s.size() == 4) {
      if (m == "GET") return "buckets.get";
      if (m == "PATCH" || m == "PUT") return "buckets.patch";
      if (m == "DELETE") return "buckets.delete";
    }
    if (storage && s.size() == 5 && s[4] == "iam") {
      if (m == "GET") return "buckets.getIamPolicy";
      if (m == "PUT") return "buckets.setIamPolicy";
    }
    if (storage && s.size() == 5 && s[4] == "o" && m == "GET") return "objects.list";
    if (storage && s.size() >= 7 && s[4] == "o" && s.back() == "compose" && m == "POST")
      return "objects.compose";
    if (storage && s.size() >= 6 && s[4] == "o") {
      if (m == "GET")
        return req.get_param_value("alt") == "media" ? "objects.download" : "objects.get";
      if (m == "DELETE") return "objects.delete";
      if (m == "PATCH" || m == "PUT") return "objects.patch";
    }
    if (download && s.size() >= 7 && s[5] == "o" && m == "GET") return "objects.download";
    if (upload && s.size() == 6 && s[5] == "o") {
      if (req.has_param("upload_id")) {
        if (m == "PUT" || m == "POST") return "upload.resumable.put";
        if (m == "DELETE") return "upload.resumable.cancel";
      }
      if (m == "POST") {
        auto t = req.get_param_value("uploadType");
        if (t == "media") return "upload.media";
        if (t == "multipart") return "upload.multipart";
        if (t == "resumable") return "upload.resumable.start";
        return "upload.invalid";
      }
    }
    if (s.size() == 2 && s[0] == "_fake" && s[1] == "counters" && m == "GET")
      return "fake.counters";
    if (s.size() == 2 && s[0] == "_fake" && s[1] == "corrupt-next-download" && m == "POST")
      return "fake.corrupt";
    return "not_found";
  }

  static std::string object_name(const Route& r, std::size_t from) {
    // Names are one encoded path segment; tolerate unencoded slashes too.
    std::string name;
    for (std::size_t i = from; i < r.segments.size(); ++i) {
      if (i > from) name += '/';
      name += r.segments[i];
    }
    return name;
  }

  // Reads the whole request body, honouring a pending drop_connection_after fault.
  // Returns false if the connection was dropped (`body` then holds what was read).
  bool read_body(const httplib::Request& req, const httplib::ContentReader* reader,
                 const std::string& route, bool is_upload, std::string& body) {
    if (!reader) {
      body = req.body;
      return true;
    }
    std::optional<std::size_t> drop;
    if (is_upload) {
      std::lock_guard lock(mu);
      auto length = req.get_header_value("Content-Length");
      if (drop_after &&
          (length.empty() || std::strtoull(length.c_str(), nullptr, 10) > *drop_after)) {
        drop = drop_after;
        drop_after.reset();
      }
    }
    bool dropped = false;
    (*reader)([&](const char* data, std::size_t len) {
      if (drop && body.size() + len >= *drop) {
        body.append(data, *drop - body.size());
        {
          // Record before the socket dies so that a client retrying at once sees the state.
          std::lock_guard lock(mu);
          ++counters["dropped_connections"];
          if (route == "upload.resumable.put") persist_partial_chunk(req, body);
        }
        shutdown_connection(req.local_port, req.remote_port);
        dropped = true;
        return false;
      }
      body.append(data, len);
      return true;
    });
    return !dropped;
  }

  void handle(const httplib::Request& req, httplib::Response& res,
              const httplib::ContentReader* reader) {
    // httplib 0.11 applies "Range:" on its own, badly (keeps 200, slices error bodies, hangs on
    // ranges past the end). The Request is a non-const local inside httplib, so clearing its parsed
    // ranges is well-defined; the fake handles the Range header itself.
    const_cast<httplib::Request&>(req).ranges.clear();
    auto route = parse_route(req);
    auto name = route_name(route, req);
    {
      std::lock_guard lock(mu);
      ++counters[name];
      ++total;
      // An emulator is reached without credentials (Google's libraries send none to
      // STORAGE_EMULATOR_HOST): tests assert no client leaked a token here.
      if (req.has_header("Authorization")) ++counters["with_authorization"];
    }
    bool is_upload =
        name == "upload.media" || name == "upload.multipart" || name == "upload.resumable.put";
    std::string body;
    if (!read_body(req, reader, name, is_upload, body)) {
      res.status = 500;  // never sent: the connection is already shut down
      return;
    }
    if (!written_bucket(name, route).empty()) write_gathering.arrive();
    try {
      {
        std::lock_guard lock(mu);
        std::string key = route.method + " " + route.raw_path;
        for (auto it = failures.begin(); it != failures.end(); ++it) {
          if (key.rfind(it->prefix, 0) != 0) continue;
          HttpError e{it->status, it->status == 429 ? "rateLimitExceeded" : "backendError",
                      it->status == 429 ? "The rate of requests is too high."
                                        : "Backend Error (injected by the fake)."};
          if (it->status == 503) e.reason = "backendError";
          if (it->retry_after >= 0) e.headers["Retry-After"] = std::to_string(it->retry_after);
          if (--it->remaining <= 0) failures.erase(it);
          ++counters["injected_failures"];
          throw e;
        }
        enforce_write_quota(name, route);
      }
      dispatch(name, route, req, res, body);
    } catch (const HttpError& e) {
      send_error(res, e);
    } catch (const json::exception& e) {
      send_error(res, invalid(std::string("Invalid JSON payload: ") + e.what()));
    }
    run_interleave(route.method + " " + route.raw_path);
  }

  // A pending after_next action whose prefix KEY matches: run now, before the answer is sent.
  void run_interleave(const std::string& key) {
    std::function<void()> action;
    {
      std::lock_guard lock(mu);
      auto it = std::find_if(interleaves.begin(), interleaves.end(),
                             [&](const Interleave& x) { return key.rfind(x.prefix, 0) == 0; });
      if (it == interleaves.end()) return;
      action = std::move(it->action);
      interleaves.erase(it);
    }
    action();
  }

  // The bucket a write request mutates, "" for anything else. A resumable session's chunks are
  // one write with its start, so only the start counts.
  static std::string written_bucket(const std::string& name, const Route& route) {
    const auto& m = route.method;
    bool mutating = m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE";
    bool chunk = name.rfind("upload.resumable.", 0) == 0 && name != "upload.resumable.start";
    if (!mutating || chunk) return {};
    if (name.rfind("objects.", 0) == 0 || name.rfind("buckets.", 0) == 0)
      return route.segments.size() > 3 ? route.segments[3] : std::string();
    if (name.rfind("upload.", 0) == 0)
      return route.segments.size() > 4 ? route.segments[4] : std::string();
    return {};
  }

  // set_write_quota, with mu held: GCS's 429 for a write past the bucket's rate. GCS documents
  // no Retry-After and sends none; clients back off on their own curve.
  void enforce_write_quota(const std::string& name, const Route& route) {
    if (write_quota_rate <= 0) return;
    std::string bucket = written_bucket(name, route);
    if (bucket.empty()) return;
    auto [it, made] = write_quotas.try_emplace(bucket);
    if (made) it->second.set_rate(write_quota_rate);
    if (it->second.take()) return;
    ++counters["rate_limited"];
    throw HttpError{429,
                    "rateLimitExceeded",
                    "The bucket " + bucket +
                        " exceeded the rate limit for object mutation operations (create, update, "
                        "and delete). Please reduce your request rate. See "
                        "https://cloud.google.com/storage/docs/gcs429.",
                    {},
                    {{"domain", "usageLimits"}}};
  }

  void persist_partial_chunk(const httplib::Request& req, const std::string& body) {
    auto it = sessions.find(req.get_param_value("upload_id"));
    if (it == sessions.end() || it->second.result) return;
    auto cr = req.get_header_value("Content-Range");
    resumable_log.push_back({trim_gcs(cr), it->second.data.size(), body.size(), true});
    unsigned long long start = 0;
    if (std::sscanf(cr.c_str(), "bytes %llu-", &start) != 1) start = 0;
    auto& s = it->second;
    if (start != s.data.size()) return;
    std::size_t keep = body.size() / kChunkGranularity * kChunkGranularity;
    s.data.append(body, 0, keep);
  }

  void dispatch(const std::string& name, const Route& route, const httplib::Request& req,
                httplib::Response& res, const std::string& body) {
    const auto& seg = route.segments;
    std::lock_guard lock(mu);
    if (name == "fake.counters") return send_json(res, 200, json(counters));
    if (name == "fake.corrupt") {
      corrupt_downloads = std::max(corrupt_downloads, 1);
      res.status = 204;
      return;
    }
    if (name == "buckets.insert") return buckets_insert(req, res, body);
    if (name == "buckets.list") return buckets_list(req, res);
    if (name == "buckets.get") {
      return send_json(res, 200, bucket_or_throw(seg[3]).resource);
    }
    if (name == "buckets.patch") {
      auto& b = bucket_or_throw(seg[3]);
      auto patch = json::parse(body.empty() ? "{}" : body);
      for (auto& [k, v] : patch.items()) {
        if (k == "name" || k == "id" || k == "kind") continue;
        if (v.is_null())
          b.resource.erase(k);
        else
          b.resource[k] = v;
      }
      touch(b);
      return send_json(res, 200, b.resource);
    }
    if (name == "buckets.delete") {
      auto& b = bucket_or_throw(seg[3]);
      if (!b.objects.empty())
        throw HttpError{409, "conflict", "The bucket you tried to delete is not empty."};
      buckets.erase(seg[3]);
      res.status = 204;
      return;
    }
    if (name == "buckets.getIamPolicy") return get_iam_policy(seg[3], res);
    if (name == "buckets.setIamPolicy") return set_iam_policy(seg[3], res, body);
    if (name == "objects.list") return objects_list(seg[3], req, res);
    if (name == "objects.compose") {
      Route dest = route;
      dest.segments.pop_back();  // "compose"
      return send_json(res, 200,
                       compose(seg[3], object_name(dest, 5),
                               json::parse(body.empty() ? "{}" : body), read_preconditions(req)));
    }
    if (name == "objects.get" || name == "objects.download" || name == "objects.delete" ||
        name == "objects.patch") {
      bool dl = seg[0] == "download";
      const auto& bucket_name = dl ? seg[4] : seg[3];
      auto obj = object_name(route, dl ? 6 : 5);
      auto& b = bucket_or_throw(bucket_name);
      auto it = b.objects.find(obj);
      auto pre = read_preconditions(req);
      if (it == b.objects.end()) throw object_not_found(bucket_name, obj);
      if (req.has_param("generation") &&
          std::to_string(it->second.generation) != req.get_param_value("generation"))
        throw object_not_found(bucket_name, obj);
      bool read = name == "objects.get" || name == "objects.download";
      if (read && !precondition_next)
        check_preconditions(pre, &it->second, true);
      else if (!read)
        check_preconditions(pre, &it->second, false);
      if (name == "objects.get")
        return send_json(res, 200, object_resource(bucket_name, it->second));
      if (name == "objects.download") return download(req, res, bucket_name, it->second);
      if (name == "objects.delete") {
        b.objects.erase(it);
        res.status = 204;
        return;
      }
      auto patch = json::parse(body.empty() ? "{}" : body);
      auto& o = it->second;
      for (auto& [k, v] : patch.items()) {
        if (k == "metadata" && v.is_object()) {
          auto& m = o.metadata["metadata"];
          if (!m.is_object()) m = json::object();
          for (auto& [mk, mv] : v.items()) {
            if (mv.is_null())
              m.erase(mk);
            else
              m[mk] = mv;
          }
        } else if (k == "contentType" || k == "contentEncoding" || k == "contentDisposition" ||
                   k == "contentLanguage" || k == "cacheControl" || k == "customTime") {
          if (v.is_null())
            o.metadata.erase(k);
          else
            o.metadata[k] = v;
        }
      }
      ++o.metageneration;
      o.updated = gcs_rfc3339_now();
      return send_json(res, 200, object_resource(bucket_name, o));
    }
    if (name == "upload.media") {
      if (!req.has_param("name")) throw HttpError{400, "required", "Required"};
      json md = json::object();
      return send_json(
          res, 200,
          store_object(seg[4], req.get_param_value("name"), md, read_preconditions(req), body,
                       req.get_header_value("X-Goog-Hash"), req.get_header_value("Content-Type")));
    }
    if (name == "upload.multipart") return upload_multipart(seg[4], req, res, body);
    if (name == "upload.resumable.start") return resumable_start(seg[4], req, res, body);
    if (name == "upload.resumable.put") return resumable_put(req, res, body);
    if (name == "upload.resumable.cancel") {
      auto it = sessions.find(req.get_param_value("upload_id"));
      if (it == sessions.end()) throw not_found("No such upload session.");
      sessions.erase(it);
      res.status = 499;
      return;
    }
    throw not_found("Not Found");
  }

  void get_iam_policy(const std::string& bucket_name, httplib::Response& res) {
    auto& b = bucket_or_throw(bucket_name);
    send_json(res, 200, iam_policy(bucket_name, b));
    // A pending interleaved writer changes the policy right after this read was answered.
    auto it = std::find_if(iam_interleaves.begin(), iam_interleaves.end(),
                           [&](const IamInterleave& x) { return x.bucket == bucket_name; });
    if (it == iam_interleaves.end()) return;
    add_binding_member(b, it->role, it->member);
    iam_interleaves.erase(it);
  }

  static void add_binding_member(Bucket& b, const std::string& role, const std::string& member) {
    for (auto& x : b.iam_bindings) {
      if (x.value("role", "") != role || x.contains("condition")) continue;
      auto& members = x["members"];
      if (std::find(members.begin(), members.end(), member) == members.end())
        members.push_back(member);
      touch(b);
      return;
    }
    b.iam_bindings.push_back({{"role", role}, {"members", json::array({member})}});
    touch(b);
  }

  static bool valid_member(const std::string& m) {
    if (m == "allUsers" || m == "allAuthenticatedUsers") return true;
    static const char* prefixes[] = {
        "user:",          "serviceAccount:", "group:",       "domain:",         "projectOwner:",
        "projectEditor:", "projectViewer:",  "principal://", "principalSet://", "deleted:"};
    for (auto* p : prefixes) {
      std::string_view pv(p);
      if (m.size() > pv.size() && m.compare(0, pv.size(), pv) == 0) return true;
    }
    return false;
  }

  void set_iam_policy(const std::string& bucket_name, httplib::Response& res,
                      const std::string& body) {
    auto& b = bucket_or_throw(bucket_name);
    auto policy = json::parse(body.empty() ? "{}" : body);
    if (!policy.is_object()) throw invalid("Policy must be a JSON object.");
    if (precondition_next) {
      precondition_next = false;
      throw precondition_failed();
    }
    // Without an etag the write is unconditional (as in GCS); with one it must be current.
    if (policy.contains("etag") && policy["etag"].is_string() &&
        policy["etag"].get<std::string>() != metageneration_etag(metageneration_of(b)))
      throw precondition_failed();
    json bindings = json::array();
    if (policy.contains("bindings")) {
      if (!policy["bindings"].is_array()) throw invalid("Invalid value for bindings.");
      for (const auto& x : policy["bindings"]) {
        if (!x.is_object() || !x.contains("role") || !x["role"].is_string())
          throw HttpError{400, "required", "Required: bindings.role"};
        auto role = x["role"].get<std::string>();
        if (role.rfind("roles/", 0) != 0 && role.rfind("projects/", 0) != 0 &&
            role.rfind("organizations/", 0) != 0)
          throw invalid("Role " + role + " is not a valid role.");
        json members = json::array();
        if (x.contains("members")) {
          if (!x["members"].is_array()) throw invalid("Invalid value for bindings.members.");
          for (const auto& m : x["members"]) {
            if (!m.is_string() || !valid_member(m.get<std::string>()))
              throw invalid("Invalid argument: member " + m.dump() + " is not valid.");
            if (std::find(members.begin(), members.end(), m) == members.end()) members.push_back(m);
          }
        }
        if (members.empty()) continue;  // IAM drops bindings without members
        json stored = {{"role", role}, {"members", members}};
        if (x.contains("condition") && !x["condition"].is_null())
          stored["condition"] = x["condition"];
        bindings.push_back(std::move(stored));
      }
    }
    b.iam_bindings = std::move(bindings);
    touch(b);
    send_json(res, 200, iam_policy(bucket_name, b));
  }

  void buckets_insert(const httplib::Request& req, httplib::Response& res,
                      const std::string& body) {
    if (!req.has_param("project")) throw HttpError{400, "required", "Required parameter: project"};
    auto b = json::parse(body.empty() ? "{}" : body);
    if (!b.contains("name") || !b["name"].is_string() || b["name"].get<std::string>().empty())
      throw HttpError{400, "required", "Required"};
    auto name = b["name"].get<std::string>();
    if (buckets.count(name)) {
      throw HttpError{409, "conflict",
                      "Your previous request to create the named bucket succeeded and you "
                      "already own it."};
    }
    Bucket bucket = new_bucket(name, req.get_param_value("project"), b);
    auto resource = bucket.resource;
    buckets.emplace(name, std::move(bucket));
    send_json(res, 200, resource);
  }

  void buckets_list(const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("project")) throw HttpError{400, "required", "Required parameter: project"};
    auto project = req.get_param_value("project");
    auto prefix = req.get_param_value("prefix");
    std::size_t max = 1000;
    if (req.has_param("maxResults"))
      max = std::clamp<std::size_t>(std::stoul(req.get_param_value("maxResults")), 1, 1000);
    std::string after = base64_decode(req.get_param_value("pageToken"));
    json items = json::array();
    std::string last;
    bool more = false;
    for (auto& [n, b] : buckets) {
      if (b.project != project || n.rfind(prefix, 0) != 0) continue;
      if (!after.empty() && n <= after) continue;
      if (items.size() == max) {
        more = true;
        break;
      }
      items.push_back(b.resource);
      last = n;
    }
    json out = {{"kind", "storage#buckets"}};
    if (!items.empty()) out["items"] = items;
    if (more) out["nextPageToken"] = base64(last);
    send_json(res, 200, out);
  }

  // GCS matchGlob: '*' matches within one '/'-separated segment, '**' across segments, '?' one
  // character other than '/'.
  static bool glob_match(std::string_view glob, std::string_view name) {
    if (glob.empty()) return name.empty();
    if (glob.substr(0, 2) == "**") {
      for (std::size_t i = 0; i <= name.size(); ++i)
        if (glob_match(glob.substr(2), name.substr(i))) return true;
      return false;
    }
    if (glob[0] == '*') {
      for (std::size_t i = 0; i <= name.size(); ++i) {
        if (glob_match(glob.substr(1), name.substr(i))) return true;
        if (i < name.size() && name[i] == '/') return false;
      }
      return false;
    }
    if (name.empty()) return false;
    if (glob[0] == '?' ? name[0] == '/' : glob[0] != name[0]) return false;
    return glob_match(glob.substr(1), name.substr(1));
  }

  void objects_list(const std::string& bucket_name, const httplib::Request& req,
                    httplib::Response& res) {
    auto& b = bucket_or_throw(bucket_name);
    auto prefix = req.get_param_value("prefix");
    auto delimiter = req.get_param_value("delimiter");
    auto start = req.get_param_value("startOffset");
    auto end = req.get_param_value("endOffset");
    auto glob = req.get_param_value("matchGlob");
    // Character classes and braces are GCS glob syntax too, but this fake does not match them:
    // refuse rather than answer wrongly.
    if (glob.find_first_of("[{\\") != std::string::npos)
      throw invalid("matchGlob: only *, ** and ? are supported by the fake GCS");
    std::size_t max = 1000;
    if (req.has_param("maxResults")) {
      try {
        max = std::clamp<std::size_t>(std::stoul(req.get_param_value("maxResults")), 1, 1000);
      } catch (...) {
        throw invalid("Invalid value for maxResults");
      }
    }
    // Page token: base64 of "o:" + last object name or "p:" + last prefix emitted.
    std::string token = base64_decode(req.get_param_value("pageToken"));
    std::string after_kind, after;
    if (token.size() >= 2) {
      after_kind = token.substr(0, 2);
      after = token.substr(2);
    }
    json items = json::array();
    json prefixes = json::array();
    std::size_t emitted = 0;
    std::string last_token;
    bool more = false;
    std::string current_prefix;
    for (auto& [n, o] : b.objects) {
      if (n.rfind(prefix, 0) != 0) continue;
      if (!glob.empty() && !glob_match(glob, n)) continue;
      if (!start.empty() && n < start) continue;
      if (!end.empty() && n >= end) continue;
      if (!after.empty()) {
        if (n <= after) continue;
        if (after_kind == "p:" && n.rfind(after, 0) == 0) continue;
      }
      std::string entry_kind = "o:", entry = n;
      if (!delimiter.empty()) {
        auto d = n.find(delimiter, prefix.size());
        if (d != std::string::npos) {
          entry_kind = "p:";
          entry = n.substr(0, d + delimiter.size());
          if (entry == current_prefix) continue;
        }
      }
      if (emitted == max) {
        more = true;
        break;
      }
      if (entry_kind == "p:") {
        current_prefix = entry;
        prefixes.push_back(entry);
      } else {
        items.push_back(object_resource(bucket_name, o));
      }
      ++emitted;
      last_token = entry_kind + entry;
    }
    json out = {{"kind", "storage#objects"}};
    if (!items.empty()) out["items"] = items;
    if (!prefixes.empty()) out["prefixes"] = prefixes;
    if (more) out["nextPageToken"] = base64(last_token);
    send_json(res, 200, out);
  }

  void download(const httplib::Request& req, httplib::Response& res, const std::string& bucket,
                const Object& o) {
    const auto size = o.data.size();
    std::size_t first = 0, last = size == 0 ? 0 : size - 1;
    bool ranged = false;
    auto range = req.get_header_value("Range");
    if (!range.empty() && range.rfind("bytes=", 0) == 0 && range.find(',') == std::string::npos) {
      auto spec = range.substr(6);
      auto dash = spec.find('-');
      if (dash != std::string::npos) {
        auto a = trim_gcs(spec.substr(0, dash)), b = trim_gcs(spec.substr(dash + 1));
        try {
          if (a.empty() && !b.empty()) {  // suffix: last N bytes
            auto n = std::stoull(b);
            if (n > 0 && size > 0) {
              first = n >= size ? 0 : size - n;
              ranged = true;
            }
          } else if (!a.empty()) {
            first = std::stoull(a);
            if (first >= size) {
              throw HttpError{416,
                              "requestedRangeNotSatisfiable",
                              "The requested range cannot be satisfied.",
                              {{"Content-Range", "bytes */" + std::to_string(size)}}};
            }
            if (!b.empty()) last = std::min<std::size_t>(std::stoull(b), size - 1);
            if (last < first) throw std::invalid_argument("range");
            ranged = true;
          }
        } catch (const std::invalid_argument&) {
          ranged = false;
          first = 0;
          last = size == 0 ? 0 : size - 1;
        }
      }
    }
    json r = object_resource(bucket, o);
    res.set_header("x-goog-generation", std::to_string(o.generation));
    res.set_header("x-goog-metageneration", std::to_string(o.metageneration));
    res.set_header(
        "x-goog-hash",
        "crc32c=" + r["crc32c"].get<std::string>() +
            (r.contains("md5Hash") ? ",md5=" + r["md5Hash"].get<std::string>() : std::string()));
    res.set_header("x-goog-stored-content-length", std::to_string(size));
    res.set_header("x-goog-stored-content-encoding",
                   r.value("contentEncoding", std::string("identity")));
    res.set_header("x-goog-storage-class", "STANDARD");
    res.set_header("ETag", "\"" + r.value("md5Hash", r["etag"].get<std::string>()) + "\"");
    res.set_header("Accept-Ranges", "bytes");
    if (r.contains("contentEncoding"))
      res.set_header("Content-Encoding", r["contentEncoding"].get<std::string>());
    auto content_type = r.value("contentType", std::string("application/octet-stream"));
    std::string slice = size == 0 ? std::string() : o.data.substr(first, last - first + 1);
    if (corrupt_downloads > 0 && !slice.empty()) {  // bytes change, x-goog-hash does not
      --corrupt_downloads;
      slice[slice.size() / 2] = static_cast<char>(slice[slice.size() / 2] ^ 0x5A);
    }
    if (ranged) {
      res.status = 206;
      res.set_header("Content-Range", "bytes " + std::to_string(first) + "-" +
                                          std::to_string(last) + "/" + std::to_string(size));
    } else {
      res.status = 200;
    }
    if (slice.empty()) {
      // httplib calls a zero-length content provider forever: an empty body is set directly.
      res.set_header("Content-Type", content_type);
      res.set_header("Content-Length", "0");
      return;
    }
    // A content provider keeps httplib from gzip-compressing text bodies on its own.
    auto data = std::make_shared<std::string>(std::move(slice));
    res.set_content_provider(
        data->size(), content_type,
        [data](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          sink.write(data->data() + offset, std::min(length, data->size() - offset));
          return true;
        });
  }

  // objects.compose: the destination becomes the concatenation of up to 32 source objects of the
  // same bucket (each optionally pinned to a generation and checked against
  // objectPreconditions.ifGenerationMatch), with the request's destination resource as its
  // metadata; PRE (the query's preconditions) applies to the destination. A missing source is a
  // 404, a source of the wrong generation a 412, as GCS answers. Caller holds mu.
  json compose(const std::string& bucket_name, const std::string& dest_name, const json& request,
               const Preconditions& pre) {
    auto& bucket = bucket_or_throw(bucket_name);
    if (!request.is_object()) throw invalid("Invalid JSON payload: expected an object.");
    const json sources = request.value("sourceObjects", json::array());
    if (!sources.is_array() || sources.empty())
      throw HttpError{400, "required", "Required: sourceObjects"};
    if (sources.size() > 32)
      throw invalid("The number of source components provided (" + std::to_string(sources.size()) +
                    ") exceeds the maximum (32)");
    auto generation_of = [](const json& v) {
      return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<std::int64_t>();
    };
    std::string data;
    std::int64_t components = 0;
    for (const auto& src : sources) {
      if (!src.is_object() || !src.contains("name") || !src["name"].is_string())
        throw HttpError{400, "required", "Required: sourceObjects.name"};
      const std::string name = src["name"].get<std::string>();
      auto it = bucket.objects.find(name);
      if (it == bucket.objects.end() ||
          (src.contains("generation") && generation_of(src["generation"]) != it->second.generation))
        throw object_not_found(bucket_name, name);
      const json want = src.value("objectPreconditions", json::object());
      if (want.contains("ifGenerationMatch") &&
          generation_of(want["ifGenerationMatch"]) != it->second.generation)
        throw precondition_failed();
      data += it->second.data;
      components += std::max<std::int64_t>(1, it->second.component_count);
    }
    json destination = request.value("destination", json::object());
    if (!destination.is_object()) throw invalid("Invalid value for destination.");
    json stored = store_object(bucket_name, dest_name, destination, pre, std::move(data), "", "");
    bucket.objects[dest_name].component_count = components;
    stored["componentCount"] = components;
    stored.erase("md5Hash");
    return stored;
  }

  void upload_multipart(const std::string& bucket, const httplib::Request& req,
                        httplib::Response& res, const std::string& body) {
    auto ct = req.get_header_value("Content-Type");
    auto bpos = ct.find("boundary=");
    if (lower(ct).rfind("multipart/related", 0) != 0 || bpos == std::string::npos)
      throw invalid("Content-Type must be multipart/related with a boundary.");
    auto boundary = ct.substr(bpos + 9);
    auto semi = boundary.find(';');
    if (semi != std::string::npos) boundary = boundary.substr(0, semi);
    boundary = trim_gcs(boundary);
    // Quoted either way: gcloud (Python's email package) sends boundary='===...=='.
    if (boundary.size() >= 2 && (boundary.front() == '"' || boundary.front() == '\'') &&
        boundary.back() == boundary.front())
      boundary = boundary.substr(1, boundary.size() - 2);
    const std::string delim = "--" + boundary;
    std::vector<std::pair<std::string, std::string>> parts;  // headers, body
    auto pos = body.find(delim);
    while (pos != std::string::npos) {
      pos += delim.size();
      if (body.compare(pos, 2, "--") == 0) break;
      if (body.compare(pos, 2, "\r\n") == 0)
        pos += 2;
      else if (body.compare(pos, 1, "\n") == 0)
        pos += 1;
      // A part may have no headers at all (gcloud's metadata part): a blank line right away.
      std::size_t hdr_end, sep;
      if (body.compare(pos, 2, "\r\n") == 0) {
        hdr_end = pos;
        sep = 2;
      } else if (body.compare(pos, 1, "\n") == 0) {
        hdr_end = pos;
        sep = 1;
      } else {
        hdr_end = body.find("\r\n\r\n", pos);
        sep = 4;
        if (hdr_end == std::string::npos) {
          hdr_end = body.find("\n\n", pos);
          sep = 2;
        }
      }
      if (hdr_end == std::string::npos) throw invalid("Malformed multipart body.");
      auto next = body.find("\r\n" + delim, hdr_end + sep);
      std::size_t trail = 2;
      if (next == std::string::npos) {
        next = body.find("\n" + delim, hdr_end + sep);
        trail = 1;
      }
      if (next == std::string::npos) throw invalid("Malformed multipart body.");
      parts.emplace_back(body.substr(pos, hdr_end - pos),
                         body.substr(hdr_end + sep, next - hdr_end - sep));
      pos = next + trail;
    }
    if (parts.size() != 2) throw invalid("Multipart upload needs exactly 2 parts.");
    auto metadata = json::parse(parts[0].second.empty() ? "{}" : parts[0].second);
    std::string media_type;
    std::istringstream hs(parts[1].first);
    for (std::string line; std::getline(hs, line);) {
      auto colon = line.find(':');
      if (colon != std::string::npos && lower(trim_gcs(line.substr(0, colon))) == "content-type")
        media_type = trim_gcs(line.substr(colon + 1));
    }
    std::string name = metadata.value("name", std::string());
    if (req.has_param("name")) name = req.get_param_value("name");
    send_json(res, 200,
              store_object(bucket, name, metadata, read_preconditions(req), parts[1].second,
                           req.get_header_value("X-Goog-Hash"), media_type));
  }

  void resumable_start(const std::string& bucket_name, const httplib::Request& req,
                       httplib::Response& res, const std::string& body) {
    auto& bucket = bucket_or_throw(bucket_name);
    Session s;
    s.bucket = bucket_name;
    s.metadata = json::parse(body.empty() ? "{}" : body);
    if (!s.metadata.is_object()) throw invalid("Metadata must be a JSON object.");
    s.name = req.has_param("name") ? req.get_param_value("name")
                                   : s.metadata.value("name", std::string());
    if (s.name.empty()) throw HttpError{400, "required", "Required"};
    if (!s.metadata.contains("contentType") && req.has_header("X-Upload-Content-Type"))
      s.metadata["contentType"] = req.get_header_value("X-Upload-Content-Type");
    if (req.has_header("X-Upload-Content-Length"))
      s.total = std::stoull(req.get_header_value("X-Upload-Content-Length"));
    s.pre = read_preconditions(req);
    auto it = bucket.objects.find(s.name);
    {
      // Fail fast on preconditions already false when the session starts (a pending
      // fail_precondition_next fault is kept for the finalisation).
      bool pending = precondition_next;
      precondition_next = false;
      try {
        check_preconditions(s.pre, it == bucket.objects.end() ? nullptr : &it->second, false);
      } catch (...) {
        precondition_next = pending;
        throw;
      }
      precondition_next = pending;
    }
    auto id = "fake-" + std::to_string(next_session++) + "-" + std::to_string(new_generation());
    sessions.emplace(id, std::move(s));
    res.status = 200;
    res.set_header("Location", base_url() + "/upload/storage/v1/b/" + bucket_name +
                                   "/o?uploadType=resumable&name=" +
                                   percent_encode(sessions[id].name) + "&upload_id=" + id);
    res.set_header("X-GUploader-UploadID", id);
    res.set_header("X-Goog-Upload-Chunk-Granularity", std::to_string(kChunkGranularity));
    res.set_content("", "text/plain");
  }

  void send_incomplete(httplib::Response& res, const Session& s) {
    res.status = 308;
    if (!s.data.empty()) res.set_header("Range", "bytes=0-" + std::to_string(s.data.size() - 1));
    res.set_header("X-Goog-Upload-Chunk-Granularity", std::to_string(kChunkGranularity));
    res.set_content("", "text/plain");
  }

  void finalize(httplib::Response& res, Session& s, const std::string& x_goog_hash) {
    auto resource =
        store_object(s.bucket, s.name, s.metadata, s.pre, s.data, x_goog_hash, std::string());
    s.result = resource;
    s.data.clear();
    s.data.shrink_to_fit();
    send_json(res, 200, resource);
  }

  // Cloud Storage ignores bytes sent again at offsets it already persisted ("resent data" in its
  // resumable-uploads page; Google's storage-testbench skips them the same way). They are counted
  // so a test can assert a fault-free upload resends nothing. Resent bytes that differ from the
  // persisted ones are refused: no document says what GCS does then (docs/fakes.md, Differs).
  void check_resent_bytes(const Session& s, std::uint64_t first, const std::string& body) {
    if (first >= s.data.size()) return;
    std::size_t overlap = std::min<std::uint64_t>(body.size(), s.data.size() - first);
    if (s.data.compare(first, overlap, body, 0, overlap) != 0)
      throw invalid("Invalid request: bytes " + std::to_string(first) + "-" +
                    std::to_string(first + overlap - 1) +
                    " were already persisted with different content.");
    counters["resent_bytes"] += static_cast<int>(overlap);
  }

  void resumable_put(const httplib::Request& req, httplib::Response& res, const std::string& body) {
    auto it = sessions.find(req.get_param_value("upload_id"));
    if (it == sessions.end()) throw not_found("No such upload session.");
    auto& s = it->second;
    auto cr = trim_gcs(req.get_header_value("Content-Range"));
    resumable_log.push_back({cr, s.data.size(), body.size(), false});
    if (s.result) return send_json(res, 200, *s.result);
    if (!buckets.count(s.bucket)) throw bucket_not_found();
    auto hash = req.get_header_value("X-Goog-Hash");
    if (cr.empty()) {
      // Whole object in one request.
      if (!s.data.empty()) throw invalid("Missing Content-Range for a partially uploaded session.");
      s.data = body;
      return finalize(res, s, hash);
    }
    if (cr.rfind("bytes ", 0) != 0) throw invalid("Invalid Content-Range: " + cr);
    auto spec = cr.substr(6);
    auto slash = spec.find('/');
    if (slash == std::string::npos) throw invalid("Invalid Content-Range: " + cr);
    auto range = spec.substr(0, slash), total_s = spec.substr(slash + 1);
    std::optional<std::uint64_t> total;
    try {
      if (total_s != "*") total = std::stoull(total_s);
    } catch (...) {
      throw invalid("Invalid Content-Range: " + cr);
    }
    if (total && s.total && *s.total != *total)
      throw invalid("Total size changed within the upload session.");
    // The declared total is only remembered once the request is accepted.
    const std::optional<std::uint64_t> known_total = total ? total : s.total;
    if (range == "*") {  // status query (or finalisation of a zero-length remainder)
      if (!body.empty()) throw invalid("Content-Range bytes */N must have an empty body.");
      if (total && *total < s.data.size()) throw invalid("Total is smaller than persisted data.");
      if (total) s.total = total;
      if (total && *total == s.data.size()) return finalize(res, s, hash);
      return send_incomplete(res, s);
    }
    auto dash = range.find('-');
    if (dash == std::string::npos) throw invalid("Invalid Content-Range: " + cr);
    std::uint64_t first = 0, last = 0;
    bool open_end = false;
    try {
      first = std::stoull(range.substr(0, dash));
      auto e = range.substr(dash + 1);
      if (e == "*") {
        open_end = true;  // "bytes N-*/T": the body is the whole remainder (Node single-shot)
        last = first + body.size() - 1;
      } else {
        last = std::stoull(e);
      }
    } catch (...) {
      throw invalid("Invalid Content-Range: " + cr);
    }
    if (!open_end && (last < first || last - first + 1 != body.size()))
      throw invalid("Content-Range " + cr + " does not match the body length " +
                    std::to_string(body.size()) + ".");
    if (first > s.data.size()) {
      throw invalid("Invalid request: the first byte " + std::to_string(first) +
                    " is past the persisted size " + std::to_string(s.data.size()) + ".");
    }
    std::uint64_t end_excl = first + body.size();
    bool is_last = open_end || (known_total && end_excl == *known_total);
    if (known_total && end_excl > *known_total) throw invalid("Data past the declared total size.");
    if (!is_last && body.size() % kChunkGranularity != 0) {
      throw invalid(
          "Invalid request. The number of bytes uploaded is required to be equal or "
          "greater than 262144, except for the final request (it's recommended to be "
          "the exact multiple of 262144). The received request contained " +
          std::to_string(body.size()) +
          " bytes, which does not meet this "
          "requirement.");
    }
    check_resent_bytes(s, first, body);
    if (total) s.total = total;
    std::uint64_t keep_end = end_excl;  // GCS may persist less of a chunk than it received
    if (persist_limit && !is_last) {
      keep_end = std::min<std::uint64_t>(end_excl, first + *persist_limit);
      persist_limit.reset();
    }
    if (keep_end > s.data.size())
      s.data.append(body, s.data.size() - first, keep_end - s.data.size());
    if (is_last) {
      if (open_end && !total) s.total = s.data.size();
      return finalize(res, s, hash);
    }
    send_incomplete(res, s);
  }
};

// ---- public API --------------------------------------------------------------------------------

FakeGcs::FakeGcs(std::string host, int port) : impl_(std::make_unique<Impl>()) {
  auto* impl = impl_.get();
  impl->host = std::move(host);
  auto with_reader = [impl](const httplib::Request& req, httplib::Response& res,
                            const httplib::ContentReader& reader) {
    impl->handle(req, res, &reader);
  };
  auto without_reader = [impl](const httplib::Request& req, httplib::Response& res) {
    impl->handle(req, res, nullptr);
  };
  impl->server.Get(".*", without_reader);
  impl->server.Delete(".*", without_reader);
  impl->server.Post(".*", with_reader);
  impl->server.Put(".*", with_reader);
  impl->server.Patch(".*", with_reader);
  impl->server.set_payload_max_length(1ull << 32);
  impl->server.set_keep_alive_max_count(1000);
  // Every idle keep-alive connection pins a worker until its 5 s timeout; clients that open
  // many sockets (the Node client's deleteFiles runs 10 at once) would stall on a small pool.
  impl->server.new_task_queue = [] { return new httplib::ThreadPool(64); };
  impl->server.set_tcp_nodelay(true);  // else every small answer waits ~40 ms for Nagle
  simulate_round_trips(impl->server);
  if (port == 0) {
    impl->port = impl->server.bind_to_any_port(impl->host);
  } else {
    impl->port = impl->server.bind_to_port(impl->host, port) ? port : -1;
  }
  if (impl->port <= 0) throw std::runtime_error("FakeGcs: cannot bind " + impl->host);
  raise_listen_backlog(impl->port);
  impl->thread = std::thread([impl] { impl->server.listen_after_bind(); });
  while (!impl->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeGcs::~FakeGcs() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int FakeGcs::port() const {
  return impl_->port;
}
std::string FakeGcs::url() const {
  return impl_->base_url();
}

void FakeGcs::fail_next(int n, int status, int retry_after_seconds, std::string route_prefix) {
  std::lock_guard lock(impl_->mu);
  if (n > 0) impl_->failures.push_back({n, status, retry_after_seconds, std::move(route_prefix)});
}
void FakeGcs::set_write_quota(double writes_per_second) {
  std::lock_guard lock(impl_->mu);
  impl_->write_quota_rate = writes_per_second;
  impl_->write_quotas.clear();
}
void FakeGcs::gather_next_writes(int n) {
  impl_->write_gathering.gather_next(n);
}
void FakeGcs::drop_connection_after(std::size_t bytes) {
  std::lock_guard lock(impl_->mu);
  impl_->drop_after = bytes;
}
void FakeGcs::persist_at_most_next(std::size_t bytes) {
  std::lock_guard lock(impl_->mu);
  impl_->persist_limit = bytes;
}
void FakeGcs::fail_precondition_next() {
  std::lock_guard lock(impl_->mu);
  impl_->precondition_next = true;
}
void FakeGcs::change_iam_policy_after_next_read(const std::string& bucket, const std::string& role,
                                                const std::string& member) {
  std::lock_guard lock(impl_->mu);
  impl_->iam_interleaves.push_back({bucket, role, member});
}
void FakeGcs::corrupt_next_download(int n) {
  std::lock_guard lock(impl_->mu);
  impl_->corrupt_downloads = n;
}
void FakeGcs::after_next(std::string route_prefix, std::function<void()> action) {
  std::lock_guard lock(impl_->mu);
  impl_->interleaves.push_back({std::move(route_prefix), std::move(action)});
}
int FakeGcs::pending_faults() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int>(impl_->failures.size() + impl_->interleaves.size()) +
         (impl_->drop_after ? 1 : 0) + (impl_->persist_limit ? 1 : 0) + impl_->corrupt_downloads +
         (impl_->precondition_next ? 1 : 0);
}
void FakeGcs::clear_faults() {
  std::lock_guard lock(impl_->mu);
  impl_->corrupt_downloads = 0;
  impl_->failures.clear();
  impl_->drop_after.reset();
  impl_->persist_limit.reset();
  impl_->precondition_next = false;
  impl_->iam_interleaves.clear();
  impl_->interleaves.clear();
}

int FakeGcs::request_count(const std::string& route) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->counters.find(route);
  return it == impl_->counters.end() ? 0 : it->second;
}
int FakeGcs::total_requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->total;
}
std::map<std::string, int> FakeGcs::request_counts() const {
  std::lock_guard lock(impl_->mu);
  return impl_->counters;
}
void FakeGcs::reset_counters() {
  std::lock_guard lock(impl_->mu);
  impl_->counters.clear();
  impl_->total = 0;
  impl_->resumable_log.clear();
}

void FakeGcs::create_bucket(const std::string& name, const std::string& project) {
  std::lock_guard lock(impl_->mu);
  if (impl_->buckets.count(name)) return;
  impl_->buckets.emplace(name, impl_->new_bucket(name, project, json{{"name", name}}));
}
std::optional<json> FakeGcs::bucket_iam_policy(const std::string& bucket) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->buckets.find(bucket);
  if (it == impl_->buckets.end()) return std::nullopt;
  return Impl::iam_policy(bucket, it->second);
}
bool FakeGcs::has_bucket(const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  return impl_->buckets.count(name) > 0;
}
std::optional<json> FakeGcs::bucket_resource(const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->buckets.find(name);
  if (it == impl_->buckets.end()) return std::nullopt;
  return it->second.resource;
}
json FakeGcs::put_object(const std::string& bucket, const std::string& name, std::string data,
                         const std::string& content_type) {
  create_bucket(bucket);
  std::lock_guard lock(impl_->mu);
  return impl_->store_object(bucket, name, json{{"contentType", content_type}}, Preconditions{},
                             std::move(data), std::string(), std::string());
}
json FakeGcs::compose_objects(const std::string& bucket, const std::string& dest,
                              const std::vector<std::string>& sources, const json& destination) {
  json request = {{"kind", "storage#composeRequest"},
                  {"destination", destination},
                  {"sourceObjects", json::array()}};
  for (const auto& s : sources) request["sourceObjects"].push_back({{"name", s}});
  std::lock_guard lock(impl_->mu);
  return impl_->compose(bucket, dest, request, Preconditions{});
}
bool FakeGcs::delete_object(const std::string& bucket, const std::string& name) {
  std::lock_guard lock(impl_->mu);
  auto b = impl_->buckets.find(bucket);
  return b != impl_->buckets.end() && b->second.objects.erase(name) > 0;
}
std::optional<std::string> FakeGcs::object_data(const std::string& bucket,
                                                const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  auto b = impl_->buckets.find(bucket);
  if (b == impl_->buckets.end()) return std::nullopt;
  auto o = b->second.objects.find(name);
  if (o == b->second.objects.end()) return std::nullopt;
  return o->second.data;
}
std::vector<std::string> FakeGcs::object_names(const std::string& bucket,
                                               const std::string& prefix) const {
  std::lock_guard lock(impl_->mu);
  std::vector<std::string> names;
  auto b = impl_->buckets.find(bucket);
  if (b == impl_->buckets.end()) return names;
  for (const auto& [name, object] : b->second.objects)
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  return names;
}
std::optional<json> FakeGcs::object_resource(const std::string& bucket,
                                             const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  auto b = impl_->buckets.find(bucket);
  if (b == impl_->buckets.end()) return std::nullopt;
  auto o = b->second.objects.find(name);
  if (o == b->second.objects.end()) return std::nullopt;
  return impl_->object_resource(bucket, o->second);
}
std::vector<FakeGcs::ResumableRequest> FakeGcs::resumable_requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->resumable_log;
}

std::size_t FakeGcs::open_resumable_sessions() const {
  std::lock_guard lock(impl_->mu);
  std::size_t n = 0;
  for (auto& [id, s] : impl_->sessions)
    if (!s.result) ++n;
  return n;
}

}  // namespace kinetic::fakes
