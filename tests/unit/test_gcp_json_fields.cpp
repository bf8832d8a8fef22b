// Reading Google API JSON defensively: a malformed field is absent, never a crash.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gcp/json_fields.h"

namespace kinetic::gcp {
namespace {

using nlohmann::json;

TEST(JsonFields, Int64FromProto3StringsOrNumbers) {
  EXPECT_EQ(as_int64(json("1712345678901234")), 1712345678901234);
  EXPECT_EQ(as_int64(json(42)), 42);
  EXPECT_EQ(as_int64(json("-7")), -7);
  // Malformed: 0, not an exception (std::stoll threw here before).
  EXPECT_EQ(as_int64(json("abc")), 0);
  EXPECT_EQ(as_int64(json("12abc")), 0);
  EXPECT_EQ(as_int64(json("99999999999999999999999")), 0);
  EXPECT_EQ(as_int64(json(nullptr)), 0);
  EXPECT_EQ(as_int64(json::array()), 0);
  EXPECT_EQ(as_int64(member(json{{"size", "5"}}, "size")), 5);
  EXPECT_EQ(as_int64(member(json("not an object"), "size")), 0);
}

}  // namespace
}  // namespace kinetic::gcp
