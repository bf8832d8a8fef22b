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

// Multislice: N slices cost N times one, and a budget buys 1/N of the time.
TEST(Budget, SlicesMultiplyThePriceAndDivideTheTime) {
  Accelerator two = priced(1.20);
  two.slices = 2;
  EXPECT_DOUBLE_EQ(accelerator_price(two, PriceBook{}), 2.40);
  Budget b = budget_for(5, two);
  EXPECT_EQ(b.seconds, 7500);
  EXPECT_DOUBLE_EQ(b.price_per_hour, 2.40);
  PriceBook book;
  book.accelerators[two.name] = 1.0;
  book.spot_accelerators[two.name] = 0.5;
  EXPECT_DOUBLE_EQ(accelerator_price(two, book), 2.0) << "your price, times the slices";
  EXPECT_DOUBLE_EQ(*spot_price(two, book), 1.0);
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

namespace kinetic {
namespace {

TEST(PriceBook, NamesAreAcceleratorsMachineTypesOrTheControlPlane) {
  PriceBook book = parse_price_book(
      " v5litepod-8 = 3.50, L4=$0.60 ,e2-standard-4=0.12,"
      "control-plane=0.01,");
  EXPECT_EQ(book.accelerators.at("v5litepod-8"), 3.5);
  EXPECT_EQ(book.accelerators.at(resolve_accelerator("l4").name), 0.6);  // any spelling
  EXPECT_EQ(book.machines.at("e2-standard-4"), 0.12);
  EXPECT_EQ(book.control_plane, 0.01);
  EXPECT_TRUE(parse_price_book("").empty());
  for (const char* bad :
       {"v5litepod-8", "=3", "v5litepod-8=", "v5litepod-8=-1", "v5lite=1", "m1-ultramem-160=9"}) {
    try {
      parse_price_book(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_EQ(std::string(e.what()).rfind("prices: '", 0), 0u) << e.what();
    }
  }
  // An unknown name says what it could be.
  try {
    parse_price_book("v5litepod8=1");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
  }
  // From a setting, a bad book is a configuration error naming where it came from.
  try {
    price_book_setting("l4=x", "env KINETIC_PRICES");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::config);
    EXPECT_NE(std::string(e.what()).find("from env KINETIC_PRICES"), std::string::npos) << e.what();
  }
}

TEST(PriceBook, YourPricesReplaceTheListWhereverAPriceIsUsed) {
  const Accelerator slice = resolve_accelerator("v5litepod-16");  // 4 hosts
  PriceBook book = parse_price_book("v5litepod-16=8,control-plane=0");
  EXPECT_EQ(accelerator_price(slice, book), 8.0);
  EXPECT_TRUE(negotiated(slice, book));
  EXPECT_EQ(accelerator_price(slice, {}), slice.price_per_hour);
  EXPECT_EQ(control_plane_price(book), 0.0);
  EXPECT_EQ(control_plane_price({}), kControlPlanePerHour);
  // A host of a negotiated slice costs its share.
  EXPECT_EQ(node_price_per_hour(slice.machine_type, book), 2.0);
  // A machine type's own price wins.
  EXPECT_EQ(node_price_per_hour(slice.machine_type, parse_price_book(slice.machine_type + "=1.5")),
            1.5);
  Budget b = budget_for(8, slice, book);
  EXPECT_EQ(b.seconds, 3600);
  EXPECT_TRUE(b.negotiated);
  EXPECT_NE(budget_line(b, slice).find("at $8.00/h (your price, from the prices setting)"),
            std::string::npos)
      << budget_line(b, slice);
}

TEST(PriceBook, SpotPricesComeOnlyFromTheBook) {
  const Accelerator slice = resolve_accelerator("v5litepod-16");  // 4 hosts
  PriceBook book = parse_price_book("v5litepod-16:spot=2.40,e2-standard-4:spot=0.04");
  EXPECT_EQ(*spot_price(slice, book), 2.4);
  EXPECT_FALSE(spot_price(slice, {}));  // the catalog has none
  EXPECT_EQ(*spot_node_price_per_hour(slice.machine_type, book), 0.6);
  EXPECT_EQ(*spot_node_price_per_hour("e2-standard-4", book), 0.04);
  EXPECT_FALSE(spot_node_price_per_hour("n2-standard-4", book));
  // A Spot price is not an on-demand price.
  EXPECT_FALSE(negotiated(slice, book));
  EXPECT_EQ(accelerator_price(slice, book), slice.price_per_hour);
  EXPECT_THROW(parse_price_book("control-plane:spot=0"), Error);
  EXPECT_THROW(parse_price_book(":spot=1"), Error);

  // A budget on Spot lasts as long as your Spot price buys; without one, the on-demand price.
  Accelerator spot = slice;
  spot.spot = true;
  Budget b = budget_for(2.4, spot, book);
  EXPECT_EQ(b.seconds, 3600);
  EXPECT_NE(budget_line(b, spot).find("at $2.40/h (your Spot price, from the prices setting)"),
            std::string::npos)
      << budget_line(b, spot);
  Budget list = budget_for(2.4, spot, {});
  EXPECT_LT(list.seconds, 3600);
  EXPECT_NE(budget_line(list, spot).find("; Spot costs less"), std::string::npos);
}

}  // namespace
}  // namespace kinetic
