// Shell completions and the man page, generated from the command tree that build_app() returns,
// so they cannot drift from the real interface (tests/e2e/test_docs.cpp checks the copies in
// completions/ and man/; scripts/gen-docs.sh rewrites them).
//
// Everything is walked from the tree: subcommands (hidden ones, with an empty group, are
// skipped), their descriptions and footers, flags and whether they take a value, positionals.
// The only hand-written knowledge is where values come from (docgen.cpp: accelerators, contexts,
// job ids, output formats, files) and the sections a man page needs beyond the commands.
// The output is deterministic: no dates, no paths.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kinetic::cli {

// The shells `kinetic completion` supports: bash, zsh, fish.
const std::vector<std::string>& completion_shells();

// A bash completion script (works with or without the bash-completion package).
std::string bash_completion(const CLI::App& root);
// A zsh completion script (#compdef; also works when sourced after compinit).
std::string zsh_completion(const CLI::App& root);
// A fish completion script (`complete -c kinetic ...`).
std::string fish_completion(const CLI::App& root);
// The kinetic(1) man page, in roff (man macros).
std::string man_page(const CLI::App& root);

}  // namespace kinetic::cli
