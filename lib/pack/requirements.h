// Requirements: found next to the job and normalized; job/image_recipe.h builds them into an
// image.
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

// [project].requires-python of a pyproject.toml ("" when absent), e.g. ">=3.11".
std::string pyproject_requires_python(std::string_view toml);

// requires-python of the first pyproject.toml walking up from START_DIR, not above CONTEXT_ROOT
// (whichever file supplies the requirements); "" when none says.
std::string find_requires_python(const fs::path& start_dir, const fs::path& context_root);

// The requirements for a job: an explicit file when given (requirements.txt syntax, or a
// pyproject.toml), else the first requirements.txt or pyproject.toml found walking up from
// START_DIR, not above CONTEXT_ROOT. nullopt when there are none. "-r FILE" lines are expanded
// (relative to the file naming them). FOR_IMAGE_BUILD: the lines go into an image build that
// sees nothing but them, so a line naming another local file (-e PATH, -c FILE, -f DIR, a path
// or wheel, file: URLs) or a URL carrying credentials (which would end up in an image layer) is
// an Error(Errc::packaging) naming the file and the line (credentials masked).
std::optional<Requirements> find_requirements(const fs::path& start_dir,
                                              const fs::path& context_root,
                                              const std::optional<fs::path>& explicit_file,
                                              bool for_image_build = true);

// The project a normalized requirement line names: what comes before its extras, specifiers,
// marker or URL ("jax[tpu]>=0.6" names jax).
std::string_view requirement_project(std::string_view line);

// `run --with REQ`: each EXTRA line (a project name, optionally with extras, version specifiers
// and a marker; nothing that names a file, a URL or a pip option) normalized and put into LINES,
// replacing a line for the same project (the --with line wins: it is what the caller needs, e.g.
// the exact cloudpickle that pickled a call). Throws Error(Errc::usage) naming a bad line.
void add_requirements(std::vector<std::string>& lines, const std::vector<std::string>& extra,
                      std::string_view flag);

}  // namespace kinetic
