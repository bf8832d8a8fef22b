// FakeGcp: the two Compute Engine v1 reads kinetic makes before it places a node pool in a
// regional cluster (lib/gcp/compute.h): regions.get (the region's zones) and machineTypes.get (a
// zone offers the type, else 404 notFound). What exists is the fake's zone table
// (FakeGcpOptions::zone_machine_types), the same one the fake GKE refuses pools by: with no table,
// a region has zones REGION-a, -b, -c and every zone offers every type (as the fake GKE accepts
// any). Compute Engine's error bodies carry an `errors` list (domain, reason) besides code and
// message.
#include "fakes/fake_gcp_internal.h"

namespace kinetic::fakes {

using namespace gcp_detail;

namespace {

constexpr const char* kComputeBase = "https://www.googleapis.com/compute/v1/projects/";

// Compute Engine's 404, as its v1 API writes it.
RpcError compute_not_found(const std::string& resource) {
  RpcError e = not_found("The resource '" + resource + "' was not found");
  e.details = json::array();
  return e;
}

}  // namespace

void FakeGcp::Impl::compute(Call& call, httplib::Response& res) {
  // /compute/v1/projects/P/regions/R or /compute/v1/projects/P/zones/Z/machineTypes/T
  const auto& s = call.seg;
  if (s.size() < 4 || s[0] != "compute" || s[1] != "v1" || s[2] != "projects" ||
      call.method != "GET")
    throw not_found("Method not found.");
  const std::string& project = s[3];
  require_enabled(project, "compute.googleapis.com");
  const auto& table = options.zone_machine_types;
  if (s.size() == 6 && s[4] == "regions") {
    const std::string& region = s[5];
    std::vector<std::string> zones;
    for (const auto& [zone, types] : table)
      if (region_of(zone) == region) zones.push_back(zone);
    if (table.empty()) zones = {region + "-a", region + "-b", region + "-c"};
    if (zones.empty()) throw compute_not_found("projects/" + project + "/regions/" + region);
    json urls = json::array();
    for (const auto& z : zones) urls.push_back(kComputeBase + project + "/zones/" + z);
    return send_json(res, {{"kind", "compute#region"},
                           {"name", region},
                           {"status", "UP"},
                           {"zones", urls},
                           {"selfLink", kComputeBase + project + "/regions/" + region}});
  }
  if (s.size() == 8 && s[4] == "zones" && s[6] == "machineTypes") {
    const std::string &zone = s[5], &type = s[7];
    const std::string resource = "projects/" + project + "/zones/" + zone + "/machineTypes/" + type;
    if (!table.empty()) {
      auto it = table.find(zone);
      if (it == table.end() || !it->second.count(type)) throw compute_not_found(resource);
    }
    return send_json(res, {{"kind", "compute#machineType"},
                           {"name", type},
                           {"zone", zone},
                           {"selfLink", kComputeBase + resource}});
  }
  throw not_found("Method not found.");
}

}  // namespace kinetic::fakes
