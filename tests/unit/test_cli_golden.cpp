// The CLI in-process, table-driven, as gh tests its commands: each case runs cli::run with a
// Factory on a fixed environment and memory streams, and its exit code, stdout and stderr must
// match tests/golden/cli/NAME.txt. The sandbox's path reads $ROOT and the version $VERSION.
// After an intended change:
//   KINETIC_UPDATE_GOLDEN=1 ./build/tests/kinetic_unit_tests --gtest_filter='CliGolden*'
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app.h"
#include "core/fs.h"
#include "unit/cli_sandbox.h"
#include "unit/memory_streams.h"

namespace kinetic::cli {
namespace {

struct CliCase {
  const char* name;
  std::vector<std::string> args;
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); !from.empty() && at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

class CliGolden : public ::testing::TestWithParam<CliCase> {};

TEST_P(CliGolden, MatchesItsGoldenOutput) {
  const CliCase& c = GetParam();
  test::CliSandbox sandbox("kinetic-cli-golden-");
  const std::string r = sandbox.root().string();
  test::CapturedIO captured;
  Factory f(sandbox.env(), captured.io);
  // Commands that read the current directory see the sandbox.
  const int code = sandbox.run(f, c.args);

  std::string command = "$ kinetic";
  for (const auto& a : c.args) command += " " + a;
  std::string got = command + "\nexit " + std::to_string(code) + "\n--- stdout\n" + captured.out() +
                    "--- stderr\n" + captured.err();
  got = replace_all(replace_all(got, r, "$ROOT"), KINETIC_VERSION, "$VERSION");

  const fs::path golden =
      fs::path(KINETIC_SOURCE_DIR) / "tests" / "golden" / "cli" / (std::string(c.name) + ".txt");
  if (std::getenv("KINETIC_UPDATE_GOLDEN")) {
    make_dirs(golden.parent_path(), 0755);
    atomic_write(golden, got, 0644);
    return;
  }
  auto want = read_file(golden);
  ASSERT_TRUE(want) << golden << " is missing; run with KINETIC_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(got, *want);
}

const CliCase kCases[] = {
    {"version", {"version"}},
    {"version_json", {"version", "-o", "json"}},
    {"no_command_shows_help", {}},
    {"group_without_verb_shows_help", {"config"}},
    {"unknown_command", {"stauts"}},
    {"unknown_flag", {"status", "--fromat", "json"}},
    {"bad_output_format", {"status", "-o", "xml"}},
    {"output_format_the_command_lacks", {"config", "view", "-o", "name"}},
    {"job_args_without_dashdash", {"run", "train.py", "--epochs", "3"}},
    {"args_after_dashdash_for_status", {"status", "--", "x"}},
    {"accelerators_names", {"accelerators", "-o", "name"}},
    // Every catalog entry, every field: a changed topology, machine type, host count or price
    // shows in review as a diff of this file.
    {"accelerators_json", {"accelerators", "-o", "json"}},
    {"config_get_contexts", {"config", "get-contexts"}},
    {"config_set_unknown_key", {"config", "set", "zon", "us-central1-a"}},
    {"config_use_unknown_context", {"config", "use-context", "acme"}},
    {"cleanup_bad_duration", {"cleanup", "--older-than", "7 days"}},
    {"status_without_jobs", {"status"}},
    {"logs_unknown_job", {"logs", "job-00000000"}},
    {"status_malformed_job_id", {"status", "../etc"}},
    {"completion_unknown_shell", {"completion", "tcsh"}},
    {"run_missing_file", {"run", "missing.py", "--dry-run"}},
    {"run_bad_max_cost", {"run", "missing.py", "--max-cost", "5usd"}},
};

INSTANTIATE_TEST_SUITE_P(Commands, CliGolden, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kinetic::cli
