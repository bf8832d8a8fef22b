#include "job/pricing.h"

#include <string>

#include "job/catalog.h"

namespace kinetic {

namespace {

struct MachinePrice {
  std::string_view machine_type;
  double per_hour;
};

// The default pool's candidates (backend/gke/cluster_requests.cpp), 4 vCPUs each.
constexpr MachinePrice kDefaultPoolTypes[] = {
    {"e2-standard-4", 0.134},  {"n2-standard-4", 0.194}, {"n1-standard-4", 0.190},
    {"n2d-standard-4", 0.169}, {"c3-standard-4", 0.201}, {"t2d-standard-4", 0.169},
};

}  // namespace

std::optional<double> node_price_per_hour(std::string_view machine_type) {
  for (const auto& m : kDefaultPoolTypes)
    if (m.machine_type == machine_type) return m.per_hour;
  for (const auto& a : accelerator_catalog())
    if (a.machine_type == machine_type && a.hosts > 0 && a.price_per_hour > 0)
      return a.price_per_hour / a.hosts;
  return std::nullopt;
}

}  // namespace kinetic
