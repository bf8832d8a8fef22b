// Cloud Build client. Decisions:
// - builds.create is not idempotent (a replay would start a second build), so it is never
//   retried after the request may have reached the server; get, cancel and the polls are.
// - Progress is followed with builds.get (docs/gcp-api.md §3.2 recommends it over the operation):
//   Build.status is the truth, whether or not a failed build also fails its operation.
#include "gcp/cloud_build.h"

#include "core/error.h"
#include "gcp/google_error.h"
#include "gcp/json_fields.h"
#include "gcp/storage.h"

namespace kinetic::gcp {

using nlohmann::json;

BuildInfo build_info_from_json(const json& j) {
  BuildInfo b;
  b.id = str(j, "id");
  b.status = str(j, "status");
  b.status_detail = str(j, "statusDetail");
  if (auto f = j.find("failureInfo"); f != j.end()) {
    b.failure_type = str(*f, "type");
    b.failure_detail = str(*f, "detail");
  }
  b.log_url = str(j, "logUrl");
  b.logs_bucket = str(j, "logsBucket");
  if (auto steps = j.find("steps"); steps != j.end() && steps->is_array()) {
    for (size_t i = 0; i < steps->size(); ++i) {
      const json& step = (*steps)[i];
      if (str(step, "status") != "FAILURE") continue;
      b.failed_step = static_cast<int>(i);
      b.failed_step_name = str(step, "name");
      if (step.contains("exitCode")) b.failed_step_exit_code = as_int(step["exitCode"]);
      break;
    }
  }
  b.raw = j;
  return b;
}

bool BuildInfo::terminal() const {
  return status == "SUCCESS" || status == "FAILURE" || status == "INTERNAL_ERROR" ||
         status == "TIMEOUT" || status == "CANCELLED" || status == "EXPIRED";
}

std::string BuildInfo::failure_message() const {
  if (!terminal() || succeeded()) return "";
  std::string m = "image build " + id + " ";
  if (status == "FAILURE") {
    m += "failed";
  } else if (status == "TIMEOUT") {
    m += "timed out";
  } else if (status == "CANCELLED") {
    m += "was cancelled";
  } else if (status == "EXPIRED") {
    m += "expired in the queue";
  } else {
    m += "failed inside Cloud Build (" + status + ")";
  }
  if (failed_step >= 0) {
    m += " in step " + std::to_string(failed_step);
    if (!failed_step_name.empty()) m += " (" + failed_step_name + ")";
    if (failed_step_exit_code != 0) m += " with exit code " + std::to_string(failed_step_exit_code);
  }
  std::string detail = !failure_detail.empty() ? failure_detail : status_detail;
  if (!detail.empty()) m += ": " + detail;
  if (!log_url.empty()) {
    m += "; see the log at " + log_url;
  } else if (!logs_bucket.empty()) {
    m += "; see the log at " + logs_bucket + "/log-" + id + ".txt";
  }
  return m;
}

json docker_build_request(const std::string& bucket, const std::string& object,
                          const std::string& image, const std::string& logs_bucket,
                          long timeout_seconds) {
  json build = {
      {"source", {{"storageSource", {{"bucket", bucket}, {"object", object}}}}},
      {"steps", json::array({{{"name", "gcr.io/cloud-builders/docker"},
                              {"args", {"build", "--network", "cloudbuild", "-t", image, "."}}}})},
      {"images", json::array({image})},
      {"timeout", std::to_string(timeout_seconds) + "s"},
      {"options", {{"logging", "GCS_ONLY"}}},
      {"tags", json::array({"kinetic"})},
  };
  if (!logs_bucket.empty()) build["logsBucket"] = logs_bucket;
  return build;
}

CloudBuildClient::CloudBuildClient(http::Transport& transport, std::string endpoint)
    : transport_(transport), endpoint_(std::move(endpoint)) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
}

namespace {

std::string builds_url(const std::string& endpoint, const std::string& project,
                       const std::string& location) {
  return endpoint + "/v1/projects/" + encode_object_name(project) + "/locations/" +
         encode_object_name(location) + "/builds";
}

}  // namespace

BuildInfo CloudBuildClient::create(const std::string& project, const std::string& location,
                                   const json& build) {
  const std::string what = "starting an image build in " + location;
  http::Request req;
  req.method = "POST";
  req.url = builds_url(endpoint_, project, location);
  req.headers = {{"Content-Type", "application/json"}};
  req.body = build.dump();
  req.idempotent = false;  // a replay would start a second build
  auto r = transport_.send(req);
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  json op = parse_json(r, what, "Cloud Build");
  const json* b = nullptr;
  if (auto m = op.find("metadata"); m != op.end() && m->is_object()) {
    if (auto it = m->find("build"); it != m->end() && it->is_object()) b = &*it;
  }
  if (!b) {
    // Some answers carry the build as the (already finished) operation's response.
    if (auto resp = op.find("response"); resp != op.end() && resp->is_object()) b = &*resp;
  }
  if (!b || str(*b, "id").empty())
    throw Error(Errc::api, what + ": Cloud Build's answer names no build (no metadata.build.id)");
  return build_info_from_json(*b);
}

BuildInfo CloudBuildClient::get(const std::string& project, const std::string& location,
                                const std::string& id) {
  const std::string what = "reading image build " + id;
  http::Request req;
  req.url = builds_url(endpoint_, project, location) + "/" + encode_object_name(id);
  auto r = transport_.send(req);
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  return build_info_from_json(parse_json(r, what, "Cloud Build"));
}

BuildInfo CloudBuildClient::wait(const std::string& project, const std::string& location,
                                 const std::string& id, const PollOptions& poll,
                                 const std::function<void(const BuildInfo&)>& on_status) {
  Backoff backoff(poll);
  std::string last;
  for (;;) {
    BuildInfo b = get(project, location, id);
    if (b.status != last) {
      last = b.status;
      if (on_status) on_status(b);
    }
    if (b.terminal()) return b;
    if (!backoff.wait())
      throw Error(Errc::api, "image build " + id + " is still " + b.status + " after " +
                                 std::to_string(poll.deadline.count()) +
                                 "s; it continues in Cloud Build" +
                                 (b.log_url.empty() ? std::string() : " (" + b.log_url + ")"));
  }
}

void CloudBuildClient::cancel(const std::string& project, const std::string& location,
                              const std::string& id) {
  const std::string what = "cancelling image build " + id;
  http::Request req;
  req.method = "POST";
  req.url = builds_url(endpoint_, project, location) + "/" + encode_object_name(id) + ":cancel";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json({{"name", "projects/" + project + "/locations/" + location + "/builds/" + id},
                   {"projectId", project},
                   {"id", id}})
                 .dump();
  auto r = transport_.send(req);  // cancelling twice is harmless
  if (ok(r.status)) return;
  // A build that has already finished cannot be cancelled: nothing left to do.
  if (r.status == 400 && parse_google_error(r.status, r.body).status == "FAILED_PRECONDITION")
    return;
  throw google_error(r.status, r.body, what);
}

}  // namespace kinetic::gcp
