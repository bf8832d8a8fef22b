#include "job/budget.h"

#include <charconv>
#include <cmath>

#include "core/duration.h"
#include "core/error.h"

namespace kinetic {

namespace {
// More than anyone spends on one job by accident: a typo's extra digits are caught.
constexpr double kMostUsd = 1e6;
}  // namespace

double parse_usd(std::string_view text, std::string_view flag, bool allow_zero) {
  std::string_view digits = text;
  if (digits.starts_with('$')) digits.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value,
                                   std::chars_format::fixed);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      !std::isfinite(value) || value < 0 || (value == 0 && !allow_zero))
    throw Error(Errc::usage, std::string(flag) + " takes dollars, more than 0, e.g. " +
                                 std::string(flag) + " 5 or " + std::string(flag) +
                                 " 12.50 (got '" + std::string(text) + "')");
  if (value > kMostUsd)
    throw Error(Errc::usage, std::string(flag) + " " + std::string(text) +
                                 " is more than $1,000,000: is there a typo?");
  return value;
}

Budget budget_for(double max_cost_usd, const Accelerator& accel, const PriceBook& book) {
  // On Spot, your Spot price when the book has one; else the on-demand price (never overrun).
  const std::optional<double> spot = accel.spot ? spot_price(accel, book) : std::nullopt;
  const double price = spot ? *spot : accelerator_price(accel, book);
  if (price <= 0)
    throw Error(Errc::usage, "--max-cost needs the accelerator's price, and " + accel.name +
                                 " has none in the catalog; set one with `kinetic config set "
                                 "prices " +
                                 accel.name + "=USD`, or use --timeout instead");
  Budget b;
  b.max_cost_usd = max_cost_usd;
  b.price_per_hour = price;
  b.negotiated = spot || negotiated(accel, book);
  b.spot = spot.has_value();
  b.seconds = static_cast<long>(std::floor(max_cost_usd / price * 3600.0));
  if (b.seconds < 1)
    throw Error(Errc::usage, "--max-cost " + format_usd(max_cost_usd) +
                                 " buys less than a second of " + accel.name + " at " +
                                 format_usd(price) + "/h; a minute costs " +
                                 format_usd(price / 60.0));
  return b;
}

std::string budget_line(const Budget& b, const Accelerator& accel) {
  return "budget " + format_usd(b.max_cost_usd) + " buys " +
         format_duration(static_cast<double>(b.seconds)) + " of " +
         (accel.slices > 1 ? std::to_string(accel.slices) + " slices of " : std::string()) +
         accel.name + " at " + format_usd(b.price_per_hour) + "/h (" +
         (b.spot         ? std::string("your Spot price, from the prices setting")
          : b.negotiated ? std::string("your price, from the prices setting")
                         : "on-demand list price as of " + std::string(catalog_price_date()) +
                               (accel.spot ? "; Spot costs less" : "")) +
         "); the job is stopped then (exit 124)";
}

std::string budget_stop_message(double max_cost_usd, long seconds, std::string_view accelerator) {
  return "stopped at the " + format_usd(max_cost_usd) + " budget (" +
         format_duration(static_cast<double>(seconds)) + " of " + std::string(accelerator) +
         ", --max-cost)";
}

}  // namespace kinetic
