// Service Usage client. Decisions:
// - batchGet answers with the project *number* in each name, so services are matched by the
//   part after "/services/" (or config.name); a service missing from the answer counts as
//   disabled.
// - batchEnable is safe to replay (enabling an enabled service is a no-op), so it is retried
//   like any idempotent request. Its operation may come back already done; a failure inside the
//   response (failures[]) names the service.
#include "gcp/service_usage.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/strings.h"
#include "gcp/google_error.h"
#include "gcp/json_fields.h"
#include "gcp/storage.h"

namespace kinetic::gcp {

using nlohmann::json;

namespace {

constexpr size_t kBatchGetMax = 30;
constexpr size_t kBatchEnableMax = 20;

std::string join(const std::vector<std::string>& items, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += (i > from ? ", " : "") + items[i];
  return out;
}

// Query values: everything but unreserved characters and '/' escaped.
std::string query_value(const std::string& v) {
  std::string out;
  for (const auto& part : split(v, '/')) out += (out.empty() ? "" : "/") + encode_object_name(part);
  return out;
}

}  // namespace

ServiceUsageClient::ServiceUsageClient(http::Transport& transport, std::string endpoint)
    : transport_(transport), endpoint_(std::move(endpoint)) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
}

std::vector<std::string> ServiceUsageClient::disabled(const std::string& project,
                                                      const std::vector<std::string>& services) {
  std::set<std::string> enabled;
  for (size_t from = 0; from < services.size(); from += kBatchGetMax) {
    size_t to = std::min(services.size(), from + kBatchGetMax);
    std::string url =
        endpoint_ + "/v1/projects/" + encode_object_name(project) + "/services:batchGet";
    for (size_t i = from; i < to; ++i) {
      url += (i == from ? "?" : "&");
      url += "names=" + query_value("projects/" + project + "/services/" + services[i]);
    }
    http::Request req;
    req.url = url;
    auto r = transport_.send(req);
    std::string what = "checking which APIs are enabled in project " + project;
    if (!ok(r.status)) throw google_error(r.status, r.body, what);
    json j = parse_json(r, what, "Service Usage");
    if (auto list = j.find("services"); list != j.end() && list->is_array()) {
      for (const auto& s : *list) {
        std::string name = str(s, "name");
        auto at = name.rfind("/services/");
        std::string id = at == std::string::npos ? str(s.value("config", json::object()), "name")
                                                 : name.substr(at + 10);
        if (str(s, "state") == "ENABLED") enabled.insert(id);
      }
    }
  }
  std::vector<std::string> off;
  for (const auto& s : services) {
    if (!enabled.count(s) && std::find(off.begin(), off.end(), s) == off.end()) off.push_back(s);
  }
  return off;
}

void ServiceUsageClient::enable(const std::string& project,
                                const std::vector<std::string>& services, const PollOptions& poll) {
  for (size_t from = 0; from < services.size(); from += kBatchEnableMax) {
    size_t to = std::min(services.size(), from + kBatchEnableMax);
    std::string what = "enabling " + join(services, from, to) + " in project " + project;
    http::Request req;
    req.method = "POST";
    req.url = endpoint_ + "/v1/projects/" + encode_object_name(project) + "/services:batchEnable";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = json({{"serviceIds",
                      std::vector<std::string>(services.begin() + from, services.begin() + to)}})
                   .dump();
    req.idempotent = true;  // enabling twice is harmless
    auto r = transport_.send(req);
    if (!ok(r.status)) throw google_error(r.status, r.body, what);
    json op = parse_json(r, what, "Service Usage");
    std::string name = str(op, "name");
    bool done = op.contains("done") && op["done"].is_boolean() && op["done"].get<bool>();
    if (!done && name.empty())
      throw Error(Errc::api, what + ": Service Usage answered without an operation name");
    auto get = [&]() {
      http::Request g;
      g.url = endpoint_ + "/v1/" + name;
      auto gr = transport_.send(g);
      if (!ok(gr.status))
        throw google_error(gr.status, gr.body, what + " (reading operation " + name + ")");
      return parse_json(gr, what, "Service Usage");
    };
    op = wait_long_running(get, std::move(op), poll, what);
    if (auto resp = op.find("response"); resp != op.end() && resp->is_object()) {
      if (auto failures = resp->find("failures");
          failures != resp->end() && failures->is_array() && !failures->empty()) {
        const json& f = (*failures)[0];
        std::string service = str(f, "serviceId");
        std::string message = str(f, "errorMessage");
        throw Error(Errc::api,
                    "enabling " + (service.empty() ? "services" : service) + " in project " +
                        project + " failed" + (message.empty() ? "" : ": " + message) +
                        "; enable it in the console or with `gcloud services enable " +
                        (service.empty() ? "SERVICE" : service) + " --project " + project + "`");
      }
    }
  }
}

}  // namespace kinetic::gcp
