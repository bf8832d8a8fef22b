// FakeGcp, common part: one cpp-httplib server per API on 127.0.0.1, bearer-auth check (and, for
// Workload Identity tokens, the IAM check of fake_gcp_authz.cpp), SERVICE_DISABLED gating,
// google.rpc.Status errors, counters, injected faults and the google.longrunning operations shared
// by Service Usage and Artifact Registry.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "fakes/fake_gcp_internal.h"
#include "fakes/fake_latency.h"

namespace kinetic::fakes {

namespace gcp_detail {

RpcError rpc_error(int http, std::string message, json details) {
  return RpcError{http, status_name(http), std::move(message), std::move(details)};
}

std::string status_name(int http) {
  switch (http) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 409:
      return "ALREADY_EXISTS";
    case 412:
      return "FAILED_PRECONDITION";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 499:
      return "CANCELLED";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return http >= 500 ? "INTERNAL" : "UNKNOWN";
  }
}

int rpc_code(const std::string& name) {
  static const std::map<std::string, int> codes = {{"OK", 0},
                                                   {"CANCELLED", 1},
                                                   {"UNKNOWN", 2},
                                                   {"INVALID_ARGUMENT", 3},
                                                   {"DEADLINE_EXCEEDED", 4},
                                                   {"NOT_FOUND", 5},
                                                   {"ALREADY_EXISTS", 6},
                                                   {"PERMISSION_DENIED", 7},
                                                   {"RESOURCE_EXHAUSTED", 8},
                                                   {"FAILED_PRECONDITION", 9},
                                                   {"ABORTED", 10},
                                                   {"OUT_OF_RANGE", 11},
                                                   {"UNIMPLEMENTED", 12},
                                                   {"INTERNAL", 13},
                                                   {"UNAVAILABLE", 14},
                                                   {"DATA_LOSS", 15},
                                                   {"UNAUTHENTICATED", 16}};
  auto it = codes.find(name);
  return it == codes.end() ? 2 : it->second;
}

RpcError not_found(std::string message) {
  return rpc_error(404, std::move(message));
}
RpcError invalid_argument(std::string message) {
  return rpc_error(400, std::move(message));
}
RpcError already_exists(std::string message) {
  return rpc_error(409, std::move(message));
}
RpcError failed_precondition(std::string message) {
  RpcError e = rpc_error(400, std::move(message));
  e.status = "FAILED_PRECONDITION";
  return e;
}
RpcError aborted(std::string message) {
  RpcError e = rpc_error(409, std::move(message));
  e.status = "ABORTED";
  return e;
}

std::string rfc3339_now() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
            1000000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(us));
  return buf;
}

std::string base64url(std::string_view bytes) {
  auto s = base64_encode(bytes);
  for (auto& c : s) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return s;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* hexd = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(hexd[digest[i] >> 4]);
    out.push_back(hexd[digest[i] & 15]);
  }
  return out;
}

std::string project_number(const std::string& project) {
  if (!project.empty() && std::all_of(project.begin(), project.end(), ::isdigit)) return project;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : project) h = (h ^ c) * 1099511628211ull;
  return std::to_string(100000000000ull + h % 900000000000ull);
}

bool valid_resource_id(const std::string& id, std::size_t max_len) {
  if (id.empty() || id.size() > max_len) return false;
  if (id.front() < 'a' || id.front() > 'z') return false;
  if (id.back() == '-') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

bool is_zone(const std::string& location) {
  return std::count(location.begin(), location.end(), '-') >= 2;
}

std::string region_of(const std::string& location) {
  return is_zone(location) ? location.substr(0, location.rfind('-')) : location;
}

bool Call::match(std::initializer_list<const char*> pattern, const char* method_,
                 const char* verb_) const {
  if (method_ && method != method_) return false;
  if (verb != verb_) return false;
  if (pattern.size() != seg.size()) return false;
  std::size_t i = 0;
  for (const char* p : pattern) {
    if (std::string_view(p) != "*" && seg[i] != p) return false;
    ++i;
  }
  return true;
}

std::string Call::param(const std::string& name) const {
  return http && http->has_param(name) ? http->get_param_value(name) : std::string();
}

std::optional<ImageRef> parse_image(const std::string& image) {
  ImageRef r;
  auto slash = image.find('/');
  if (slash == std::string::npos || slash == 0) return std::nullopt;
  r.host = image.substr(0, slash);
  std::string rest = image.substr(slash + 1);
  auto at = rest.find('@');
  if (at != std::string::npos) {
    r.digest = rest.substr(at + 1);
    rest = rest.substr(0, at);
  }
  auto last_slash = rest.rfind('/');
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && (last_slash == std::string::npos || colon > last_slash)) {
    r.tag = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  if (r.tag.empty() && r.digest.empty()) r.tag = "latest";
  const std::string suffix = "-docker.pkg.dev";
  if (r.host.size() > suffix.size() &&
      r.host.compare(r.host.size() - suffix.size(), suffix.size(), suffix) == 0) {
    r.artifact_registry = true;
    r.location = r.host.substr(0, r.host.size() - suffix.size());
    auto s1 = rest.find('/');
    if (s1 == std::string::npos) return std::nullopt;
    auto s2 = rest.find('/', s1 + 1);
    if (s2 == std::string::npos) return std::nullopt;
    r.project = rest.substr(0, s1);
    r.repo = rest.substr(s1 + 1, s2 - s1 - 1);
    r.package = rest.substr(s2 + 1);
    if (r.project.empty() || r.repo.empty() || r.package.empty()) return std::nullopt;
  } else {
    r.package = rest;
  }
  return r;
}

}  // namespace gcp_detail

