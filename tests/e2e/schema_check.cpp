#include "schema_check.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>

#include "cli_harness.h"
#include "core/fs.h"
#include "core/strings.h"

namespace kinetic::test {
namespace {

// Objects whose keys are data (names), not fields.
const std::set<std::string> kDataMaps = {"node_selector", "resolved"};

std::string scalar_type(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number()) return "number";
  return "string";
}

nlohmann::json merge(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_object() && b.is_object()) {
    nlohmann::json out = a;
    for (const auto& [k, v] : b.items()) out[k] = out.contains(k) ? merge(out[k], v) : v;
    return out;
  }
  if (a.is_array() && b.is_array()) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return nlohmann::json::array({merge(a[0], b[0])});
  }
  if (a == b) return a;
  std::set<std::string> types;
  for (const auto& t : {a, b}) {
    for (const auto& part : split(t.is_string() ? t.get<std::string>() : t.dump(), '|'))
      types.insert(std::string(part));
  }
  std::string joined;
  for (const auto& t : types) joined += (joined.empty() ? "" : "|") + t;
  return joined;
}

}  // namespace

nlohmann::json shape_of(const nlohmann::json& doc) {
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : doc.items()) out[k] = shape_of(v);
    return out;
  }
  if (doc.is_array()) {
    nlohmann::json item;
    for (const auto& v : doc) item = item.is_null() ? shape_of(v) : merge(item, shape_of(v));
    return item.is_null() ? nlohmann::json::array() : nlohmann::json::array({item});
  }
  return scalar_type(doc);
}

std::string first_non_snake_key(const nlohmann::json& doc) {
  static const std::regex snake("[a-z][a-z0-9_]*");
  if (doc.is_array()) {
    for (const auto& v : doc)
      if (auto bad = first_non_snake_key(v); !bad.empty()) return bad;
  }
  if (!doc.is_object()) return "";
  for (const auto& [k, v] : doc.items()) {
    if (!std::regex_match(k, snake)) return k;
    if (kDataMaps.count(k)) continue;
    if (auto bad = first_non_snake_key(v); !bad.empty()) return k + "." + bad;
  }
  return "";
}

void expect_schema(const std::string& name, const nlohmann::json& doc) {
  EXPECT_EQ(first_non_snake_key(doc), "") << name << ": keys are snake_case (docs/schemas.md)";
  const fs::path golden =
      fs::path(KINETIC_SOURCE_DIR) / "tests" / "golden" / "schemas" / (name + ".json");
  const std::string shape = shape_of(doc).dump(2) + "\n";
  if (std::getenv("KINETIC_UPDATE_GOLDEN")) {
    make_dirs(golden.parent_path(), 0755);
    atomic_write(golden, shape, 0644);
    return;
  }
  const std::string want = slurp(golden);
  ASSERT_FALSE(want.empty())
      << golden << " is missing; run the test with KINETIC_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(shape, want) << name << ": the shape of this document changed. If that is intended, "
                         << "update docs/schemas.md (and raise kSchemaVersion when a field is "
                            "removed or changes meaning), then regenerate the golden file with "
                            "KINETIC_UPDATE_GOLDEN=1";
}

}  // namespace kinetic::test
