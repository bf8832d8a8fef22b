// FakeGcp: Artifact Registry v1 (repositories create/get/list/delete, packages, tags,
// dockerImages and operations.get) and the image store that builds push to. A package holding
// '/' is spelled "%2F" in resource names; on the wire it arrives as %2F or (gcloud) %252F.
#include <algorithm>

#include "fakes/fake_gcp_internal.h"

namespace kinetic::fakes {

using namespace gcp_detail;

namespace {

std::string encode_package(const std::string& pkg) {
  std::string out;
  for (char c : pkg) {
    if (c == '/')
      out += "%2F";
    else
      out.push_back(c);
  }
  return out;
}

// Pages a JSON array by offset tokens.
json page(const std::vector<json>& all, const Call& call, const char* key) {
  std::size_t page_size = 100, offset = 0;
  if (!call.param("pageSize").empty()) page_size = std::stoul(call.param("pageSize"));
  if (page_size == 0 || page_size > 1000) page_size = 1000;
  if (!call.param("pageToken").empty()) offset = std::stoul(call.param("pageToken"));
  json list = json::array();
  for (std::size_t i = offset; i < all.size() && i < offset + page_size; ++i)
    list.push_back(all[i]);
  json out = json::object();
  if (!list.empty()) out[key] = list;
  if (offset + page_size < all.size()) out["nextPageToken"] = std::to_string(offset + page_size);
  return out;
}

}  // namespace

ArRepo& FakeGcp::Impl::ensure_repo(const std::string& project, const std::string& location,
                                   const std::string& repo, json body) {
  auto name = "projects/" + project + "/locations/" + location + "/repositories/" + repo;
  auto it = repos.find(name);
  if (it != repos.end()) return it->second;
  json r = body.is_object() ? body : json::object();
  auto now = rfc3339_now();
  r["name"] = name;
  if (!r.contains("format")) r["format"] = "DOCKER";
  if (r.value("mode", std::string("MODE_UNSPECIFIED")) == "MODE_UNSPECIFIED")
    r["mode"] = "STANDARD_REPOSITORY";
  r["createTime"] = now;
  r["updateTime"] = now;
  r["sizeBytes"] = "0";
  r["satisfiesPzi"] = true;
  if (r["format"] == "DOCKER")
    r["registryUri"] = location + "-docker.pkg.dev/" + project + "/" + repo;
  ArRepo ar;
  ar.resource = r;
  return repos[name] = std::move(ar);
}

std::optional<std::string> FakeGcp::Impl::push_image(const std::string& image, bool create_repo) {
  auto ref = parse_image(image);
  auto digest = "sha256:" + sha256_hex(image + "#" + std::to_string(++sequence));
  if (!ref || !ref->artifact_registry) {
    other_images.insert(image);
    return digest;
  }
  auto it = repos.find(ref->repo_name());
  if (it == repos.end()) {
    if (!create_repo) return std::nullopt;
    ensure_repo(ref->project, ref->location, ref->repo, json::object());
    it = repos.find(ref->repo_name());
  }
  auto& repo = it->second;
  if (!ref->digest.empty()) digest = ref->digest;
  ArImage img;
  img.digest = digest;
  img.upload_time = rfc3339_now();
  img.size = 50000000 + static_cast<std::int64_t>(sequence % 1000) * 1024;
  repo.images[ref->package][digest] = img;
  if (!ref->tag.empty()) repo.tags[ref->package][ref->tag] = digest;
  repo.resource["updateTime"] = img.upload_time;
  return digest;
}

bool FakeGcp::Impl::has_image_locked(const std::string& image) const {
  auto ref = parse_image(image);
  if (!ref || !ref->artifact_registry) return other_images.count(image) > 0;
  auto it = repos.find(ref->repo_name());
  if (it == repos.end()) return false;
  auto& repo = it->second;
  if (!ref->digest.empty()) {
    auto p = repo.images.find(ref->package);
    if (p == repo.images.end() || !p->second.count(ref->digest)) return false;
    if (ref->tag.empty()) return true;
  }
  auto p = repo.tags.find(ref->package);
  return p != repo.tags.end() && p->second.count(ref->tag) > 0;
}

void FakeGcp::Impl::artifactregistry(Call& call, httplib::Response& res) {
  const auto& s = call.seg;
  if (s.size() < 5 || s[0] != "v1" || s[1] != "projects" || s[3] != "locations")
    throw not_found("Method not found.");
  const std::string project = s[2];
  const std::string location = s[4];
  const std::string parent = "projects/" + project + "/locations/" + location;
  auto find_repo = [&](const std::string& id) -> ArRepo& {
    auto it = repos.find(parent + "/repositories/" + id);
    if (it == repos.end()) throw not_found("Requested entity was not found.");
    return it->second;
  };
  auto tag_json = [](const std::string& repo_name, const std::string& pkg, const std::string& tag,
                     const std::string& digest) {
    auto p = repo_name + "/packages/" + encode_package(pkg);
    return json{{"name", p + "/tags/" + tag}, {"version", p + "/versions/" + digest}};
  };
  auto image_json = [&](const std::string& repo_name, const std::string& pkg, const ArImage& img,
                        const ArRepo& repo) {
    json tags = json::array();
    auto t = repo.tags.find(pkg);
    if (t != repo.tags.end()) {
      for (auto& [tag, digest] : t->second)
        if (digest == img.digest) tags.push_back(tag);
    }
    auto registry = repo.resource.value("registryUri", std::string());
    json j = {{"name", repo_name + "/dockerImages/" + encode_package(pkg) + "@" + img.digest},
              {"uri", registry + "/" + pkg + "@" + img.digest},
              {"imageSizeBytes", std::to_string(img.size)},
              {"uploadTime", img.upload_time},
              {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
              {"buildTime", img.upload_time},
              {"updateTime", img.upload_time}};
    if (!tags.empty()) j["tags"] = tags;
    return j;
  };

  if (call.match({"v1", "projects", "*", "locations", "*", "operations", "*"}, "GET")) {
    auto it = lro_ops.find(parent + "/operations/" + s[6]);
    if (it == lro_ops.end()) throw not_found("Requested entity was not found.");
    advance_lro(it->second);
    return send_json(res, lro_json(it->second));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "repositories"}, "POST")) {
    auto id = call.param("repositoryId");
    if (id.empty()) throw invalid_argument("Repository ID must be specified.");
    if (!valid_resource_id(id, 63))
      throw invalid_argument(
          "Invalid repository ID \"" + id +
          "\": must start with a lowercase letter, contain only lowercase letters, digits and "
          "hyphens, end with a letter or digit, and be at most 63 characters long.");
    auto format = call.body.value("format", std::string());
    static const std::set<std::string> formats = {
        "DOCKER", "MAVEN", "NPM", "APT", "YUM", "GOOGET", "PYTHON", "KFP", "GO", "GENERIC", "RUBY"};
    if (format.empty() || format == "FORMAT_UNSPECIFIED")
      throw invalid_argument("Repository format must be specified.");
    if (!formats.count(format)) throw invalid_argument("Invalid repository format: " + format);
    if (repos.count(parent + "/repositories/" + id))
      throw already_exists("the repository already exists");
    json body = call.body;
    body.erase("name");
    auto& repo = ensure_repo(project, location, id, body);
    json response = repo.resource;
    response["@type"] = "type.googleapis.com/google.devtools.artifactregistry.v1.Repository";
    auto& op = new_lro(
        parent + "/operations/" + uuid(), project,
        {{"@type", "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata"}},
        response, nullptr);
    return send_json(res, lro_json(op));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "repositories"}, "GET")) {
    std::vector<json> all;
    for (auto& [name, repo] : repos) {
      if (name.rfind(parent + "/repositories/", 0) == 0) all.push_back(repo.resource);
    }
    return send_json(res, page(all, call, "repositories"));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "repositories", "*"}, "GET"))
    return send_json(res, find_repo(s[6]).resource);
  if (call.match({"v1", "projects", "*", "locations", "*", "repositories", "*"}, "DELETE")) {
    find_repo(s[6]);
    auto name = parent + "/repositories/" + s[6];
    auto& op = new_lro(
        parent + "/operations/" + uuid(), project,
        {{"@type", "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata"}},
        {{"@type", "type.googleapis.com/google.protobuf.Empty"}},
        [this, name] { repos.erase(name); });
    return send_json(res, lro_json(op));
  }
  if (s.size() < 8 || s[5] != "repositories") throw not_found("Method not found.");
  auto& repo = find_repo(s[6]);
  const auto repo_name = parent + "/repositories/" + s[6];
  // Packages holding '/' arrive as one segment "a%2Fb" (decoded once from %252F) or "a/b".
  auto package_at = [&](std::size_t i) { return percent_decode(s[i]); };

  if (call.match({"v1", "projects", "*", "locations", "*", "repositories", "*", "packages"},
                 "GET")) {
    std::vector<json> all;
    for (auto& [pkg, imgs] : repo.images) {
      std::string created, updated;
      for (auto& [d, img] : imgs) {
        if (created.empty() || img.upload_time < created) created = img.upload_time;
        if (img.upload_time > updated) updated = img.upload_time;
      }
      all.push_back({{"name", repo_name + "/packages/" + encode_package(pkg)},
                     {"createTime", created},
                     {"updateTime", updated}});
    }
    return send_json(res, page(all, call, "packages"));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "repositories", "*", "packages", "*"},
                 "GET")) {
    auto pkg = package_at(8);
    auto it = repo.images.find(pkg);
    if (it == repo.images.end()) throw not_found("Requested entity was not found.");
    std::string created, updated;
    for (auto& [d, img] : it->second) {
      if (created.empty() || img.upload_time < created) created = img.upload_time;
      if (img.upload_time > updated) updated = img.upload_time;
    }
    return send_json(res, {{"name", repo_name + "/packages/" + encode_package(pkg)},
                           {"createTime", created},
                           {"updateTime", updated}});
  }
  if (call.match(
          {"v1", "projects", "*", "locations", "*", "repositories", "*", "packages", "*", "tags"},
          "GET")) {
    auto pkg = package_at(8);
    auto filter = call.param("filter");
    std::vector<json> all;
    auto it = repo.tags.find(pkg);
    if (it != repo.tags.end()) {
      for (auto& [tag, digest] : it->second) {
        auto j = tag_json(repo_name, pkg, tag, digest);
        if (!filter.empty() && filter.find(j["version"].get<std::string>()) == std::string::npos &&
            filter.find(digest) == std::string::npos)
          continue;
        all.push_back(j);
      }
    }
    return send_json(res, page(all, call, "tags"));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "repositories", "*", "packages", "*",
                  "tags", "*"},
                 "GET")) {
    auto pkg = package_at(8);
    auto it = repo.tags.find(pkg);
    if (it == repo.tags.end() || !it->second.count(s[10]))
      throw not_found("Requested entity was not found.");
    return send_json(res, tag_json(repo_name, pkg, s[10], it->second.at(s[10])));
  }
  if (call.match({"v1", "projects", "*", "locations", "*", "repositories", "*", "dockerImages"},
                 "GET")) {
    std::vector<json> all;
    for (auto& [pkg, imgs] : repo.images) {
      for (auto& [d, img] : imgs) all.push_back(image_json(repo_name, pkg, img, repo));
    }
    return send_json(res, page(all, call, "dockerImages"));
  }
  if (call.match(
          {"v1", "projects", "*", "locations", "*", "repositories", "*", "dockerImages", "*"},
          "GET")) {
    auto spec = package_at(8);
    auto at = spec.rfind('@');
    if (at == std::string::npos) throw not_found("Requested entity was not found.");
    auto pkg = spec.substr(0, at), digest = spec.substr(at + 1);
    auto it = repo.images.find(pkg);
    if (it == repo.images.end() || !it->second.count(digest))
      throw not_found("Requested entity was not found.");
    return send_json(res, image_json(repo_name, pkg, it->second.at(digest), repo));
  }
  throw not_found("Method not found.");
}

}  // namespace kinetic::fakes
