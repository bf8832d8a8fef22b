#include "gcp/compute.h"

#include <algorithm>

#include "gcp/google_error.h"
#include "gcp/json_fields.h"
#include "gcp/storage.h"

namespace kinetic::gcp {

using nlohmann::json;

ComputeClient::ComputeClient(http::Transport& transport, std::string endpoint)
    : transport_(transport), endpoint_(std::move(endpoint)) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
}

std::vector<std::string> ComputeClient::region_zones(const std::string& project,
                                                     const std::string& region) {
  http::Request req;
  req.url = endpoint_ + "/compute/v1/projects/" + encode_object_name(project) + "/regions/" +
            encode_object_name(region);
  const auto r = transport_.send(req);
  const std::string what = "listing the zones of region " + region;
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  const json j = parse_json(r, what, "Compute Engine");
  std::vector<std::string> zones;
  if (auto list = j.find("zones"); list != j.end() && list->is_array())
    for (const auto& url : *list)
      if (url.is_string()) {
        // Each is a URL: .../projects/P/zones/us-central1-a.
        const std::string s = url.get<std::string>();
        zones.push_back(s.substr(s.rfind('/') + 1));
      }
  std::sort(zones.begin(), zones.end());
  return zones;
}

bool ComputeClient::zone_offers(const std::string& project, const std::string& zone,
                                const std::string& machine_type) {
  http::Request req;
  req.url = endpoint_ + "/compute/v1/projects/" + encode_object_name(project) + "/zones/" +
            encode_object_name(zone) + "/machineTypes/" + encode_object_name(machine_type);
  const auto r = transport_.send(req);
  if (r.status == 404) return false;
  if (!ok(r.status))
    throw google_error(r.status, r.body, "checking whether " + zone + " offers " + machine_type);
  return true;
}

}  // namespace kinetic::gcp
