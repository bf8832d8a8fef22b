// One directory's contents copied into another: how a local job's outputs are delivered when
// they cannot be moved, and how a pipeline step reuses an earlier run's outputs.
#pragma once

#include <string>

#include "core/fs.h"

namespace kinetic {

// Copies the contents of directory FROM into TO (made 0755 if missing), replacing files of the
// same name and keeping symlinks as symlinks; throws Errc::internal naming WHAT on failure.
void copy_tree(const fs::path& from, const fs::path& to, const std::string& what);

}  // namespace kinetic
