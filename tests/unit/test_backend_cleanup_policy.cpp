#include "backend/cleanup_policy.h"

#include <gtest/gtest.h>

namespace kinetic {
namespace {

constexpr double kNow = 1'000'000;
constexpr long kDay = 24 * 3600;

// Four records finished 10 days, 3 days, 1 hour and 1 minute ago, listed out of order.
std::vector<FinishedRecord> records() {
  return {{"job-b", kNow - 3 * kDay},
          {"job-d", kNow - 60},
          {"job-a", kNow - 10 * kDay},
          {"job-c", kNow - 3600}};
}

TEST(CleanupPolicy, ByDefaultRecordsOlderThanAWeekGo) {
  EXPECT_EQ(records_to_remove(records(), {}, kNow), (std::set<std::string>{"job-a"}));
  EXPECT_EQ(records_to_remove(records(), {.older_than_seconds = 2 * kDay}, kNow),
            (std::set<std::string>{"job-a", "job-b"}));
  EXPECT_EQ(records_to_remove(records(), {.older_than_seconds = 0}, kNow).size(), 4u);
}

TEST(CleanupPolicy, KeepLastAloneKeepsThatManyWhateverTheirAge) {
  const CleanupPolicy last2{.keep_last = 2, .records_by_age = false};
  EXPECT_EQ(records_to_remove(records(), last2, kNow), (std::set<std::string>{"job-a", "job-b"}));
  const CleanupPolicy none{.keep_last = 0, .records_by_age = false};
  EXPECT_EQ(records_to_remove(records(), none, kNow).size(), 4u);
  const CleanupPolicy many{.keep_last = 9, .records_by_age = false};
  EXPECT_TRUE(records_to_remove(records(), many, kNow).empty());
}

TEST(CleanupPolicy, KeepLastWithAnAgeKeepsTheLatestAndTheYoung) {
  // The latest one stays, and so does what finished within 2 days (job-c); job-b and job-a go.
  const CleanupPolicy p{.older_than_seconds = 2 * kDay, .keep_last = 1, .records_by_age = true};
  EXPECT_EQ(records_to_remove(records(), p, kNow), (std::set<std::string>{"job-a", "job-b"}));
  // An old record among the latest N stays.
  const CleanupPolicy q{.older_than_seconds = 0, .keep_last = 3, .records_by_age = true};
  EXPECT_EQ(records_to_remove(records(), q, kNow), (std::set<std::string>{"job-a"}));
}

TEST(CleanupPolicy, TiesInTimeAreBrokenByIdNotByListingOrder) {
  const CleanupPolicy last1{.keep_last = 1, .records_by_age = false};
  const std::vector<FinishedRecord> one{{"job-1", kNow}, {"job-2", kNow}};
  const std::vector<FinishedRecord> other{{"job-2", kNow}, {"job-1", kNow}};
  EXPECT_EQ(records_to_remove(one, last1, kNow), (std::set<std::string>{"job-1"}));
  EXPECT_EQ(records_to_remove(other, last1, kNow), (std::set<std::string>{"job-1"}));
}

}  // namespace
}  // namespace kinetic
