#include "job/pricing.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/strings.h"
#include "job/budget.h"
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

bool known_machine_type(std::string_view machine_type) {
  for (const auto& m : kDefaultPoolTypes)
    if (m.machine_type == machine_type) return true;
  for (const auto& a : accelerator_catalog())
    if (a.machine_type == machine_type) return true;
  return false;
}

}  // namespace

PriceBook parse_price_book(std::string_view text) {
  PriceBook book;
  for (const std::string& raw : split(text, ',')) {
    const std::string entry(trim(raw));
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    std::string name(trim(std::string_view(entry).substr(0, eq)));
    const bool spot = name.size() > 5 && name.ends_with(":spot");
    if (spot) name.resize(name.size() - 5);
    if (eq == std::string::npos || name.empty())
      throw Error(Errc::usage, "prices: '" + entry +
                                   "' is not NAME=USD; e.g. 'v5litepod-8=3.50,e2-standard-4=0.12'");
    double usd = 0;
    try {
      usd = parse_usd(trim(std::string_view(entry).substr(eq + 1)), "prices", /*allow_zero=*/true);
    } catch (const Error&) {
      throw Error(Errc::usage, "prices: '" + entry +
                                   "' does not end in dollars per hour; e.g. "
                                   "'v5litepod-8=3.50'");
    }
    if (name == "control-plane") {
      if (spot)
        throw Error(Errc::usage, "prices: the control plane has no Spot price ('" + entry + "')");
      book.control_plane = usd;
    } else if (known_machine_type(name)) {
      (spot ? book.spot_machines : book.machines)[name] = usd;
    } else {
      try {
        (spot ? book.spot_accelerators : book.accelerators)[resolve_accelerator(name).name] = usd;
      } catch (const Error& e) {
        throw Error(Errc::usage, "prices: '" + name +
                                     "' is neither control-plane, a machine type kinetic prices, "
                                     "nor an accelerator: " +
                                     e.what());
      }
    }
  }
  return book;
}

PriceBook price_book_setting(const std::string& value, const std::string& source) {
  try {
    return parse_price_book(value);
  } catch (const Error& e) {
    throw Error(Errc::config, std::string(e.what()) + " (the prices setting, from " + source +
                                  "; fix it with `kinetic config set prices ...`)");
  }
}

double accelerator_price(const Accelerator& accel, const PriceBook& book) {
  auto it = book.accelerators.find(accel.name);
  return (it != book.accelerators.end() ? it->second : accel.price_per_hour) * accel.slices;
}

bool negotiated(const Accelerator& accel, const PriceBook& book) {
  return book.accelerators.count(accel.name) > 0;
}

double control_plane_price(const PriceBook& book) {
  return book.control_plane.value_or(kControlPlanePerHour);
}

std::optional<double> spot_price(const Accelerator& accel, const PriceBook& book) {
  auto it = book.spot_accelerators.find(accel.name);
  if (it == book.spot_accelerators.end()) return std::nullopt;
  return it->second * accel.slices;
}

std::optional<double> spot_node_price_per_hour(std::string_view machine_type,
                                               const PriceBook& book) {
  if (auto it = book.spot_machines.find(std::string(machine_type)); it != book.spot_machines.end())
    return it->second;
  for (const auto& a : accelerator_catalog())
    if (a.machine_type == machine_type && a.hosts > 0)
      if (auto slice = spot_price(a, book)) return *slice / a.hosts;
  return std::nullopt;
}

std::optional<double> node_price_per_hour(std::string_view machine_type, const PriceBook& book) {
  if (auto it = book.machines.find(std::string(machine_type)); it != book.machines.end())
    return it->second;
  for (const auto& m : kDefaultPoolTypes)
    if (m.machine_type == machine_type) return m.per_hour;
  // A host's price is its slice's over its hosts: a negotiated slice price first.
  for (const auto& a : accelerator_catalog())
    if (a.machine_type == machine_type && a.hosts > 0 && negotiated(a, book))
      return accelerator_price(a, book) / a.hosts;
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