using namespace gcp_detail;

namespace {

const std::map<std::string, std::string>& api_titles() {
  static const std::map<std::string, std::string> titles = {
      {"container.googleapis.com", "Kubernetes Engine API"},
      {"cloudbuild.googleapis.com", "Cloud Build API"},
      {"artifactregistry.googleapis.com", "Artifact Registry API"},
      {"serviceusage.googleapis.com", "Service Usage API"},
      {"cloudresourcemanager.googleapis.com", "Cloud Resource Manager API"},
      {"iam.googleapis.com", "Identity and Access Management (IAM) API"},
      {"compute.googleapis.com", "Compute Engine API"},
      {"containerfilesystem.googleapis.com", "Container File System API"},
  };
  return titles;
}

json error_body(const RpcError& e) {
  json err = {{"code", e.http}, {"message", e.message}, {"status", e.status}};
  if (!e.details.empty()) err["details"] = e.details;
  return {{"error", err}};
}

// The verbs the APIs define (custom methods), split off the last segment as ":verb".
bool is_verb(const std::string& v) {
  static const std::set<std::string> verbs = {"enable",          "disable",
                                              "batchEnable",     "batchGet",
                                              "cancel",          "setSize",
                                              "setAutoscaling",  "setResourceLabels",
                                              "setLabels",       "updateMaster",
                                              "retry",           "approve",
                                              "setManagement",   "rollback",
                                              "completeUpgrade", "setIamPolicy",
                                              "getIamPolicy",    "testIamPermissions",
                                              "undelete",        "queryTestablePermissions"};
  return verbs.count(v) > 0;
}

}  // namespace

// ---- Impl: servers, requests ------------------------------------------------------------------

std::string FakeGcp::Impl::url(const std::string& service) const {
  for (auto& s : servers) {
    if (s->service == service) return "http://127.0.0.1:" + std::to_string(s->port) + "/";
  }
  throw std::invalid_argument("FakeGcp: no such service: " + service);
}

void FakeGcp::Impl::start(const std::string& service) {
  auto s = std::make_unique<Server>();
  s->service = service;
  auto* impl = this;
  auto handler = [impl, service](const httplib::Request& req, httplib::Response& res) {
    impl->handle(service, req, res);
  };
  s->http.Get(".*", handler);
  s->http.Post(".*", handler);
  s->http.Put(".*", handler);
  s->http.Patch(".*", handler);
  s->http.Delete(".*", handler);
  s->http.set_keep_alive_max_count(1000);
  s->http.new_task_queue = [] { return new httplib::ThreadPool(16); };
  simulate_round_trips(s->http);
  listen(*s);
  servers.push_back(std::move(s));
}

