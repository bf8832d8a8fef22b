// FakeGcp: Cloud Build v1 (builds create/get/list/cancel, regional and global, and
// operations.get). A build moves QUEUED → WORKING → terminal one step per poll. With a FakeGcs
// the source archive is fetched and unpacked in memory and its Dockerfile interpreted by the
// image store (fake_images.h): the base must exist, apt and pip packages must be known, the smoke
// script really runs inside the image. The build log is written to logsBucket/log-ID.txt, and
// pushed images become tags in the fake Artifact Registry, remembered with what they hold.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <sstream>

#include "fakes/fake_gcp_internal.h"
#include "fakes/fake_gcs.h"

namespace kinetic::fakes {

using namespace gcp_detail;

namespace {

using Files = std::map<std::string, std::string>;

// Unpacks a .tar.gz (or .zip) in memory: regular files, path → contents (1 MiB cap each).
std::optional<Files> unpack(const std::string& data, std::string& error) {
  Files files;
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_zip(a);
  if (archive_read_open_memory(a, data.data(), data.size()) != ARCHIVE_OK) {
    error = archive_error_string(a) ? archive_error_string(a) : "not an archive";
    archive_read_free(a);
    return std::nullopt;
  }
  archive_entry* entry = nullptr;
  int rc = ARCHIVE_OK;
  while ((rc = archive_read_next_header(a, &entry)) == ARCHIVE_OK) {
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    std::string path = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    while (path.rfind("./", 0) == 0) path = path.substr(2);
    std::string contents;
    char buf[16384];
    for (la_ssize_t n; (n = archive_read_data(a, buf, sizeof buf)) > 0;) {
      if (contents.size() < (1u << 20)) contents.append(buf, static_cast<std::size_t>(n));
    }
    files[path] = std::move(contents);
  }
  if (rc != ARCHIVE_EOF) {
    error = archive_error_string(a) ? archive_error_string(a) : "corrupt archive";
    archive_read_free(a);
    return std::nullopt;
  }
  archive_read_free(a);
  return files;
}

struct StepOutcome {
  std::vector<std::string> lines;  // without the "Step #N: " prefix
  bool failed = false;
  std::vector<std::string> destinations;  // kaniko --destination
};

std::string human_size(std::size_t n) {
  char buf[32];
  if (n < 1024)
    std::snprintf(buf, sizeof buf, "%zu B", n);
  else
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024.0);
  return buf;
}

}  // namespace

namespace {}  // namespace

