// run --max-cost (issue #12): dollars become a deadline at the accelerator's list price.
#include "job/budget.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kinetic {
namespace {

Accelerator priced(double per_hour, bool spot = false) {
  Accelerator a = resolve_accelerator("v5litepod-8");
  a.price_per_hour = per_hour;
  a.spot = spot;
  return a;
}

TEST(Budget, DollarsAreParsedStrictly) {
  EXPECT_DOUBLE_EQ(parse_usd("5", "--max-cost"), 5.0);
  EXPECT_DOUBLE_EQ(parse_usd("12.50", "--max-cost"), 12.5);
  EXPECT_DOUBLE_EQ(parse_usd("$3", "--max-cost"), 3.0);
  EXPECT_DOUBLE_EQ(parse_usd("0.0005", "--max-cost"), 0.0005);
  for (const char* bad : {"", "$", "0", "-5", "5 dollars", "5usd", "1e3", "nan", "inf", "5,00",
                          " 5", "$$5", "0x10"}) {
    try {
      parse_usd(bad, "--max-cost");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find("--max-cost takes dollars"), std::string::npos)
          << e.what();
    }
  }
  try {
    parse_usd("50000000", "--max-cost");
    ADD_FAILURE() << "a typo's extra digits accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("typo"), std::string::npos) << e.what();
  }
}

TEST(Budget, TheDeadlineIsWhatTheDollarsBuyRoundedDown) {
  Budget b = budget_for(5, priced(1.20));
  EXPECT_EQ(b.seconds, 15000);  // 5 / 1.20 h = 4h10m
  EXPECT_DOUBLE_EQ(b.price_per_hour, 1.20);
  EXPECT_EQ(budget_for(1, priced(7.0)).seconds, 514);  // 514.28... s, never over
  // Spot is billed less than the list price: the same deadline, on the safe side.
  EXPECT_EQ(budget_for(5, priced(1.20, true)).seconds, 15000);
}

TEST(Budget, NoPriceOrLessThanASecondIsRefused) {
  try {
    budget_for(5, priced(0));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("--timeout instead"), std::string::npos) << e.what();
  }
  try {
    budget_for(0.0001, priced(36.0));  // 0.01 s
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("less than a second"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a minute costs $0.60"), std::string::npos) << e.what();
  }
}

TEST(Budget, AmountsAndLinesReadAsMoney) {
  EXPECT_EQ(format_usd(5), "$5.00");
  EXPECT_EQ(format_usd(1234.5), "$1234.50");
  EXPECT_EQ(format_usd(0.25), "$0.25");
  EXPECT_EQ(format_usd(0.0033), "$0.0033");
  EXPECT_EQ(format_usd(0.0005), "$0.00050");
  Accelerator a = priced(1.20, true);
  const std::string line = budget_line(budget_for(5, a), a);
  EXPECT_EQ(line.rfind("budget $5.00 buys 4h10m of v5litepod-8 at $1.20/h (on-demand list price "
                       "as of ",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find("Spot costs less"), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with("the job is stopped then (exit 124)")) << line;
  EXPECT_EQ(budget_stop_message(5, 15000, "v5litepod-8"),
            "stopped at the $5.00 budget (4h10m of v5litepod-8, --max-cost)");
}

}  // namespace
}  // namespace kinetic
