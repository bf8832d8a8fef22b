// Requirements: found next to the job, normalized, and hashed into the image tag.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"

namespace kinetic {

struct Requirements {
  fs::path source;                 // requirements.txt or pyproject.toml it came from
  std::vector<std::string> lines;  // normalized (see normalize_requirements)
};

// Normalizes requirements.txt text: drops comments (full-line and trailing " #"), blank lines and
// whitespace, lower-cases and canonicalizes project names (PEP 503: runs of -_. become '-'),
// keeps version specifiers and markers, then sorts and de-duplicates.
std::vector<std::string> normalize_requirements(std::string_view text);

// [project].dependencies of a pyproject.toml, normalized as above. Empty when absent.
std::vector<std::string> pyproject_dependencies(std::string_view toml);

// The requirements for a job: an explicit file when given (requirements.txt syntax, or a
// pyproject.toml), else the first requirements.txt or pyproject.toml found walking up from
// START_DIR, not above CONTEXT_ROOT. nullopt when there are none.
std::optional<Requirements> find_requirements(const fs::path& start_dir,
                                              const fs::path& context_root,
                                              const std::optional<fs::path>& explicit_file);

// Image tag "FAMILY-HASH12": HASH over the base image reference, the family and the normalized
// requirements. Comments, blank lines, order, whitespace and name case do not change it.
std::string image_tag(std::string_view family, std::string_view base_image,
                      const std::vector<std::string>& normalized_requirements);

}  // namespace kinetic