void FakeGcp::Impl::listen(Server& s) {
  s.http.set_tcp_nodelay(true);  // else every small answer waits ~40 ms for Nagle
  s.port = s.http.bind_to_any_port("127.0.0.1");
  if (s.port <= 0) throw std::runtime_error("FakeGcp: cannot bind 127.0.0.1 for " + s.service);
  auto* http = &s.http;
  s.thread = std::thread([http] { http->listen_after_bind(); });
  while (!s.http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void FakeGcp::Impl::send_json(httplib::Response& res, const json& body, int status) const {
  res.status = status;
  res.set_content(body.dump(), "application/json; charset=UTF-8");
}

bool FakeGcp::Impl::service_enabled(const std::string& project, const std::string& service) const {
  if (options.enabled_services.count(service)) return true;
  auto it = enabled.find(project);
  if (it != enabled.end() && it->second.count(service)) return true;
  // A project number and its id are the same project.
  for (auto& [p, set] : enabled) {
    if (set.count(service) && project_number(p) == project) return true;
  }
  return false;
}

void FakeGcp::Impl::require_enabled(const std::string& project, const std::string& api) const {
  if (project.empty() || service_enabled(project, api)) return;
  auto title_it = api_titles().find(api);
  std::string title = title_it == api_titles().end() ? api : title_it->second;
  std::string activation =
      "https://console.developers.google.com/apis/api/" + api + "/overview?project=" + project;
  RpcError e = rpc_error(
      403, title + " has not been used in project " + project +
               " before or it is disabled. Enable it by visiting " + activation +
               " then retry. If you enabled this API recently, wait a few minutes for the action "
               "to propagate to our systems and retry.");
  e.details = json::array(
      {{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
        {"reason", "SERVICE_DISABLED"},
        {"domain", "googleapis.com"},
        {"metadata",
         {{"service", api},
          {"consumer", "projects/" + project},
          {"activationUrl", activation},
          {"serviceTitle", title},
          {"containerInfo", project}}}},
       {{"@type", "type.googleapis.com/google.rpc.LocalizedMessage"},
        {"locale", "en-US"},
        {"message", e.message}},
       {{"@type", "type.googleapis.com/google.rpc.Help"},
        {"links", json::array({{{"description", "Google developers console API activation"},
                                {"url", activation}}})}}});
  throw e;
}

std::string FakeGcp::Impl::hex(int digits) {
  static const char* hexd = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < digits; ++i) s.push_back(hexd[rng() & 15]);
  return s;
}

std::string FakeGcp::Impl::uuid() {
  auto h = hex(32);
  h[12] = '4';
  h[16] = "89ab"[rng() & 3];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

LroOp& FakeGcp::Impl::new_lro(const std::string& name, const std::string& project, json metadata,
                              json response, std::function<void()> on_done) {
  LroOp op;
  op.name = name;
  op.project = project;
  op.target = std::max(0, options.operation_polls);
  op.metadata = std::move(metadata);
  op.response = std::move(response);
  op.on_done = std::move(on_done);
  auto& stored = lro_ops[name] = std::move(op);
  if (stored.target == 0) advance_lro(stored);
  return stored;
}

void FakeGcp::Impl::advance_lro(LroOp& op) {
  if (op.done) return;
  if (op.polls < op.target) ++op.polls;
  if (op.polls >= op.target) {
    op.done = true;
    if (op.on_done) op.on_done();
    op.on_done = nullptr;
  }
}

json FakeGcp::Impl::lro_json(const LroOp& op) const {
  json j = {{"name", op.name}};
  if (!op.metadata.is_null()) j["metadata"] = op.metadata;
  if (op.done) {  // proto3 JSON leaves out a false `done`
    j["done"] = true;
    if (!op.error.is_null())
      j["error"] = op.error;
    else if (!op.response.is_null())
      j["response"] = op.response;
  }
  return j;
}

void FakeGcp::Impl::handle(const std::string& service, const httplib::Request& req,
                           httplib::Response& res) {
  Call call;
  call.service = service;
  call.method = req.method;
  call.http = &req;
  std::string target = req.target.empty() ? req.path : req.target;
  call.raw_path = target.substr(0, target.find('?'));

  if (call.method == "GET" && call.raw_path == "/_fake/counters") {
    std::lock_guard lock(mu);
    return send_json(res, json(counters[service]));
  }

  // Segments, each percent-decoded once (an AR package "a%2Fb" arrives as one segment).
  for (std::size_t pos = 1; pos <= call.raw_path.size();) {
    auto slash = call.raw_path.find('/', pos);
    auto seg =
        call.raw_path.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
    call.seg.push_back(percent_decode(seg));
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  if (!call.seg.empty()) {
    auto& last = call.seg.back();
    auto colon = last.rfind(':');
    if (colon != std::string::npos && is_verb(last.substr(colon + 1))) {
      call.verb = last.substr(colon + 1);
      last = last.substr(0, colon);
    }
  }
  // Canonical route: collection names kept, ids replaced by {name}.
  std::string canonical;
  if (call.seg.size() >= 2 && call.seg[0] == "v1" && call.seg[1] == "operations") {
    canonical = call.seg.size() > 2 ? "/v1/operations/{name}" : "/v1/operations";
  } else {
    for (std::size_t i = 0; i < call.seg.size(); ++i) {
      canonical += "/";
      canonical += (i >= 2 && i % 2 == 0) ? std::string("{name}") : call.seg[i];
    }
  }
  if (!call.verb.empty()) canonical += ":" + call.verb;
  call.canonical = call.method + " " + canonical;

  std::vector<std::function<void()>> callbacks;
  try {
    {
      std::lock_guard lock(mu);
      ++counters[service][call.canonical];
      ++total;
      std::string raw_key = call.method + " " + call.raw_path;
      for (auto it = failures.begin(); it != failures.end(); ++it) {
        if (it->service != service) continue;
        if (raw_key.rfind(it->prefix, 0) != 0 && call.canonical.rfind(it->prefix, 0) != 0) continue;
        int status = it->status;
        if (--it->remaining <= 0) failures.erase(it);
        ++counters[service]["injected_failures"];
        std::string api = service + ".googleapis.com";
        RpcError e = rpc_error(status, status == 429 ? "Quota exceeded for quota metric "
                                                       "'Requests' and limit 'Requests per "
                                                       "minute' of service '" +
                                                           api + "'."
                                       : status == 503 ? "The service is currently unavailable."
                                                       : "Internal error encountered.");
        if (status == 429) {
          e.details = json::array(
              {{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                {"reason", "RATE_LIMIT_EXCEEDED"},
                {"domain", "googleapis.com"},
                {"metadata",
                 {{"service", api},
                  {"quota_metric", api + "/default"},
                  {"quota_limit", "defaultPerMinutePerProject"}}}},
               {{"@type", "type.googleapis.com/google.rpc.RetryInfo"}, {"retryDelay", "1s"}}});
        }
        throw e;
      }
    }
    auto auth = req.get_header_value("Authorization");
    if (auth.size() < 8 ||
        !std::equal(auth.begin(), auth.begin() + 7, "Bearer ", [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"https://accounts.google.com/\"");
      RpcError e = rpc_error(
          401,
          "Request is missing required authentication credential. Expected OAuth 2 access "
          "token, login cookie or other valid authentication credential. See "
          "https://developers.google.com/identity/sign-in/web/devconsole-project.");
      e.details = json::array({{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                                {"reason", "CREDENTIALS_MISSING"},
                                {"domain", "googleapis.com"},
                                {"metadata", {{"service", service + ".googleapis.com"}}}}});
      throw e;
    }
    const std::string token = auth.substr(7);
    if (!req.body.empty()) {
      try {
        call.body = json::parse(req.body);
      } catch (const json::exception&) {
        throw invalid_argument("Invalid JSON payload received. Unexpected token.\n" +
                               req.body.substr(0, 40) + "\n^");
      }
      if (!call.body.is_object())
        throw invalid_argument("Invalid JSON payload received. Expected an object.");
    }
    {
      std::lock_guard lock(mu);
      try {
        if (call.seg.size() >= 3 && call.seg[0] == "v1" && call.seg[1] == "projects")
          require_enabled(call.seg[2], service + ".googleapis.com");
        // After the enablement check, before routing: as at Google, a caller without the
        // permission learns nothing of whether the resource exists.
        authorize(call, token);
        call.workload_identity = wi_tokens.count(token) > 0;
        if (service == "serviceusage")
          serviceusage(call, res);
        else if (service == "container")
          container(call, res);
        else if (service == "cloudbuild")
          cloudbuild(call, res);
        else if (service == "artifactregistry")
          artifactregistry(call, res);
        else if (service == "cloudresourcemanager")
          cloudresourcemanager(call, res);
        else if (service == "iam")
          iam(call, res);
        else if (service == "compute")
          compute(call, res);
        else
          throw not_found("Method not found.");
      } catch (...) {
        callbacks.swap(deferred);
        throw;
      }
      callbacks.swap(deferred);
    }
  } catch (const RpcError& e) {
    send_json(res, error_body(e), e.http);
  } catch (const json::exception& e) {
    send_json(res, error_body(invalid_argument(std::string("Invalid value: ") + e.what())), 400);
  }
  for (auto& cb : callbacks) cb();
}

// ---- public API ---------------------------------------------------------------------------------

FakeGcp::FakeGcp(FakeGcpOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (!impl_->options.images) {
    impl_->own_images = std::make_unique<FakeImageStore>();
    impl_->options.images = impl_->own_images.get();
  }
  for (const char* s : {"serviceusage", "container", "cloudbuild", "artifactregistry",
                        "cloudresourcemanager", "iam", "compute"})
    impl_->start(s);
}

FakeGcp::~FakeGcp() {
  std::vector<Impl::Server*> all;
  for (auto& s : impl_->servers) all.push_back(s.get());
  {
    std::lock_guard lock(impl_->wi_mu);
    for (auto& [key, s] : impl_->wi_servers) all.push_back(s.get());
  }
  for (auto* s : all) s->http.stop();
  // httplib 0.11 workers idle on a kept-alive connection until its 5 s timeout even after stop():
  // shutting the accepted sockets down wakes them at once (clients in the same process often
  // outlive the fake).
  std::set<int> ports;
  for (auto* s : all) ports.insert(s->port);
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (auto* entry = readdir(dir)) {
      char* end = nullptr;
      long fd = std::strtol(entry->d_name, &end, 10);
      if (*end != '\0' || fd < 0) continue;
      sockaddr_storage local{}, peer{};
      socklen_t ll = sizeof local, pl = sizeof peer;
      if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &ll) != 0 ||
          getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &pl) != 0 ||
          local.ss_family != AF_INET)
        continue;
      if (ports.count(ntohs(reinterpret_cast<const sockaddr_in&>(local).sin_port)))
        ::shutdown(static_cast<int>(fd), SHUT_RDWR);
    }
    closedir(dir);
  }
  for (auto* s : all) {
    if (s->thread.joinable()) s->thread.join();
  }
}

