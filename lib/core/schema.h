// The version of the JSON shapes kinetic writes and prints (docs/schemas.md): status.json,
// spec.json and every -o json/yaml document carry it as `schema_version`. Raised when a field
// is removed or changes meaning; adding a field does not raise it. A record without the field
// is version 1.
#pragma once

namespace kinetic {

inline constexpr int kSchemaVersion = 1;

}  // namespace kinetic
