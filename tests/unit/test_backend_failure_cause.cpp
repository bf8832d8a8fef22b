// The cause of a failure in the job's own words (backend/failure_cause.h), against the cases in
// tests/golden/failure_causes.json, which the GKE bootstrap's copy of the rule is held to as well
// (tests/integration/test_bootstrap.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backend/failure_cause.h"

namespace kinetic {
namespace {

nlohmann::json cases() {
  std::ifstream f(std::string(KINETIC_GOLDEN_DIR) + "/failure_causes.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(FailureCause, EveryCase) {
  const auto all = cases();
  ASSERT_GE(all.size(), 8u);
  for (const auto& c : all)
    EXPECT_EQ(failure_cause(c["stderr"].get<std::string>()), c["cause"].get<std::string>())
        << c["name"];
}

TEST(FailureCause, ACompilersFirstErrorNotItsCaret) {
  const std::string gxx =
      "/ctx/main.cpp: In function 'int main()':\n"
      "/ctx/main.cpp:3:5: error: 'foo' was not declared in this scope\n"
      "    3 |     foo();\n"
      "      |     ^~~\n"
      "/ctx/main.cpp:4:5: error: 'bar' was not declared in this scope\n";
  EXPECT_EQ(compile_error(gxx), "/ctx/main.cpp:3:5: error: 'foo' was not declared in this scope");
  EXPECT_EQ(compile_error("g++: internal compiler error\n"), "g++: internal compiler error");
}

TEST(FailureCause, TheTailKeepsTheLastBytesAcrossChunks) {
  StreamTail tail;
  tail.add(std::string(kFailureTailBytes - 2, 'a'));
  tail.add("bcd");
  EXPECT_EQ(tail.text().size(), kFailureTailBytes);
  EXPECT_EQ(tail.text().substr(tail.text().size() - 4), "abcd");
  tail.add(std::string(kFailureTailBytes + 5, 'z') + "!");
  EXPECT_EQ(tail.text().size(), kFailureTailBytes);
  EXPECT_EQ(tail.text().back(), '!');
}

}  // namespace
}  // namespace kinetic
