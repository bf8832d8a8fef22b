// lib/pipeline/step_graph.h: dependency order, the steps --only and --from select, and a
// missing need or a cycle named with its file, line and step.
#include <gtest/gtest.h>

#include "core/error.h"
#include "pipeline/step_graph.h"

namespace kinetic {
namespace {

PipelineFile parse_graph(const std::string& text) {
  return parse_pipeline(text, "kinetic.yaml", "/proj");
}

std::vector<std::string> order_of(const std::string& text) {
  const auto file = parse_graph(text);
  std::vector<std::string> names;
  for (const auto* step : dependency_order(file)) names.push_back(step->name);
  return names;
}

std::string order_error(const std::string& text) {
  try {
    order_of(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    return e.what();
  }
  return "";
}

const char* kFanOut =
    "steps:\n"
    "  report: {file: r.py, needs: [left, right]}\n"
    "  left: {file: l.py, needs: [prep]}\n"
    "  right: {file: r.py, needs: [prep]}\n"
    "  prep: {file: p.py}\n";

TEST(StepGraph, EachStepComesAfterWhatItNeedsTiesInTheFilesOrder) {
  EXPECT_EQ(order_of(kFanOut), (std::vector<std::string>{"prep", "left", "right", "report"}));
  EXPECT_EQ(order_of("steps:\n  b: {file: b.py}\n  a: {file: a.py}\n"),
            (std::vector<std::string>{"b", "a"}));
}

TEST(StepGraph, AMissingNeedNamesTheStepAndTheNameMeant) {
  EXPECT_EQ(order_error("steps:\n  prep: {file: p.py}\n  train: {file: t.py, needs: [prepp]}\n"),
            "kinetic.yaml:3: step train: needs 'prepp', which is not a step; did you mean prep?");
}

TEST(StepGraph, ACycleIsNamedFromItsFirstStep) {
  EXPECT_EQ(order_error("steps:\n"
                        "  a: {file: a.py, needs: [c]}\n"
                        "  b: {file: b.py, needs: [a]}\n"
                        "  c: {file: c.py, needs: [b]}\n"),
            "kinetic.yaml:2: step a: a cycle (a needs c needs b needs a); remove one of these "
            "needs");
  EXPECT_EQ(order_error("steps:\n  a: {file: a.py, needs: [a]}\n"),
            "kinetic.yaml:2: step a: a cycle (a needs a); remove one of these needs");
}

TEST(StepGraph, OnlyAndFromSelectSteps) {
  const auto file = parse_graph(kFanOut);
  EXPECT_EQ(select_steps(file, {}, ""), (std::set<std::string>{"prep", "left", "right", "report"}));
  EXPECT_EQ(select_steps(file, {"left"}, ""), (std::set<std::string>{"left"}));
  EXPECT_EQ(select_steps(file, {}, "left"), (std::set<std::string>{"left", "report"}));
  EXPECT_EQ(select_steps(file, {}, "prep"),
            (std::set<std::string>{"prep", "left", "right", "report"}));
  try {
    select_steps(file, {"lefft"}, "");
    FAIL() << "an unknown step was selected";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--only lefft: kinetic.yaml has no step lefft; did you mean left?");
  }
}

TEST(StepGraph, DependentsAndOverlap) {
  const auto file = parse_graph(kFanOut);
  EXPECT_EQ(dependents_of(file, "prep"), (std::set<std::string>{"left", "right", "report"}));
  EXPECT_EQ(dependents_of(file, "report"), std::set<std::string>{});
  // left and right need prep alone: they may run at once; a chain never overlaps.
  EXPECT_TRUE(may_overlap(file, {"left", "right"}));
  EXPECT_FALSE(may_overlap(file, {"prep", "left", "report"}));
  EXPECT_FALSE(may_overlap(file, {"prep"}));
}

}  // namespace
}  // namespace kinetic
