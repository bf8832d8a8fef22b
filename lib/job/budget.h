// A job's budget (`run --max-cost`, issue #12): dollars become the job's deadline at its
// accelerator's hourly price, so the cluster itself stops the job when the money is spent (the
// Job's activeDeadlineSeconds), whether or not anyone is following it.
#pragma once

#include <string>
#include <string_view>

#include "job/catalog.h"
#include "job/pricing.h"

namespace kinetic {

struct Budget {
  double max_cost_usd = 0;
  double price_per_hour = 0;  // what the deadline was worked out from (USD, the whole slice)
  long seconds = 0;           // the deadline it buys
  bool negotiated = false;    // the price is the `prices` setting's, not the list price
  bool spot = false;          // ... its Spot price (NAME:spot=USD)
};

// "5", "12.50", "$5": dollars for --max-cost. Throws Error(Errc::usage) naming FLAG otherwise
// (not a number, not more than 0 (0 itself with ALLOW_ZERO), absurdly large).
double parse_usd(std::string_view text, std::string_view flag, bool allow_zero = false);

// The deadline MAX_COST_USD buys on ACCEL at its price (BOOK's, else the on-demand list price,
// also for Spot, which costs less, so the budget is never overrun). Throws Error(Errc::usage)
// when the accelerator has no price or the budget buys less than a second.
Budget budget_for(double max_cost_usd, const Accelerator& accel, const PriceBook& book = {});

// At submit: "budget $5.00 buys 4h10m of v5litepod-1 at $1.20/h (on-demand list price as of
// DATE); the job is stopped then (exit 124)".
std::string budget_line(const Budget& budget, const Accelerator& accel);

// When the deadline came: "stopped at the $5.00 budget (4h10m of v5litepod-1)".
std::string budget_stop_message(double max_cost_usd, long seconds, std::string_view accelerator);

}  // namespace kinetic
