// The Cloud Build source of a job image: a deterministic .tar.gz of the recipe's files
// (job/image_recipe.h: Dockerfile, requirements.txt, smoke.sh).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/fs.h"

namespace kinetic::gke {

// Writes FILES (name, contents) to OUT as a .tar.gz with fixed times and modes: the same recipe
// gives the same bytes.
void write_build_source(const fs::path& out,
                        const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace kinetic::gke
