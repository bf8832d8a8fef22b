// Which files of a context are left out of the package: default excludes plus .kineticignore
// in gitignore syntax (negation, anchoring, directory-only patterns, ** globs).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"

namespace kinetic {

class IgnoreRules {
 public:
  // The defaults: .git, __pycache__, .venv, venv, node_modules, tool caches (.tox, .mypy_cache,
  // .ruff_cache, .pytest_cache, .ipynb_checkpoints), .DS_Store, kinetic-out/.
  static IgnoreRules defaults();

  // Adds the patterns of a gitignore-syntax file whose directory is the context root.
  // A missing file adds nothing.
  void add_file(const fs::path& ignore_file);
  // Adds one gitignore-syntax line (comments and blank lines are ignored).
  void add_line(std::string_view line);

  // True when REL_PATH (relative to the context root, '/'-separated) is excluded.
  // IS_DIR says whether it names a directory. Later patterns win, as in git.
  bool ignored(std::string_view rel_path, bool is_dir) const;

  // Like ignored(), but assumes REL_PATH's parent directories are not excluded: what a walk that
  // does not descend into excluded directories needs (it skips re-checking every ancestor).
  bool ignored_entry(std::string_view rel_path, bool is_dir) const;

 private:
  struct Rule {
    std::string pattern;  // without leading '!' and trailing '/'
    bool negate = false;
    bool dir_only = false;
    bool anchored = false;  // contains a '/' other than a trailing one: match from the root
    bool literal = false;   // no glob characters: a plain string comparison
  };
  std::vector<Rule> rules_;
};

}  // namespace kinetic
