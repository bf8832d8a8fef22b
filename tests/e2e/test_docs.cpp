// The shell completions and the man page: the checked-in copies (completions/, man/) are what the
// binary prints now, the bash completion really completes, the man page renders without
// warnings, the zsh and fish scripts parse, and a bad shell name is a usage error.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include <gtest/gtest.h>

#include "cli_harness.h"

namespace kinetic::test {
namespace {

const fs::path kSource = KINETIC_SOURCE_DIR;
const char* kRegenerate = "run scripts/gen-docs.sh build/kinetic";

struct Proc {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The full path of PROGRAM on $PATH, or "" when it is not there.
std::string find_program(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    fs::path p = fs::path(dir) / program;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// Runs ARGV (ARGV[0] a full path) in CWD with ENV; stdout and stderr go through files in SCRATCH.
Proc run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const fs::path& cwd, const fs::path& scratch) {
  const fs::path out = scratch / "proc.out";
  const fs::path err = scratch / "proc.err";
  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open("/dev/null", O_RDONLY);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || o < 0 || e < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(97);
    ::dup2(in, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> args, envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& v : env) envp.push_back(const_cast<char*>(v.c_str()));
    envp.push_back(nullptr);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(98);
  }
  Proc p;
  p.exit_code = Sandbox::wait(pid);
  p.out = slurp(out);
  p.err = slurp(err);
  return p;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Where ACTUAL first differs from EXPECTED, for a failure message that fits on a screen.
std::string first_difference(const std::string& expected, const std::string& actual) {
  auto e = lines(expected), a = lines(actual);
  for (size_t i = 0; i < std::max(e.size(), a.size()); ++i) {
    std::string el = i < e.size() ? e[i] : "<end of file>";
    std::string al = i < a.size() ? a[i] : "<end of output>";
    if (el != al)
      return "first difference at line " + std::to_string(i + 1) + ":\n  checked in: " + el +
             "\n  binary:     " + al;
  }
  return "they differ only in the final newline";
}

class DocsTest : public ::testing::Test {
 protected:
  Sandbox sb;

  // What `kinetic ARGS` prints, which must succeed.
  std::string generated(const std::vector<std::string>& args) {
    auto r = sb.run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.out;
  }

  void expect_up_to_date(const std::string& file, const std::vector<std::string>& args) {
    const fs::path path = kSource / file;
    ASSERT_TRUE(fs::exists(path)) << file << " is missing; " << kRegenerate;
    const std::string checked_in = slurp(path);
    const std::string now = generated(args);
    EXPECT_TRUE(checked_in == now)
        << file << " is out of date with the command tree; " << kRegenerate << "\n"
        << first_difference(checked_in, now);
  }
};

TEST_F(DocsTest, BashCompletionIsUpToDate) {
  expect_up_to_date("completions/kinetic.bash", {"completion", "bash"});
}

TEST_F(DocsTest, ZshCompletionIsUpToDate) {
  expect_up_to_date("completions/kinetic.zsh", {"completion", "zsh"});
}

TEST_F(DocsTest, FishCompletionIsUpToDate) {
  expect_up_to_date("completions/kinetic.fish", {"completion", "fish"});
}

TEST_F(DocsTest, ManPageIsUpToDate) {
  expect_up_to_date("man/kinetic.1", {"man"});
}

TEST_F(DocsTest, GeneratedWithoutConfigAndDeterministic) {
  // A broken config file would fail any command that read it.
  sb.write("config/kinetic/config.yaml", "contexts: [unclosed\n");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}, {"man"}}) {
    std::string first = generated(args);
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(first, generated(args)) << args.back() << " is not deterministic";
    EXPECT_EQ(first.find(sb.root().string()), std::string::npos) << "a path leaked into it";
  }
}

TEST_F(DocsTest, ManPageHasItsSections) {
  const std::string man = generated({"man"});
  EXPECT_NE(man.find(std::string(".TH KINETIC 1 \"\" \"kinetic ") + KINETIC_VERSION + "\""),
            std::string::npos)
      << "the title line carries the version and no date";
  for (const char* section :
       {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH \"GLOBAL FLAGS\"",
        ".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES", ".SH \"SEE ALSO\""})
    EXPECT_NE(man.find(section), std::string::npos) << section;
  for (const char* command :
       {"up", "down", "run", "logs", "status", "cancel", "cleanup", "pool add", "accelerators",
        "config use\\-context", "auth status", "completion", "version"})
    EXPECT_NE(man.find(std::string(".SS \"kinetic ") + command + "\""), std::string::npos)
        << command;
  EXPECT_EQ(man.find(".SS \"kinetic man\""), std::string::npos) << "man is a hidden command";
  for (const char* needle :
       {"124", "125", "126", "127", "130", "KINETIC_CONTEXT", "KINETIC_HOME", "XDG_STATE_HOME",
        "STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_AUTH_ACCESS_TOKEN",
        "config.yaml", "kubectl", "gcloud", "\\-\\-accelerator"})
    EXPECT_NE(man.find(needle), std::string::npos) << needle;
  // No text line starts with a control character by accident.
  for (const auto& line : lines(man)) {
    if (line.empty() || line[0] != '.') continue;
    EXPECT_TRUE(line.size() > 1 &&
                (std::isalpha(static_cast<unsigned char>(line[1])) || line.rfind(".\\\"", 0) == 0))
        << line;
  }
}