std::string FakeGcp::url(const std::string& service) const {
  return impl_->url(service);
}

int FakeGcp::port(const std::string& service) const {
  for (auto& s : impl_->servers) {
    if (s->service == service) return s->port;
  }
  throw std::invalid_argument("FakeGcp: no such service: " + service);
}

void FakeGcp::enable_service(const std::string& project, const std::string& service) {
  std::lock_guard lock(impl_->mu);
  impl_->enabled[project].insert(service);
}

bool FakeGcp::service_enabled(const std::string& project, const std::string& service) const {
  std::lock_guard lock(impl_->mu);
  return impl_->service_enabled(project, service);
}

std::optional<nlohmann::json> FakeGcp::cluster(const std::string& project,
                                               const std::string& location,
                                               const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->clusters.find(project + "/" + location + "/" + name);
  if (it == impl_->clusters.end()) return std::nullopt;
  return impl_->cluster_json(it->second);
}

std::vector<nlohmann::json> FakeGcp::clusters() const {
  std::lock_guard lock(impl_->mu);
  std::vector<nlohmann::json> out;
  for (auto& [key, c] : impl_->clusters) out.push_back(impl_->cluster_json(c));
  return out;
}

bool FakeGcp::has_image(const std::string& image) const {
  std::lock_guard lock(impl_->mu);
  return impl_->has_image_locked(image);
}

