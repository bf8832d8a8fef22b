// Ignore rules (pack/ignore.h): arbitrary bytes as a .kineticignore, after the defaults, then
// every line of it and a few usual paths asked as both a file and a directory.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "pack/ignore.h"
#include "support.h"

using namespace kinetic;

namespace {

constexpr std::string_view kPaths[] = {
    "train.py",
    "src/model/layers.py",
    ".git/HEAD",
    "data/train/0001.csv",
    "a/b/c/d/e.txt",
    "kinetic-out/job-1",
    "build/",
    "notes/.DS_Store",
    "x",
    "venv/lib/site.py",
    "logs/run.log",
    "checkpoints/step-100/model.bin",
    "[x]",
    "a b/c\\d",
    "**/x/**",
    "./a/./b/",
};

// At most this many lines of the input are also asked as paths: rules times paths stays small.
constexpr size_t kMaxInputPaths = 64;

void ask(const IgnoreRules& rules, std::string_view path) {
  for (bool dir : {false, true}) {
    bool ignored = rules.ignored(path, dir);
    // ignored_entry is ignored without the ancestors: it can only say less.
    if (rules.ignored_entry(path, dir)) fuzz::check(ignored, "ignored_entry implies ignored");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path file = fuzz::scratch_dir() / ".kineticignore";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  IgnoreRules rules = IgnoreRules::defaults();
  rules.add_file(file);

  for (std::string_view p : kPaths) ask(rules, p);
  std::string_view rest = fuzz::text(data, size);
  for (size_t n = 0; n < kMaxInputPaths && !rest.empty(); ++n) {
    size_t nl = rest.find('\n');
    ask(rules, rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return 0;
}