TEST_F(DocsTest, ManPageRendersWithoutWarnings) {
  const fs::path page = sb.write("kinetic.1", generated({"man"}));
  const auto env = sb.environment({});
  Proc r;
  if (std::string groff = find_program("groff"); !groff.empty()) {
    r = run_program({groff, "-man", "-Tutf8", "-P-cbou", "-ww", page.string()}, env, sb.root(),
                    sb.root());
  } else if (std::string man = find_program("man"); !man.empty()) {
    r = run_program({man, "--warnings", "-l", page.string()}, sb.environment({{"MANPAGER", "cat"}}),
                    sb.root(), sb.root());
  } else {
    GTEST_SKIP() << "neither groff nor man is installed";
  }
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "warnings rendering man/kinetic.1";
  EXPECT_NE(r.out.find("EXIT STATUS"), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("kinetic run"), std::string::npos);
}

TEST_F(DocsTest, ManIsHiddenFromHelp) {
  auto r = sb.run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("completion"), std::string::npos);
  for (const auto& line : lines(r.out)) EXPECT_NE(line.rfind("  man ", 0), 0u) << line;
}

// ---------------------------------------------------------------------------------------------

class CompletionTest : public ::testing::Test {
 protected:
  Sandbox sb;
  fs::path proj = sb.project("proj");
  fs::path bin = sb.project("bin");  // holds `kinetic`, for the completions that call it

  void SetUp() override {
    fs::create_symlink(KINETIC_BINARY, bin / "kinetic");
    sb.write("proj/train.py", "print('hi')\n");
    sb.write("proj/ok.sh", "echo ok\n", 0755);
  }

  std::vector<std::string> env() const {
    const char* path = std::getenv("PATH");
    return sb.environment({{"PATH", bin.string() + ":" + (path ? path : "/usr/bin:/bin")}});
  }

  std::string script(const std::string& shell) {
    auto r = sb.run({"completion", shell});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return sb.write("kinetic." + shell, r.out).string();
  }

  // COMPREPLY (sorted) after the bash completion function ran on WORDS, the last one being
  // completed, as COMP_WORDS has them (bash splits "--flag=value" into "--flag", "=", "value").
  // With BASH_COMPLETION, the bash-completion package is loaded first.
  std::vector<std::string> bash_complete(const std::vector<std::string>& words,
                                         const std::string& bash_completion = "") {
    static const char* driver =
        "[[ -n $BASH_COMPLETION ]] && { source \"$BASH_COMPLETION\" || exit 3; }\n"
        "source \"$1\" || exit 4\n"
        "shift\n"
        "COMP_WORDS=(\"$@\")\n"
        "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
        "COMP_LINE='' prev=''\n"
        "for word in \"${COMP_WORDS[@]}\"; do\n"
        "  if [[ -z $COMP_LINE || $word == = || $prev == = ]]; then COMP_LINE+=$word\n"
        "  else COMP_LINE+=\" $word\"; fi\n"
        "  prev=$word\n"
        "done\n"
        "COMP_POINT=${#COMP_LINE}\n"
        "_kinetic\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
    const std::string bash = find_program("bash");
    if (bash.empty()) {
      ADD_FAILURE() << "bash is not installed";
      return {};
    }
    std::vector<std::string> argv = {bash,   "--norc", "--noprofile", "-c",
                                     driver, "bash",   bash_script_};
    argv.insert(argv.end(), words.begin(), words.end());
    auto e = env();
    e.push_back("BASH_COMPLETION=" + bash_completion);
    Proc r = run_program(argv, e, proj, sb.root());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    std::vector<std::string> reply;
    for (auto& l : lines(r.out))
      if (!l.empty()) reply.push_back(l);
    return sorted(reply);
  }