void FakeGcp::Impl::advance_build(CloudBuild& b) {
  if (b.terminal) return;
  auto& r = b.resource;
  const int bp = std::max(0, options.build_polls);
  auto write_log = [&](std::size_t lines) {
    if (!options.gcs) return;
    auto bucket = r.value("logsBucket", std::string());
    if (bucket.rfind("gs://", 0) == 0) bucket = bucket.substr(5);
    std::string prefix;
    auto slash = bucket.find('/');
    if (slash != std::string::npos) {
      prefix = bucket.substr(slash + 1);
      bucket = bucket.substr(0, slash);
      if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    }
    if (bucket.empty()) return;
    std::string text;
    for (std::size_t i = 0; i < lines && i < b.plan.log_lines.size(); ++i)
      text += b.plan.log_lines[i] + "\n";
    options.gcs->put_object(bucket, prefix + "log-" + b.id + ".txt", text, "text/plain");
  };
  auto start_working = [&] {
    if (r["status"] == "WORKING") return;
    r["status"] = "WORKING";
    r["startTime"] = rfc3339_now();
    if (!r["steps"].empty()) r["steps"][0]["status"] = "WORKING";
    write_log(b.plan.header_lines);
  };
  if (b.polls < 2 * bp) ++b.polls;
  if (b.polls < bp) return;
  start_working();
  if (b.polls < 2 * bp) return;

  // Terminal: pushes happen now (the repository may have been created meanwhile).
  auto& plan = b.plan;
  auto now = rfc3339_now();
  json images = json::array();
  if (plan.status == "SUCCESS") {
    std::vector<std::pair<std::string, std::string>> pushed;
    for (auto& image : plan.pushed) {
      auto digest = push_image(image, false);
      if (!digest) {
        auto ref = parse_image(image);
        std::string repo = ref ? ref->repo_name() : image;
        std::string detail =
            "failed to push " + image + ": name unknown: Repository \"" + repo + "\" not found";
        plan.status = "FAILURE";
        plan.failure_info = {{"type", "PUSH_FAILED"}, {"detail", detail}};
        plan.status_detail = detail;
        plan.log_lines.push_back("PUSH");
        plan.log_lines.push_back("Pushing " + image);
        plan.log_lines.push_back("The push refers to repository [" +
                                 image.substr(0, image.rfind(':')) + "]");
        plan.log_lines.push_back("name unknown: Repository \"" + repo + "\" not found");
        plan.log_lines.push_back("ERROR");
        plan.log_lines.push_back("ERROR: " + detail);
        break;
      }
      pushed.emplace_back(image, *digest);
      auto content = plan.built.find(image);
      options.images->put(image, content != plan.built.end()
                                     ? content->second
                                     : FakeImageStore::default_built_image());
    }
    if (plan.status == "SUCCESS") {
      // Only build.images are reported in results (kaniko pushes by itself).
      std::set<std::string> declared;
      for (auto& i : r.value("images", json::array())) declared.insert(i.get<std::string>());
      bool push_phase = !declared.empty();
      if (push_phase) plan.log_lines.push_back("PUSH");
      for (auto& [image, digest] : pushed) {
        if (!declared.count(image)) continue;
        images.push_back({{"name", image},
                          {"digest", digest},
                          {"pushTiming", {{"startTime", now}, {"endTime", now}}}});
        auto tag = image.substr(image.rfind(':') + 1);
        plan.log_lines.push_back("Pushing " + image);
        plan.log_lines.push_back("The push refers to repository [" +
                                 image.substr(0, image.rfind(':')) + "]");
        plan.log_lines.push_back(tag + ": digest: " + digest + " size: 2841");
      }
      plan.log_lines.push_back("DONE");
    }
  }
  r["status"] = plan.status;
  r["finishTime"] = now;
  if (!r.contains("startTime")) r["startTime"] = now;
  r["timing"] = {{"BUILD", {{"startTime", r["startTime"]}, {"endTime", now}}},
                 {"FETCHSOURCE", {{"startTime", r["startTime"]}, {"endTime", r["startTime"]}}}};
  json step_images = json::array();
  for (std::size_t i = 0; i < r["steps"].size(); ++i) {
    auto& step = r["steps"][i];
    int idx = static_cast<int>(i);
    if (plan.failed_step < 0 || idx < plan.failed_step) {
      step["status"] = "SUCCESS";
      step["timing"] = {{"startTime", r["startTime"]}, {"endTime", now}};
      step["pullTiming"] = {{"startTime", r["startTime"]}, {"endTime", r["startTime"]}};
    } else if (idx == plan.failed_step) {
      step["status"] = "FAILURE";
      step["timing"] = {{"startTime", r["startTime"]}, {"endTime", now}};
      step["exitCode"] = 1;
    } else {
      step["status"] = "QUEUED";
    }
    step_images.push_back("sha256:" + sha256_hex(step.value("name", std::string())));
  }
  if (plan.status == "SUCCESS") {
    json results = {{"buildStepImages", step_images}, {"buildStepOutputs", json::array()}};
    for (std::size_t i = 0; i < r["steps"].size(); ++i) results["buildStepOutputs"].push_back("");
    if (!images.empty()) results["images"] = images;
    r["results"] = results;
  } else {
    r["failureInfo"] = plan.failure_info;
    r["statusDetail"] = plan.status_detail;
  }
  b.terminal = true;
  write_log(plan.log_lines.size());
}

json FakeGcp::Impl::build_op_json(const CloudBuild& b) const {
  json j = {{"name", b.op_name},
            {"metadata",
             {{"@type", "type.googleapis.com/google.devtools.cloudbuild.v1.BuildOperationMetadata"},
              {"build", b.resource}}}};
  if (b.terminal) {
    j["done"] = true;
    auto status = b.resource.value("status", std::string());
    if (status == "SUCCESS") {
      json resp = b.resource;
      resp["@type"] = "type.googleapis.com/google.devtools.cloudbuild.v1.Build";
      j["response"] = resp;
    } else {
      int code = status == "CANCELLED" ? 1 : status == "TIMEOUT" ? 4 : 2;
      j["error"] = {{"code", code},
                    {"message",
                     status == "CANCELLED"
                         ? std::string("Build was cancelled")
                         : b.resource.value("statusDetail", std::string("Build failed; check build "
                                                                        "logs for details"))}};
    }
  }
  return j;
}

