// FakeGcp: Service Usage v1 (services get/batchGet/list/enable/disable/batchEnable and
// operations.get). Enabling takes effect when its operation is done.
#include <algorithm>

#include "fakes/fake_gcp_internal.h"

namespace kinetic::fakes {

using namespace gcp_detail;

namespace {

const std::map<std::string, std::string>& catalog() {
  static const std::map<std::string, std::string> services = {
      {"artifactregistry.googleapis.com", "Artifact Registry API"},
      {"cloudbuild.googleapis.com", "Cloud Build API"},
      {"cloudresourcemanager.googleapis.com", "Cloud Resource Manager API"},
      {"compute.googleapis.com", "Compute Engine API"},
      {"container.googleapis.com", "Kubernetes Engine API"},
      {"containerfilesystem.googleapis.com", "Container File System API"},
      {"containerregistry.googleapis.com", "Container Registry API"},
      {"iam.googleapis.com", "Identity and Access Management (IAM) API"},
      {"iamcredentials.googleapis.com", "IAM Service Account Credentials API"},
      {"logging.googleapis.com", "Cloud Logging API"},
      {"monitoring.googleapis.com", "Cloud Monitoring API"},
      {"pubsub.googleapis.com", "Cloud Pub/Sub API"},
      {"serviceusage.googleapis.com", "Service Usage API"},
      {"storage.googleapis.com", "Cloud Storage API"},
      {"storage-api.googleapis.com", "Google Cloud Storage JSON API"},
      {"tpu.googleapis.com", "Cloud TPU API"},
  };
  return services;
}

bool known_service(const std::string& s) {
  return catalog().count(s) > 0;
}

RpcError services_not_found(const std::vector<std::string>& names) {
  std::string list;
  for (auto& n : names) list += (list.empty() ? "" : ",") + n;
  RpcError e = rpc_error(403, "Not found or permission denied for service(s): " + list + ".");
  e.details = json::array({{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                            {"reason", "SERVICE_CONFIG_NOT_FOUND_OR_PERMISSION_DENIED"},
                            {"domain", "serviceusage.googleapis.com"},
                            {"metadata", {{"services", list}}}}});
  return e;
}

}  // namespace

void FakeGcp::Impl::serviceusage(Call& call, httplib::Response& res) {
  const auto& s = call.seg;
  auto service_json = [&](const std::string& project, const std::string& name) {
    auto number = project_number(project);
    auto it = catalog().find(name);
    return json{
        {"name", "projects/" + number + "/services/" + name},
        {"parent", "projects/" + number},
        {"config",
         {{"name", name},
          {"title", it == catalog().end() ? name : it->second},
          {"documentation", json::object()},
          {"quota", json::object()},
          {"authentication", json::object()},
          {"usage", {{"requirements", json::array({"serviceusage.googleapis.com/tos/cloud"})}}}}},
        {"state", service_enabled(project, name) ? "ENABLED" : "DISABLED"}};
  };
  // Starts an operation enabling (or disabling) SERVICES in PROJECT.
  auto start_op = [&](const std::string& project, const std::vector<std::string>& names,
                      bool enable, bool batch) {
    std::vector<std::string> unknown;
    for (auto& n : names) {
      if (!known_service(n)) unknown.push_back(n);
    }
    if (!unknown.empty()) throw services_not_found(unknown);
    bool noop = std::all_of(names.begin(), names.end(), [&](const std::string& n) {
      return service_enabled(project, n) == enable;
    });
    auto apply = [this, project, names, enable] {
      for (auto& n : names) {
        if (enable)
          enabled[project].insert(n);
        else
          enabled[project].erase(n);
      }
    };
    json response;
    if (batch) {
      response = {{"@type",
                   "type.googleapis.com/google.api.serviceusage.v1."
                   "BatchEnableServicesResponse"},
                  {"services", json::array()}};
    } else {
      response = {{"@type", enable ? "type.googleapis.com/google.api.serviceusage.v1."
                                     "EnableServiceResponse"
                                   : "type.googleapis.com/google.api.serviceusage.v1."
                                     "DisableServiceResponse"}};
    }
    // The response lists the services as they are once the op is done.
    auto number = project_number(project);
    json services = json::array();
    for (auto& n : names) {
      auto j = service_json(project, n);
      j["state"] = enable ? "ENABLED" : "DISABLED";
      services.push_back(j);
    }
    if (batch)
      response["services"] = services;
    else
      response["service"] = services[0];
    if (noop) {  // nothing to do: Service Usage answers a finished no-op operation
      apply();
      LroOp op;
      op.name = "operations/noop.DONE_OPERATION";
      op.done = true;
      op.metadata = nullptr;
      op.response = response;
      return send_json(res, lro_json(op));
    }
    auto name = "operations/acat.p2-" + number + "-" + uuid();
    auto& op = new_lro(name, project, {{"@type", "type.googleapis.com/google.protobuf.Empty"}},
                       response, apply);
    send_json(res, lro_json(op));
  };

  if (s.size() >= 3 && s[0] == "v1" && s[1] == "operations" && call.method == "GET") {
    std::string name = "operations";
    for (std::size_t i = 2; i < s.size(); ++i) name += "/" + s[i];
    if (name == "operations/noop.DONE_OPERATION") {
      return send_json(res, {{"name", name}, {"done", true}});
    }
    auto it = lro_ops.find(name);
    if (it == lro_ops.end()) throw not_found("Operation " + name + " not found.");
    advance_lro(it->second);
    return send_json(res, lro_json(it->second));
  }
  if (s.size() < 4 || s[0] != "v1" || s[1] != "projects" || s[3] != "services")
    throw not_found("Method not found.");
  const std::string& project = s[2];

  if (call.match({"v1", "projects", "*", "services", "*"}, "GET")) {
    if (!known_service(s[4])) throw services_not_found({s[4]});
    return send_json(res, service_json(project, s[4]));
  }
  if (call.match({"v1", "projects", "*", "services"}, "GET", "batchGet")) {
    auto n = call.http->get_param_value_count("names");
    if (n == 0) throw invalid_argument("names must be specified.");
    if (n > 30) throw invalid_argument("At most 30 services may be requested.");
    json services = json::array();
    for (std::size_t i = 0; i < n; ++i) {
      auto full = call.http->get_param_value("names", i);
      auto slash = full.rfind('/');
      auto name = slash == std::string::npos ? full : full.substr(slash + 1);
      if (!known_service(name)) throw services_not_found({name});
      services.push_back(service_json(project, name));
    }
    return send_json(res, {{"services", services}});
  }
  if (call.match({"v1", "projects", "*", "services"}, "GET")) {
    auto filter = call.param("filter");
    std::string want;
    if (filter.find("state:ENABLED") != std::string::npos) want = "ENABLED";
    if (filter.find("state:DISABLED") != std::string::npos) want = "DISABLED";
    std::set<std::string> names;
    for (auto& [n, t] : catalog()) names.insert(n);
    std::vector<json> all;
    for (auto& n : names) {
      auto j = service_json(project, n);
      if (want.empty() || j["state"] == want) all.push_back(j);
    }
    std::size_t page_size = 50, offset = 0;
    if (!call.param("pageSize").empty()) page_size = std::stoul(call.param("pageSize"));
    if (page_size == 0 || page_size > 200) page_size = 200;
    if (!call.param("pageToken").empty()) offset = std::stoul(call.param("pageToken"));
    json out = json::object();
    json services = json::array();
    for (std::size_t i = offset; i < all.size() && i < offset + page_size; ++i)
      services.push_back(all[i]);
    if (!services.empty()) out["services"] = services;
    if (offset + page_size < all.size()) out["nextPageToken"] = std::to_string(offset + page_size);
    return send_json(res, out);
  }
  if (call.match({"v1", "projects", "*", "services", "*"}, "POST", "enable"))
    return start_op(project, {s[4]}, true, false);
  if (call.match({"v1", "projects", "*", "services", "*"}, "POST", "disable"))
    return start_op(project, {s[4]}, false, false);
  if (call.match({"v1", "projects", "*", "services"}, "POST", "batchEnable")) {
    std::vector<std::string> ids;
    if (call.body.contains("serviceIds"))
      ids = call.body["serviceIds"].get<std::vector<std::string>>();
    if (ids.empty()) throw invalid_argument("serviceIds must be specified.");
    if (ids.size() > 20)
      throw invalid_argument("A maximum of 20 services may be enabled in one request.");
    return start_op(project, ids, true, true);
  }
  throw not_found("Method not found.");
}

}  // namespace kinetic::fakes
