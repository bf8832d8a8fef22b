#include "job/pricing.h"

#include <cmath>
#include <cstdio>
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

std::string format_usd(double usd) {
  char buf[64];
  if (usd >= 0.01 || usd <= 0) {
    std::snprintf(buf, sizeof buf, "$%.2f", usd);
    return buf;
  }
  // Below a cent: two significant digits, "$0.0033".
  std::snprintf(buf, sizeof buf, "$%.*f", 2 - static_cast<int>(std::floor(std::log10(usd))) - 1,
                usd);
  return buf;
}

}  // namespace kinetic
