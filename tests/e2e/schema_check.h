// The stable schema of kinetic's JSON (docs/schemas.md), checked by shape: each document's
// keys and value types are compared with tests/golden/schemas/NAME.json, so a field renamed,
// removed or retyped by accident fails a test. Values are not compared. Regenerate after an
// intended change (and update docs/schemas.md):
//   KINETIC_UPDATE_GOLDEN=1 ./build/tests/kinetic_e2e_tests --gtest_filter='Schema*:*Schema*'
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kinetic::test {

// The shape of DOC: objects keep their keys (sorted) with each value's shape, an array the
// merged shape of its items, a scalar its type name ("string", "number", "boolean", "null";
// "number|null" where items differ).
nlohmann::json shape_of(const nlohmann::json& doc);

// Every key of DOC is snake_case, except inside the data maps named in DATA_MAPS (whose keys
// are names: node selectors, settings). Returns the first offending path, or "".
std::string first_non_snake_key(const nlohmann::json& doc);

// Fails the current test when DOC's shape differs from tests/golden/schemas/NAME.json, or a
// key is not snake_case.
void expect_schema(const std::string& name, const nlohmann::json& doc);

}  // namespace kinetic::test