void FakeGcp::put_image(const std::string& image) {
  put_image(image, FakeImageStore::default_built_image());
}

void FakeGcp::put_image(const std::string& image, const FakeImage& content) {
  std::lock_guard lock(impl_->mu);
  impl_->push_image(image, true);
  impl_->options.images->put(image, content);
}

FakeImageStore& FakeGcp::images() {
  return *impl_->options.images;
}

int FakeGcp::builds_created() const {
  std::lock_guard lock(impl_->mu);
  return impl_->builds_created;
}

void FakeGcp::fail_next(const std::string& service, int n, int status,
                        const std::string& route_prefix) {
  std::lock_guard lock(impl_->mu);
  if (n > 0) impl_->failures.push_back({service, n, status, route_prefix});
}

int FakeGcp::pending_faults() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int>(impl_->failures.size() + impl_->policy_interleaves.size()) +
         impl_->unseen_role_refusals;
}

void FakeGcp::fail_next_pool(const std::string& code, const std::string& message) {
  std::lock_guard lock(impl_->mu);
  impl_->pool_failures.emplace_back(code, message);
}

std::map<std::string, int> FakeGcp::request_counts(const std::string& service) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->counters.find(service);
  return it == impl_->counters.end() ? std::map<std::string, int>{} : it->second;
}

int FakeGcp::total_requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->total;
}

void FakeGcp::reset_counters() {
  std::lock_guard lock(impl_->mu);
  impl_->counters.clear();
  impl_->total = 0;
}

}  // namespace kinetic::fakes
