// What a GKE cluster costs to keep up (issue #12, docs/cost.md): approximate on-demand list
// prices in USD per hour for us-central1, as of catalog_price_date(), like the catalog's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kinetic {

struct Accelerator;

// Prices that replace the list prices (negotiated, or another region's): the `prices` setting,
// "NAME=USD,NAME=USD", each NAME an accelerator as `run -a` takes it (the whole slice's price per
// hour), a machine type (one node's), or control-plane. "NAME:spot=USD" is NAME's Spot price:
// the catalog has none (Spot prices move, up to once a month), so Spot costs are shown only
// from these.
struct PriceBook {
  std::map<std::string, double> accelerators;       // canonical name -> USD/h of the slice
  std::map<std::string, double> machines;           // machine type -> USD/h of one node
  std::map<std::string, double> spot_accelerators;  // the same, on Spot
  std::map<std::string, double> spot_machines;
  std::optional<double> control_plane;
  bool empty() const {
    return accelerators.empty() && machines.empty() && spot_accelerators.empty() &&
           spot_machines.empty() && !control_plane;
  }
};

// Throws Error(Errc::usage) naming the entry that is not NAME=USD or whose NAME is neither an
// accelerator nor a machine type kinetic prices (with "did you mean").
PriceBook parse_price_book(std::string_view text);
// The `prices` setting as resolved (VALUE from SOURCE, e.g. "context acme"): a bad one is a
// configuration error (run exits 125, other commands 1) naming where it came from.
PriceBook price_book_setting(const std::string& value, const std::string& source);

// ACCEL's price per hour for the whole slice (times its slices): the book's, else the catalog's
// list price.
double accelerator_price(const Accelerator& accel, const PriceBook& book);
// Whether the book sets ACCEL's price (lines then say "your price" rather than "list price").
bool negotiated(const Accelerator& accel, const PriceBook& book);
double control_plane_price(const PriceBook& book);
// ACCEL's Spot price for the whole slice (times its slices), when the book has one
// ("NAME:spot=USD").
std::optional<double> spot_price(const Accelerator& accel, const PriceBook& book);
// One Spot node of MACHINE_TYPE, when the book prices it (the machine type's, or a slice's
// over its hosts).
std::optional<double> spot_node_price_per_hour(std::string_view machine_type,
                                               const PriceBook& book);

// GKE Standard's cluster management fee (the free tier's monthly credit covers one zonal
// cluster per billing account; kinetic does not know whether it applies).
inline constexpr double kControlPlanePerHour = 0.10;

// One node of MACHINE_TYPE: the book's, else the default pool's machine types and every catalog
// accelerator's host (its slice's price over its hosts, the book's when it sets one). Nullopt
// for a type kinetic has no price for.
std::optional<double> node_price_per_hour(std::string_view machine_type,
                                          const PriceBook& book = {});

// "$5.00", "$0.25"; below a cent, two significant digits: "$0.0033".
std::string format_usd(double usd);

}  // namespace kinetic
