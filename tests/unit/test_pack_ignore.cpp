#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/fs.h"
#include "pack/ignore.h"

namespace kinetic {
namespace {

struct IgnoreCase {
  std::vector<std::string> patterns;
  std::string path;
  bool is_dir;
  bool ignored;
};

std::ostream& operator<<(std::ostream& os, const IgnoreCase& c) {
  os << "patterns [";
  for (const auto& p : c.patterns) os << "'" << p << "' ";
  return os << "] path '" << c.path << "'" << (c.is_dir ? " (dir)" : "") << " -> "
            << (c.ignored ? "ignored" : "kept");
}

class IgnoreRulesTable : public ::testing::TestWithParam<IgnoreCase> {};

TEST_P(IgnoreRulesTable, Matches) {
  const auto& c = GetParam();
  IgnoreRules rules;
  for (const auto& p : c.patterns) rules.add_line(p);
  EXPECT_EQ(rules.ignored(c.path, c.is_dir), c.ignored) << c;
}

const IgnoreCase kCases[] = {
    // Basename patterns match at any depth.
    {{"*.log"}, "app.log", false, true},
    {{"*.log"}, "a/b/app.log", false, true},
    {{"*.log"}, "app.log.txt", false, false},
    {{"*.log"}, "logs", true, false},
    {{"build"}, "build", true, true},
    {{"build"}, "src/build", true, true},
    {{"build"}, "src/build", false, true},
    {{"build"}, "builder", false, false},
    // Comments, blank lines, trailing spaces, escapes.
    {{"# *.py"}, "a.py", false, false},
    {{""}, "a.py", false, false},
    {{"   "}, "a.py", false, false},
    {{"*.py   "}, "a.py", false, true},
    {{"\\#notes"}, "#notes", false, true},
    {{"\\!bang"}, "!bang", false, true},
    {{"sp\\ "}, "sp ", false, true},
    {{"sp\\ "}, "sp", false, false},
    {{"*.py\r"}, "a.py", false, true},
    // Trailing '/' = directories only.
    {{"out/"}, "out", true, true},
    {{"out/"}, "out", false, false},
    {{"out/"}, "x/out", true, true},
    {{"out/"}, "out/file.txt", false, true},  // inside an excluded directory
    // Leading '/' anchors at the root.
    {{"/todo.txt"}, "todo.txt", false, true},
    {{"/todo.txt"}, "sub/todo.txt", false, false},
    {{"/data/"}, "data", true, true},
    {{"/data/"}, "sub/data", true, false},
    // A '/' in the middle anchors too.
    {{"doc/frotz"}, "doc/frotz", false, true},
    {{"doc/frotz"}, "a/doc/frotz", false, false},
    {{"doc/*.txt"}, "doc/notes.txt", false, true},
    {{"doc/*.txt"}, "doc/sub/notes.txt", false, false},  // '*' does not cross '/'
    // '?' and character classes.
    {{"file?.txt"}, "file1.txt", false, true},
    {{"file?.txt"}, "file10.txt", false, false},
    {{"a?b"}, "a/b", false, false},
    {{"[a-c]*.csv"}, "beta.csv", false, true},
    {{"[a-c]*.csv"}, "delta.csv", false, false},
    {{"[!a]*.csv"}, "beta.csv", false, true},
    {{"[!a]*.csv"}, "alpha.csv", false, false},
    {{"[^a]x"}, "bx", false, true},
    {{"[]]x"}, "]x", false, true},
    {{"x[[:digit:]]"}, "x7", false, true},
    {{"x[[:digit:]]"}, "xa", false, false},
    {{"unclosed[ab"}, "unclosed[ab", false, true},
    // '**'.
    {{"**/cache"}, "cache", true, true},
    {{"**/cache"}, "a/b/cache", true, true},
    {{"**/logs/debug.log"}, "logs/debug.log", false, true},
    {{"**/logs/debug.log"}, "x/y/logs/debug.log", false, true},
    {{"**/logs/debug.log"}, "x/logs/other.log", false, false},
    {{"data/**"}, "data/a", false, true},
    {{"data/**"}, "data/a/b/c.bin", false, true},
    {{"data/**"}, "data", true, false},
    {{"a/**/b"}, "a/b", false, true},
    {{"a/**/b"}, "a/x/b", false, true},
    {{"a/**/b"}, "a/x/y/z/b", false, true},
    {{"a/**/b"}, "a/x/c", false, false},
    {{"a/**/b"}, "z/a/x/b", false, false},
    {{"foo**bar"}, "fooxbar", false, true},     // not slash-delimited: plain '*'
    {{"foo**bar"}, "foo/x/bar", false, false},  // ... so it does not cross '/'
    // Negation: later patterns win.
    {{"*.log", "!keep.log"}, "keep.log", false, false},
    {{"*.log", "!keep.log"}, "other.log", false, true},
    {{"!keep.log", "*.log"}, "keep.log", false, true},
    {{"data/**", "!data/keep.csv"}, "data/keep.csv", false, false},
    // A file cannot be re-included when its parent directory is excluded.
    {{"data/", "!data/keep.csv"}, "data/keep.csv", false, true},
    {{"data", "!data/keep.csv"}, "data/keep.csv", false, true},
    // Lone '/' or '!' is nothing.
    {{"/"}, "a", false, false},
    {{"!"}, "a", false, false},
};

INSTANTIATE_TEST_SUITE_P(Gitignore, IgnoreRulesTable, ::testing::ValuesIn(kCases));

TEST(IgnoreRulesTest, DefaultsExcludeToolDirectoriesAtAnyDepth) {
  auto rules = IgnoreRules::defaults();
  for (const char* dir :
       {".git", "__pycache__", ".venv", "venv", "node_modules", ".tox", ".mypy_cache",
        ".ruff_cache", ".pytest_cache", ".ipynb_checkpoints", "kinetic-out"}) {
    EXPECT_TRUE(rules.ignored(dir, true)) << dir;
    EXPECT_TRUE(rules.ignored(std::string("pkg/sub/") + dir, true)) << dir;
    EXPECT_TRUE(rules.ignored(std::string(dir) + "/inner/file.py", false)) << dir;
  }
  EXPECT_TRUE(rules.ignored(".DS_Store", false));
  EXPECT_TRUE(rules.ignored("a/.DS_Store", false));
  EXPECT_TRUE(rules.ignored(".git", false));          // a worktree's or submodule's .git file
  EXPECT_FALSE(rules.ignored("kinetic-out", false));  // directories only
  EXPECT_FALSE(rules.ignored("train.py", false));
  EXPECT_FALSE(rules.ignored("src/model.py", false));
  EXPECT_FALSE(rules.ignored(".gitignore", false));
  EXPECT_FALSE(rules.ignored("git", true));
  EXPECT_FALSE(rules.ignored("myvenv", true));
}

TEST(IgnoreRulesTest, UserPatternsCanReincludeADefault) {
  auto rules = IgnoreRules::defaults();
  rules.add_line("!venv");
  EXPECT_FALSE(rules.ignored("venv", true));
  EXPECT_TRUE(rules.ignored(".venv", true));
}

TEST(IgnoreRulesTest, IgnoredEntryAssumesParentsAreKept) {
  IgnoreRules rules;
  rules.add_line("data/");
  rules.add_line("!data/keep.csv");
  // A walk never asks about data/keep.csv (it does not descend into data/); asked alone, the
  // path's own last match decides.
  EXPECT_FALSE(rules.ignored_entry("data/keep.csv", false));
  EXPECT_TRUE(rules.ignored("data/keep.csv", false));
  EXPECT_TRUE(rules.ignored_entry("data", true));
}

TEST(IgnoreRulesTest, PathsAreCleanedOfDotSlashAndTrailingSlash) {
  IgnoreRules rules;
  rules.add_line("/build/");
  EXPECT_TRUE(rules.ignored("./build/", true));
  EXPECT_TRUE(rules.ignored("build/x.o", false));
  EXPECT_FALSE(rules.ignored("", true));
}

// Found by fuzzing (tests/fuzz/fuzz_ignore.cpp): "/./a/b" was cleaned to "./a/b" by
// ignored_entry but to "a/b" by ignored, which cleans twice, so the two disagreed.
TEST(IgnoreRulesTest, LeadingSlashesAndDotSlashesAreCleanedInAnyOrder) {
  IgnoreRules rules;
  rules.add_line("a/*");
  for (const char* path : {"/./a/b", "./a/b", "/a/b", ".//./a/b"}) {
    EXPECT_TRUE(rules.ignored_entry(path, false)) << path;
    EXPECT_TRUE(rules.ignored(path, false)) << path;
  }
}

// Found with tests/fuzz/fuzz_ignore.cpp: each '*' retried every split of the name, so many stars
// against a long name took exponential time (6 stars and 40 a's: 10 s). git's wildmatch cuts
// such searches short the same way. Without the fix this test does not finish.
TEST(IgnoreRulesTest, ManyStarsAgainstALongNameAnswerAtOnce) {
  IgnoreRules rules;
  rules.add_line("*a*a*a*a*a*a*a*a*a*a*a*a*b");
  rules.add_line("**/x/**/x/**/x/**/x/**/x/**/y");
  const std::string name(100, 'a');
  EXPECT_FALSE(rules.ignored(name, false));
  EXPECT_TRUE(rules.ignored(name + "b", false));
  EXPECT_FALSE(rules.ignored("dir/" + name + "/c", false));
  std::string deep;
  for (int i = 0; i < 30; ++i) deep += "x/";
  EXPECT_FALSE(rules.ignored(deep + "z", false));
  EXPECT_TRUE(rules.ignored(deep + "y", false));
}

TEST(IgnoreRulesTest, AddFileReadsGitignoreSyntax) {
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-ignore-");
  atomic_write(dir / ".kineticignore",
               "\xEF\xBB\xBF# data and checkpoints\r\n"
               "\r\n"
               "*.ckpt\r\n"
               "!best.ckpt\n"
               "/scratch/\n"
               "logs/**/*.txt   \n");
  IgnoreRules rules;
  rules.add_file(dir / ".kineticignore");
  rules.add_file(dir / "missing-file");  // adds nothing, no error
  EXPECT_TRUE(rules.ignored("run/epoch1.ckpt", false));
  EXPECT_FALSE(rules.ignored("run/best.ckpt", false));
  EXPECT_TRUE(rules.ignored("scratch", true));
  EXPECT_FALSE(rules.ignored("src/scratch", true));
  EXPECT_TRUE(rules.ignored("logs/a/b/out.txt", false));
  EXPECT_TRUE(rules.ignored("logs/out.txt", false));
  EXPECT_FALSE(rules.ignored("logs/out.csv", false));
  EXPECT_FALSE(rules.ignored("# data and checkpoints", false));
  remove_all_quiet(dir);
}

}  // namespace
}  // namespace kinetic