  void check_bash(const std::string& bash_completion) {
    using V = std::vector<std::string>;
    bash_script_ = script("bash");
    auto complete = [&](const V& words) { return bash_complete(words, bash_completion); };
    EXPECT_EQ(complete({"kinetic", "ru"}), V{"run"});
    EXPECT_EQ(complete({"kinetic", "run", "--acc"}), (V{"--accelerator", "--access-token-file"}));
    EXPECT_EQ(complete({"kinetic", "pool", ""}), (V{"add", "list", "remove"}));
    EXPECT_EQ(complete({"kinetic", "config", "use"}), V{"use-context"});
    EXPECT_EQ(complete({"kinetic", "auth", "s"}), V{"status"});
    EXPECT_EQ(complete({"kinetic", "completion", ""}), (V{"bash", "fish", "zsh"}));
    EXPECT_EQ(complete({"kinetic", "status", "-o", ""}),
              (V{"json", "name", "table", "wide", "yaml"}));
    // Global flags are inherited, and a flag's value is not taken for a command.
    EXPECT_EQ(complete({"kinetic", "--context", "local", "st"}), V{"status"});
    EXPECT_EQ(complete({"kinetic", "-v", "3", "logs", "--fol"}), V{"--follow"});
    EXPECT_TRUE(contains(complete({"kinetic", "logs", "--"}), "--context"));
    EXPECT_TRUE(contains(complete({"kinetic", "logs", "-"}), "-o"));
    // Hidden commands and the help flag are not offered.
    EXPECT_EQ(complete({"kinetic", "ma"}), V{});
    // Values from kinetic itself.
    auto accelerators = complete({"kinetic", "run", "-a", "v5litepod-1"});
    EXPECT_TRUE(contains(accelerators, "v5litepod-1")) << ::testing::PrintToString(accelerators);
    EXPECT_TRUE(contains(accelerators, "v5litepod-16"));
    EXPECT_EQ(complete({"kinetic", "--context", ""}), V{"local"});
    EXPECT_EQ(complete({"kinetic", "--context", "=", "lo"}), V{"local"});
    EXPECT_EQ(complete({"kinetic", "config", "use-context", ""}), V{"local"});
    // Files for run's FILE and for the job's arguments after --.
    EXPECT_EQ(complete({"kinetic", "run", "tr"}), V{"train.py"});
    EXPECT_EQ(complete({"kinetic", "run", "-a", "l4", "tr"}), V{"train.py"});
    EXPECT_EQ(complete({"kinetic", "run", "train.py", "--", "o"}), V{"ok.sh"});
    // Job ids for logs, status and cancel.
    auto run = sb.run({"run", "ok.sh"}, proj);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto ids = sb.run({"status", "-o", "name"});
    ASSERT_EQ(ids.exit_code, 0) << ids.err;
    const V jobs = sorted(lines(ids.out));
    ASSERT_EQ(jobs.size(), 1u) << ids.out;
    EXPECT_EQ(complete({"kinetic", "logs", ""}), jobs);
    EXPECT_EQ(complete({"kinetic", "status", "job-"}), jobs);
    EXPECT_EQ(complete({"kinetic", "--context", "local", "cancel", jobs[0], ""}), jobs);
    EXPECT_EQ(complete({"kinetic", "--context", "nope", "logs", ""}), V{});
  }

  std::string bash_script_;
};

TEST_F(CompletionTest, BashCompletesWithoutBashCompletion) {
  check_bash("");
}

TEST_F(CompletionTest, BashCompletesWithBashCompletion) {
  const char* candidates[] = {"/usr/share/bash-completion/bash_completion", "/etc/bash_completion"};
  for (const char* c : candidates) {
    if (fs::exists(c)) {
      check_bash(c);
      return;
    }
  }
  GTEST_SKIP() << "the bash-completion package is not installed";
}

TEST_F(CompletionTest, ZshScriptParses) {
  const std::string zsh = find_program("zsh");
  if (zsh.empty()) GTEST_SKIP() << "zsh is not installed";
  Proc r = run_program({zsh, "-n", script("zsh")}, env(), sb.root(), sb.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(CompletionTest, FishScriptParsesAndCompletes) {
  const std::string fish = find_program("fish");
  if (fish.empty()) GTEST_SKIP() << "fish is not installed";
  const std::string file = script("fish");
  Proc r = run_program({fish, "-n", file}, env(), sb.root(), sb.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // complete -C: what fish would offer for a command line, one "candidate<TAB>description" a line.
  auto complete = [&](const std::string& line) {
    Proc c =
        run_program({fish, "--no-config", "-c", "source $argv[1]; complete -C$argv[2]", file, line},
                    env(), proj, sb.root());
    EXPECT_EQ(c.exit_code, 0) << c.err;
    EXPECT_EQ(c.err, "");
    std::vector<std::string> names;
    for (const auto& l : lines(c.out)) names.push_back(l.substr(0, l.find('\t')));
    return sorted(names);
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(complete("kinetic ru"), V{"run"});
  EXPECT_EQ(complete("kinetic pool "), (V{"add", "list", "remove"}));
  EXPECT_EQ(complete("kinetic --context local st"), V{"status"});
  EXPECT_EQ(complete("kinetic auth status "), V{}) << "auth status takes no job id";
  EXPECT_EQ(complete("kinetic --context "), V{"local"});
  EXPECT_EQ(complete("kinetic completion "), (V{"bash", "fish", "zsh"}));
  EXPECT_TRUE(contains(complete("kinetic run -a v5litepod-1"), "v5litepod-16"));
  EXPECT_TRUE(contains(complete("kinetic run --acc"), "--accelerator"));
  EXPECT_EQ(complete("kinetic run tr"), V{"train.py"});
}

TEST_F(CompletionTest, UnknownShellIsAUsageError) {
  auto r = sb.run({"completion", "bsh"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  for (const char* needle : {"'bsh'", "did you mean bash?", "bash", "zsh", "fish"})
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;

  auto none = sb.run({"completion"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(line_count(none.err), 1u) << none.err;
}

}  // namespace
}  // namespace kinetic::test