void FakeGcp::Impl::cloudbuild(Call& call, httplib::Response& res) {
  const auto& s = call.seg;
  // Global operations: operations/build/PROJECT/BASE64(ID).
  if (s.size() >= 3 && s[0] == "v1" && s[1] == "operations" && call.method == "GET") {
    std::string name = "operations";
    for (std::size_t i = 2; i < s.size(); ++i) name += "/" + s[i];
    if (s.size() >= 4) require_enabled(s[3], "cloudbuild.googleapis.com");
    auto it = build_ops.find(name);
    if (it == build_ops.end()) throw not_found("Requested entity was not found.");
    auto& b = builds.at(it->second);
    advance_build(b);
    return send_json(res, build_op_json(b));
  }
  if (s.size() < 4 || s[0] != "v1" || s[1] != "projects") throw not_found("Method not found.");
  const std::string project = s[2];
  std::string location = "global";
  std::vector<std::string> rest(s.begin() + 3, s.end());
  if (rest.size() >= 2 && rest[0] == "locations") {
    location = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  auto find_build = [&](const std::string& id) -> CloudBuild& {
    auto it = builds.find(id);
    if (it == builds.end() || it->second.project != project || it->second.location != location)
      throw not_found("Requested entity was not found.");
    return it->second;
  };
  const auto number = project_number(project);

  if (rest.size() == 2 && rest[0] == "operations" && call.method == "GET") {
    auto name = "projects/" + project + "/locations/" + location + "/operations/" + rest[1];
    auto it = build_ops.find(name);
    if (it == build_ops.end()) throw not_found("Requested entity was not found.");
    auto& b = builds.at(it->second);
    advance_build(b);
    return send_json(res, build_op_json(b));
  }
  if (rest.size() == 1 && rest[0] == "builds" && call.method == "POST" && call.verb.empty()) {
    json in = call.body;
    if (!in.contains("steps") || !in["steps"].is_array() || in["steps"].empty())
      throw invalid_argument("invalid build: must have at least one step");
    for (auto& step : in["steps"]) {
      if (!step.is_object() || step.value("name", std::string()).empty())
        throw invalid_argument(
            "invalid build: invalid .steps field: build step 0 must specify name");
    }
    CloudBuild b;
    b.id = uuid();
    b.project = project;
    b.location = location;
    json& r = b.resource = in;
    r["id"] = b.id;
    r["name"] = "projects/" + number + "/locations/" + location + "/builds/" + b.id;
    r["projectId"] = project;
    r["status"] = "QUEUED";
    r["createTime"] = rfc3339_now();
    r["logUrl"] = "https://console.cloud.google.com/cloud-build/builds;region=" + location + "/" +
                  b.id + "?project=" + number;
    if (!r.contains("logsBucket"))
      r["logsBucket"] = "gs://" + number + ".cloudbuild-logs.googleusercontent.com";
    if (!r.contains("timeout")) r["timeout"] = "600s";
    if (!r.contains("queueTtl")) r["queueTtl"] = "3600s";
    if (!r.contains("options")) r["options"] = json::object();
    if (!r["options"].contains("logging")) r["options"]["logging"] = "LEGACY";
    if (!r.contains("serviceAccount"))
      r["serviceAccount"] = "projects/" + project + "/serviceAccounts/" + number +
                            "-compute@developer.gserviceaccount.com";
    for (auto& step : r["steps"]) step["status"] = "QUEUED";

    // ---- what will happen (decided now; pushes are checked at the end) ----
    auto& plan = b.plan;
    auto& log = plan.log_lines;
    log.push_back("starting build \"" + b.id + "\"");
    log.push_back("");
    log.push_back("FETCHSOURCE");
    std::optional<Files> files;
    bool fetch_failed = false;
    if (in.contains("source") && in["source"].contains("storageSource")) {
      auto& src = in["source"]["storageSource"];
      auto bucket = src.value("bucket", std::string());
      auto object = src.value("object", std::string());
      std::string gs = "gs://" + bucket + "/" + object;
      log.push_back("Fetching storage object: " + gs);
      if (options.gcs) {
        auto data = options.gcs->object_data(bucket, object);
        auto resource = options.gcs->object_resource(bucket, object);
        if (!data) {
          fetch_failed = true;
          plan.status = "FAILURE";
          std::string detail = "failed to fetch source: " + gs +
                               ": storage: object doesn't exist (404 No such object: " + bucket +
                               "/" + object + ")";
          plan.failure_info = {{"type", "FETCH_SOURCE_FAILED"}, {"detail", detail}};
          plan.status_detail = detail;
          log.push_back("ERROR: " + detail);
        } else {
          auto gen = resource ? resource->value("generation", std::string()) : std::string();
          r["sourceProvenance"] = {{"resolvedStorageSource",
                                    {{"bucket", bucket}, {"object", object}, {"generation", gen}}}};
          log.push_back("Copying " + gs + "#" + gen + "...");
          log.push_back("/ [1 files][" + human_size(data->size()) + "/" + human_size(data->size()) +
                        "]");
          log.push_back("Operation completed over 1 objects/" + human_size(data->size()) + ".");
          std::string error;
          files = unpack(*data, error);
          if (!files) {
            fetch_failed = true;
            plan.status = "FAILURE";
            std::string detail = "failed to unpack source " + gs + ": " + error;
            plan.failure_info = {{"type", "FETCH_SOURCE_FAILED"}, {"detail", detail}};
            plan.status_detail = detail;
            log.push_back("ERROR: " + detail);
          }
        }
      }
    }
    if (!fetch_failed) {
      log.push_back("BUILD");
      plan.header_lines = log.size();
      for (std::size_t i = 0; i < r["steps"].size(); ++i) {
        auto& step = r["steps"][i];
        auto image = step.value("name", std::string());
        std::vector<std::string> args;
        for (auto& a : step.value("args", json::array()))
          if (a.is_string()) args.push_back(a.get<std::string>());
        std::string prefix = "Step #" + std::to_string(i);
        if (step.contains("id")) prefix += " - \"" + step["id"].get<std::string>() + "\"";
        prefix += ": ";
        log.push_back("Starting Step #" + std::to_string(i) +
                      (step.contains("id") ? " - \"" + step["id"].get<std::string>() + "\"" : ""));
        log.push_back(prefix + "Already have image (with digest): " + image);
        StepOutcome outcome;
        const bool docker = image.find("cloud-builders/docker") != std::string::npos &&
                            !args.empty() && args[0] == "build";
        const bool kaniko = image.find("kaniko-project/executor") != std::string::npos;
        if (docker || kaniko) {
          std::string dockerfile = "Dockerfile", tag, dir = step.value("dir", std::string());
          for (std::size_t k = 0; k < args.size(); ++k) {
            auto value = [&](const std::string& flag) -> std::optional<std::string> {
              if (args[k] == flag && k + 1 < args.size()) return args[++k];
              if (args[k].rfind(flag + "=", 0) == 0) return args[k].substr(flag.size() + 1);
              return std::nullopt;
            };
            if (auto v = value("-f"))
              dockerfile = *v;
            else if (auto v2 = value("--file"))
              dockerfile = *v2;
            else if (auto v3 = value("--dockerfile"))
              dockerfile = *v3;
            else if (auto v4 = value("-t"))
              tag = *v4;
            else if (auto v5 = value("--tag"))
              tag = *v5;
            else if (auto v6 = value("--destination")) {
              outcome.destinations.push_back(*v6);
              if (tag.empty()) tag = *v6;
            }
          }
          if (!dir.empty() && dockerfile.rfind('/', 0) != 0) dockerfile = dir + "/" + dockerfile;
          while (dockerfile.rfind("./", 0) == 0) dockerfile = dockerfile.substr(2);
          if (dockerfile.rfind("/workspace/", 0) == 0) dockerfile = dockerfile.substr(11);
          auto short_id = [this] { return hex(12); };
          FakeImage built = FakeImageStore::default_built_image();
          if (!files) {  // the source was not inspected: a build that just works
            outcome.lines = {"Step 1/1 : FROM python:3.11-slim", " ---> " + short_id(),
                             "Successfully built " + short_id()};
          } else if (!files->count(dockerfile)) {
            outcome.lines = {
                "unable to prepare context: unable to evaluate symlinks in "
                "Dockerfile path: lstat /workspace/" +
                dockerfile + ": no such file or directory"};
            outcome.failed = true;
          } else {
            // FROM an image of this registry needs it to be there; its content is what was
            // recorded when it was pushed.
            auto resolve = [this](const std::string& ref) -> std::optional<FakeImage> {
              if (!has_image_locked(ref)) return std::nullopt;
              return options.images->find(ref).value_or(FakeImageStore::default_built_image());
            };
            auto b = options.images->build(files->at(dockerfile), *files, resolve,
                                           options.unknown_packages, short_id);
            outcome.lines = std::move(b.lines);
            outcome.failed = b.failed;
            built = std::move(b.image);
          }
          if (!outcome.failed && !tag.empty())
            outcome.lines.push_back("Successfully tagged " + tag);
          if (!tag.empty()) plan.built[tag] = built;
          for (auto& d : outcome.destinations) plan.built[d] = built;
        }
        for (auto& line : outcome.lines) log.push_back(prefix + line);
        log.push_back("Finished Step #" + std::to_string(i));
        if (outcome.failed) {
          std::string detail = "Build step failure: build step " + std::to_string(i) + " \"" +
                               image + "\" failed: step exited with non-zero status: 1";
          plan.status = "FAILURE";
          plan.failed_step = static_cast<int>(i);
          plan.failure_info = {{"type", "USER_BUILD_STEP"}, {"detail", detail}};
          plan.status_detail = detail;
          log.push_back("ERROR");
          log.push_back("ERROR: build step " + std::to_string(i) + " \"" + image +
                        "\" failed: step exited with non-zero status: 1");
          break;
        }
        for (auto& d : outcome.destinations) plan.pushed.push_back(d);
      }
      if (plan.status == "SUCCESS") {
        for (auto& i : r.value("images", json::array()))
          if (i.is_string()) plan.pushed.push_back(i.get<std::string>());
      }
    } else {
      plan.header_lines = log.size();
    }

    b.op_name = location == "global"
                    ? "operations/build/" + project + "/" + base64url(b.id)
                    : "projects/" + number + "/locations/" + location + "/operations/" + uuid();
    build_ops[b.op_name] = b.id;
    // The global op name in the path is as the client sends it; both spellings resolve.
    if (location != "global") {
      auto alt = "projects/" + project + "/locations/" + location + "/operations/" +
                 b.op_name.substr(b.op_name.rfind('/') + 1);
      build_ops[alt] = b.id;
    }
    ++builds_created;
    build_order.push_back(b.id);
    auto& stored = builds[b.id] = std::move(b);
    if (options.build_polls <= 0) advance_build(stored);
    return send_json(res, build_op_json(stored));
  }
  if (rest.size() == 1 && rest[0] == "builds" && call.method == "GET") {
    std::vector<json> all;
    for (auto it = build_order.rbegin(); it != build_order.rend(); ++it) {
      auto& b = builds[*it];
      if ((b.project == project || number == project) && b.location == location)
        all.push_back(b.resource);
    }
    std::size_t page_size = 50, offset = 0;
    if (!call.param("pageSize").empty()) page_size = std::stoul(call.param("pageSize"));
    if (page_size == 0 || page_size > 1000) page_size = 1000;
    if (!call.param("pageToken").empty()) offset = std::stoul(call.param("pageToken"));
    json list = json::array();
    for (std::size_t i = offset; i < all.size() && i < offset + page_size; ++i)
      list.push_back(all[i]);
    json out = json::object();
    if (!list.empty()) out["builds"] = list;
    if (offset + page_size < all.size()) out["nextPageToken"] = std::to_string(offset + page_size);
    return send_json(res, out);
  }
  if (rest.size() == 2 && rest[0] == "builds" && call.method == "GET" && call.verb.empty()) {
    auto& b = find_build(rest[1]);
    advance_build(b);
    return send_json(res, b.resource);
  }
  if (rest.size() == 2 && rest[0] == "builds" && call.method == "POST" && call.verb == "cancel") {
    auto& b = find_build(rest[1]);
    if (!b.terminal) {
      auto now = rfc3339_now();
      b.resource["status"] = "CANCELLED";
      b.resource["finishTime"] = now;
      for (auto& step : b.resource["steps"]) {
        if (step["status"] == "WORKING") step["status"] = "CANCELLED";
      }
      b.terminal = true;
    }
    return send_json(res, b.resource);
  }
  throw not_found("Method not found.");
}

}  // namespace kinetic::fakes
