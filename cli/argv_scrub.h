// Secrets given on kinetic's own command line (`--env K=V`, `--notify URL`, `config set notify
// URL`) are overwritten in place once parsed: /proc/PID/cmdline (`ps`) shows a process's
// arguments to every user of the machine for as long as it lives.
#pragma once

#include <set>
#include <string>

#include <CLI/CLI.hpp>

namespace kinetic::cli {

// Which options take a value, so that arguments are read as CLI11 reads them: `-qeK=V` is -q
// then -e with K=V, `-oe` is -o with e, `--context e` passes e to --context.
struct OptionShapes {
  std::set<char> short_with_value;
  std::set<std::string> long_with_value;  // with the dashes: "--context"
};

// The shapes of every option of APP and its commands. A letter that takes a value in any
// command counts as taking one: reading a group ends there, the cautious way for a scrubber
// (`-e` is `run`'s alone, and no letter is a flag in `run` and takes a value elsewhere).
OptionShapes option_shapes(const CLI::App& app);

// Overwrites with '*', in ARGV (up to a `--`: the job's own arguments are its own), the values
// of `--env`/`-e` K=V (after the '='), the paths of `--notify` URLs and of the VALUE of
// `config set notify|contexts.NAME.notify VALUE` (after scheme://host/).
void scrub_secrets(int argc, char** argv, const OptionShapes& shapes);

}  // namespace kinetic::cli
