// What a GKE cluster costs to keep up (issue #12, docs/cost.md): approximate on-demand list
// prices in USD per hour for us-central1, as of catalog_price_date(), like the catalog's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kinetic {

// GKE Standard's cluster management fee (the free tier's monthly credit covers one zonal
// cluster per billing account; kinetic does not know whether it applies).
inline constexpr double kControlPlanePerHour = 0.10;

// One node of MACHINE_TYPE: the default pool's machine types and every catalog accelerator's
// host (its slice's price over its hosts). Nullopt for a type kinetic has no price for.
std::optional<double> node_price_per_hour(std::string_view machine_type);

// "$5.00", "$0.25"; below a cent, two significant digits: "$0.0033".
std::string format_usd(double usd);

}  // namespace kinetic
