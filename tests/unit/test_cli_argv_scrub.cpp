// cli/argv_scrub.h: the secrets on kinetic's own command line are overwritten once parsed, in
// every form CLI11 accepts for kinetic's options (issue #28 point 7): combined short flags
// (`-qe K=V`, `-qeK=V`) and `config set notify URL` as well as `--env K=V` and `--notify URL`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app.h"
#include "argv_scrub.h"
#include "unit/cli_sandbox.h"
#include "unit/memory_streams.h"

namespace kinetic::cli {
namespace {

// ARGS as main() gets them (the program's name first), scrubbed with kinetic's own options.
std::vector<std::string> scrubbed(std::vector<std::string> args) {
  test::CliSandbox sandbox("kinetic-argv-scrub-");
  test::CapturedIO captured;
  Factory f(sandbox.env(), captured.io);
  Action unused;
  const OptionShapes shapes = option_shapes(*build_app(f, unused));
  args.insert(args.begin(), "kinetic");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  scrub_secrets(static_cast<int>(argv.size()), argv.data(), shapes);
  std::vector<std::string> out;
  for (size_t i = 1; i < argv.size(); ++i) out.emplace_back(argv[i]);
  return out;
}

using Args = std::vector<std::string>;

TEST(ArgvScrub, EnvValuesInEveryFormCli11Reads) {
  EXPECT_EQ(scrubbed({"run", "t.py", "--env", "K=secret"}),
            (Args{"run", "t.py", "--env", "K=******"}));
  EXPECT_EQ(scrubbed({"run", "t.py", "--env=K=secret"}), (Args{"run", "t.py", "--env=K=******"}));
  EXPECT_EQ(scrubbed({"run", "t.py", "-e", "K=secret"}), (Args{"run", "t.py", "-e", "K=******"}));
  EXPECT_EQ(scrubbed({"run", "t.py", "-eK=secret"}), (Args{"run", "t.py", "-eK=******"}));
  // Combined with flags that take no value (-q, -d): the value follows -e all the same.
  EXPECT_EQ(scrubbed({"run", "t.py", "-qe", "K=secret"}), (Args{"run", "t.py", "-qe", "K=******"}));
  EXPECT_EQ(scrubbed({"run", "t.py", "-qeK=secret"}), (Args{"run", "t.py", "-qeK=******"}));
  EXPECT_EQ(scrubbed({"run", "t.py", "-dqe", "K=secret"}),
            (Args{"run", "t.py", "-dqe", "K=******"}));
  // K alone takes the value from kinetic's environment: nothing to hide.
  EXPECT_EQ(scrubbed({"run", "t.py", "-qe", "K"}), (Args{"run", "t.py", "-qe", "K"}));
}

TEST(ArgvScrub, AnOptionsValueIsNotReadAsFlags) {
  // -o takes "e" as its value, and K=V is then the job's file: not an --env value.
  EXPECT_EQ(scrubbed({"run", "-oe", "K=V"}), (Args{"run", "-oe", "K=V"}));
  // --context's value "-eK=V" is a (bad) context name, not an --env, and the next -e is one.
  EXPECT_EQ(scrubbed({"run", "t.py", "--context", "-e", "-e", "K=secret"}),
            (Args{"run", "t.py", "--context", "-e", "-e", "K=******"}));
}

TEST(ArgvScrub, NotifyUrlsKeepOnlySchemeAndHost) {
  EXPECT_EQ(scrubbed({"run", "t.py", "--notify", "https://hooks.example/T0/s3cr3t"}),
            (Args{"run", "t.py", "--notify", "https://hooks.example/*********"}));
  EXPECT_EQ(scrubbed({"run", "t.py", "--notify=https://hooks.example/T0/s3cr3t"}),
            (Args{"run", "t.py", "--notify=https://hooks.example/*********"}));
}

TEST(ArgvScrub, TheNotifySettingIsScrubbedLikeNotify) {
  EXPECT_EQ(scrubbed({"config", "set", "notify", "https://hooks.example/T0/s3cr3t"}),
            (Args{"config", "set", "notify", "https://hooks.example/*********"}));
  EXPECT_EQ(scrubbed({"config", "set", "contexts.acme.notify", "https://h.example/a,https://h2/b"}),
            (Args{"config", "set", "contexts.acme.notify", "https://h.example/**************"}));
  // Global flags between the words change nothing.
  EXPECT_EQ(scrubbed({"-q", "config", "--context", "acme", "set", "notify", "https://h/s3"}),
            (Args{"-q", "config", "--context", "acme", "set", "notify", "https://h/**"}));
  // Other settings are not secrets.
  EXPECT_EQ(scrubbed({"config", "set", "zone", "us-central1-a"}),
            (Args{"config", "set", "zone", "us-central1-a"}));
}

TEST(ArgvScrub, TheJobsOwnArgumentsAreLeftAlone) {
  EXPECT_EQ(scrubbed({"run", "t.py", "--", "-qeK=V", "--env", "A=B"}),
            (Args{"run", "t.py", "--", "-qeK=V", "--env", "A=B"}));
}

TEST(ArgvScrub, TheShapesAreKineticsOptions) {
  test::CliSandbox sandbox("kinetic-argv-scrub-");
  test::CapturedIO captured;
  Factory f(sandbox.env(), captured.io);
  Action unused;
  const OptionShapes shapes = option_shapes(*build_app(f, unused));
  for (char c : {'e', 'o', 'v', 'a', 'l'}) EXPECT_TRUE(shapes.short_with_value.count(c)) << c;
  for (char c : {'q', 'd', 'y', 'i', 't', 'h'}) EXPECT_FALSE(shapes.short_with_value.count(c)) << c;
  EXPECT_TRUE(shapes.long_with_value.count("--context"));
  EXPECT_TRUE(shapes.long_with_value.count("--notify"));
  EXPECT_FALSE(shapes.long_with_value.count("--detach"));
}

}  // namespace
}  // namespace kinetic::cli
