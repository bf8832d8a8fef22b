// Bad input of every kind: one line on stderr saying what is wrong and what to do, the documented
// exit code, and nothing left behind.
#include <gtest/gtest.h>

#include "cli_harness.h"

namespace kinetic::test {
namespace {

class ErrorsTest : public ::testing::Test {
 protected:
  Sandbox sb;
  fs::path proj = sb.project("proj");

  void SetUp() override { sb.write("proj/ok.py", "print('ok')\n"); }

  // The error is one line, starts with "error: " and mentions every NEEDLE.
  void expect_one_line(const CliResult& r, std::initializer_list<std::string> needles) {
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  void expect_nothing_left() {
    EXPECT_FALSE(fs::exists(sb.state() / "jobs")) << "a job record was left";
    std::error_code ec;
    EXPECT_TRUE(!fs::exists(sb.state() / "tmp") || fs::is_empty(sb.state() / "tmp", ec));
    EXPECT_FALSE(fs::exists(proj / "kinetic-out"));
  }
};

TEST_F(ErrorsTest, MissingJobFileIs127) {
  auto r = sb.run({"run", "nope.py"}, proj);
  EXPECT_EQ(r.exit_code, 127);
  expect_one_line(r, {"job file 'nope.py' not found"});
  expect_nothing_left();
}

TEST_F(ErrorsTest, MissingInterpreterIs127) {
  auto r = sb.run({"run", "ok.py"}, proj, {{"PATH", "/nonexistent"}});
  EXPECT_EQ(r.exit_code, 127);
  expect_one_line(r, {"python3 not found on PATH"});
  expect_nothing_left();
}

TEST_F(ErrorsTest, NonExecutableUnknownFileIs126) {
  sb.write("proj/data.bin", "x");
  auto r = sb.run({"run", "data.bin"}, proj);
  EXPECT_EQ(r.exit_code, 126);
  expect_one_line(r, {"not executable", "chmod +x"});
  expect_nothing_left();
}

TEST_F(ErrorsTest, UnknownAcceleratorSuggestsTheClosest) {
  auto r = sb.run({"run", "ok.py", "--accelerator", "v5litpod-1"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  expect_one_line(r, {"unknown accelerator 'v5litpod-1'", "did you mean v5litepod-1?"});
  expect_nothing_left();
}

TEST_F(ErrorsTest, MalformedConfigNamesTheFileAndLine) {
  sb.write("config/kinetic/config.yaml", "current-context: local\ncontexts:\n  - name: [oops\n");
  auto r = sb.run({"run", "ok.py"}, proj);
  EXPECT_EQ(r.exit_code, 125);
  expect_one_line(r, {sb.config_file().string(), "line "});
  expect_nothing_left();
  auto s = sb.run({"status"}, proj);
  EXPECT_EQ(s.exit_code, 1);
  expect_one_line(s, {"malformed config file"});
}

TEST_F(ErrorsTest, UnknownConfigKeySuggestsTheClosest) {
  sb.write("config/kinetic/config.yaml", "contexts:\n- name: acme\n  backend: gke\n  projcet: p\n");
  auto r = sb.run({"config", "view"}, proj);
  EXPECT_EQ(r.exit_code, 1);
  expect_one_line(r, {"line 4", "did you mean project?"});
}

TEST_F(ErrorsTest, UnknownContextSuggestsTheClosest) {
  auto r = sb.run({"run", "ok.py", "--context", "lcoal"}, proj);
  EXPECT_EQ(r.exit_code, 125);
  expect_one_line(r, {"no context named 'lcoal'", "did you mean local?"});
  expect_nothing_left();
  auto env = sb.run({"status"}, proj, {{"KINETIC_CONTEXT", "nowhere"}});
  EXPECT_EQ(env.exit_code, 1);
  expect_one_line(env, {"no context named 'nowhere'"});
}

TEST_F(ErrorsTest, BadFlagsAreUsageErrors) {
  auto typo = sb.run({"run", "ok.py", "--acelerator", "l4"}, proj);
  EXPECT_EQ(typo.exit_code, 2);
  expect_one_line(typo, {"unknown flag '--acelerator'", "did you mean --accelerator?"});

  auto job_arg = sb.run({"run", "ok.py", "--epochs", "3"}, proj);
  EXPECT_EQ(job_arg.exit_code, 2);
  expect_one_line(job_arg, {"--epochs", "after --"});

  auto stray = sb.run({"run", "ok.py", "extra"}, proj);
  EXPECT_EQ(stray.exit_code, 2);
  expect_one_line(stray, {"unexpected argument 'extra'", "kinetic run FILE -- extra"});

  auto duration = sb.run({"run", "ok.py", "--timeout", "soon"}, proj);
  EXPECT_EQ(duration.exit_code, 2);
  expect_one_line(duration, {"invalid duration 'soon'", "--timeout"});

  auto no_file = sb.run({"run"}, proj);
  EXPECT_EQ(no_file.exit_code, 2);
  expect_one_line(no_file, {"no job file given", "kinetic run FILE"});
  expect_nothing_left();
}

TEST_F(ErrorsTest, UnknownCommandSuggestsTheClosest) {
  auto r = sb.run({"runn", "ok.py"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  expect_one_line(r, {"unknown command 'runn'", "did you mean run?"});
  auto nested = sb.run({"config", "use-contxt", "local"}, proj);
  EXPECT_EQ(nested.exit_code, 2);
  expect_one_line(nested, {"did you mean use-context?"});
}

// A job id reaches a path (local) or an object name and URL (gke): checked first (issue #10.7).
TEST_F(ErrorsTest, AJobIdThatIsNotOneIsAUsageError) {
  for (const char* cmd : {"logs", "status", "cancel"}) {
    auto r = sb.run({cmd, "../../x"}, proj);
    EXPECT_EQ(r.exit_code, 2) << cmd;
    expect_one_line(r, {"'../../x' is not a job id", "kinetic status"});
  }
}

// JSON records hold UTF-8 only: what they cannot hold is refused up front, in one line with
// the bytes shown escaped; environment values may be any bytes (issue #10 point 7).
TEST_F(ErrorsTest, InputThatIsNotUtf8RunsOrFailsInOneLine) {
  auto arg = sb.run({"run", "ok.py", "--", "a", "b\xff"}, proj);
  EXPECT_EQ(arg.exit_code, 2);
  expect_one_line(arg, {"argument 2 ('b\\xFF') is not valid UTF-8", "--env NAME"});
  expect_nothing_left();
  sb.write("proj/tr\xfc.py", "print('x')\n");
  auto file = sb.run({"run", "tr\xfc.py"}, proj);
  EXPECT_EQ(file.exit_code, 2);
  expect_one_line(file, {"the job file name 'tr\\xFC.py' is not valid UTF-8", "rename it"});
  expect_nothing_left();
  auto image = sb.run({"run", "ok.py", "--image", "img\xfe"}, proj);
  EXPECT_EQ(image.exit_code, 2);
  expect_nothing_left();

  // Runs: a value that is not UTF-8, and a file in the context whose name is not.
  sb.write("proj/see.py",
           "import os\nprint(os.environb[b'BLOB'].hex(), sorted(os.listdir(b'.')))\n");
  auto ok = sb.run({"run", "see.py", "--env", "BLOB=\xfe\xff"}, proj);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("feff"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("b'tr\\xfc.py'"), std::string::npos) << ok.out;
}

// The flag to name is --context-dir (--context picks a kinetic context).
TEST_F(ErrorsTest, ContextDirectoryErrorsNameTheRightFlag) {
  auto missing = sb.run({"run", "ok.py", "--context-dir", "nope"}, proj);
  EXPECT_EQ(missing.exit_code, 2);
  expect_one_line(missing, {"--context-dir nope: not a directory"});
  sb.write("other/x.txt", "");
  auto outside = sb.run({"run", "ok.py", "--context-dir", (sb.root() / "other").string()}, proj);
  EXPECT_EQ(outside.exit_code, 2);
  expect_one_line(outside, {"pass --context-dir with a directory that contains it"});
  expect_nothing_left();
}

TEST_F(ErrorsTest, DownWithoutYesRefusesWhenNotATerminal) {
  auto r = sb.run({"down"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  expect_one_line(r, {"--yes"});
}

TEST_F(ErrorsTest, CloudCommandsNameTheMissingSetting) {
  // No project anywhere (no flag, no env, no gcloud config): one line naming how to give one.
  for (std::vector<std::string> cmd : {std::vector<std::string>{"up", "--zone", "us-central1-a"},
                                       {"down", "--yes", "--zone", "us-central1-a"}}) {
    auto r = sb.run(cmd, proj);
    EXPECT_EQ(r.exit_code, 1) << cmd[0];
    expect_one_line(r, {"needs a project", "--project"});
  }
  auto zone = sb.run({"up", "--project", "p"}, proj);
  EXPECT_EQ(zone.exit_code, 1);
  expect_one_line(zone, {"needs a location", "--zone"});
  // Pools belong to a cluster: on the local context, say how to get one.
  auto pools = sb.run({"pool", "list"}, proj);
  EXPECT_EQ(pools.exit_code, 2);
  expect_one_line(pools, {"kinetic up"});
}

TEST_F(ErrorsTest, GkeContextWithoutCredentialsSaysHowToLogIn) {
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.backend", "gke"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.project", "p"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.zone", "us-central1-a"}, proj).exit_code, 0);
  auto r = sb.run({"run", "ok.py", "--context", "acme"}, proj);
  EXPECT_EQ(r.exit_code, 125);
  expect_one_line(r, {"gcloud auth application-default login"});
  expect_nothing_left();
}

}  // namespace
}  // namespace kinetic::test

namespace kinetic::test {
namespace {

TEST(HomeContextTest, AJobDirectlyInHomeIsNotShippedWithTheWholeHome) {
  Sandbox sb;
  sb.write("home/loose.py", "print(1)\n");
  auto r = sb.run({"run", "loose.py"}, sb.home());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--context-dir"), std::string::npos) << r.err;
  sb.write("home/proj/job.py", "print('in a folder')\n");
  auto ok = sb.run({"run", "job.py", "-q"}, sb.home() / "proj");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "in a folder\n");
}

}  // namespace
}  // namespace kinetic::test
