// lib/pipeline/step_schedule.h: steps start once what they need is done, at most max_parallel
// at a time; a failure skips everything downstream of it, and Ctrl-C everything not started.
#include <gtest/gtest.h>

#include "pipeline/step_schedule.h"

namespace kinetic {
namespace {

using S = StepState;
using Skips = std::vector<std::pair<std::string, std::string>>;
using Names = std::vector<std::string>;

// prep, then a fan-out of a, b and c, then report needing all three.
std::vector<StepSlot> fan_out(S prep, S a = S::waiting, S b = S::waiting, S c = S::waiting) {
  return {{"prep", {}, prep},
          {"a", {"prep"}, a},
          {"b", {"prep"}, b},
          {"c", {"prep"}, c},
          {"report", {"a", "b", "c"}, S::waiting}};
}

TEST(StepSchedule, NothingStartsBeforeWhatItNeedsIsDone) {
  EXPECT_EQ(schedule(fan_out(S::waiting), 4, false).start, Names{"prep"});
  EXPECT_EQ(schedule(fan_out(S::running), 4, false).start, Names{});
  EXPECT_EQ(schedule(fan_out(S::reused, S::succeeded, S::reused, S::succeeded), 4, false).start,
            Names{"report"});
}

TEST(StepSchedule, MaxParallelBoundsTheStepsRunningAtOnce) {
  EXPECT_EQ(schedule(fan_out(S::succeeded), 4, false).start, (Names{"a", "b", "c"}));
  EXPECT_EQ(schedule(fan_out(S::succeeded), 2, false).start, (Names{"a", "b"}));
  EXPECT_EQ(schedule(fan_out(S::succeeded), 1, false).start, Names{"a"});
  // Steps already running take their places.
  EXPECT_EQ(schedule(fan_out(S::succeeded, S::running), 2, false).start, Names{"b"});
  EXPECT_EQ(schedule(fan_out(S::succeeded, S::running, S::running), 2, false).start, Names{});
}

TEST(StepSchedule, AFailureSkipsEverythingDownstreamAndTheOthersGoOn) {
  const auto d = schedule(fan_out(S::succeeded, S::failed, S::succeeded), 4, false);
  EXPECT_EQ(d.start, Names{"c"});
  EXPECT_EQ(d.skip, (Skips{{"report", "a"}}));
  // A skip stops the steps after it in the same decision.
  const auto chain = schedule({{"prep", {}, S::failed},
                               {"train", {"prep"}, S::waiting},
                               {"evaluate", {"train"}, S::waiting}},
                              4, false);
  EXPECT_EQ(chain.start, Names{});
  EXPECT_EQ(chain.skip, (Skips{{"train", "prep"}, {"evaluate", "train"}}));
}

TEST(StepSchedule, AfterCtrlCNothingStarts) {
  const auto d = schedule(fan_out(S::succeeded, S::running), 4, true);
  EXPECT_EQ(d.start, Names{});
  EXPECT_EQ(d.skip, (Skips{{"b", ""}, {"c", ""}, {"report", ""}}));
}

TEST(StepSchedule, ANeedOutsideTheRunCountsAsDone) {
  // --only train: prep's outputs come from an earlier run.
  EXPECT_EQ(schedule({{"train", {"prep"}, S::waiting}}, 1, false).start, Names{"train"});
  EXPECT_EQ(state_name(S::reused), "reused");
}

}  // namespace
}  // namespace kinetic
