// Micro-benchmarks of the per-file and per-line hot paths of packaging.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "pack/ignore.h"
#include "pack/requirements.h"

namespace {

std::vector<std::string> sample_paths() {
  std::vector<std::string> paths;
  for (int d = 0; d < 20; ++d) {
    std::string dir = "src/pkg" + std::to_string(d) + "/sub";
    for (int f = 0; f < 50; ++f) {
      paths.push_back(dir + "/module_" + std::to_string(f) + (f % 5 ? ".py" : ".ckpt"));
    }
  }
  return paths;
}

kinetic::IgnoreRules sample_rules() {
  auto rules = kinetic::IgnoreRules::defaults();
  for (const char* line : {"*.ckpt", "!best.ckpt", "/data/raw/", "logs/**/*.txt", "build/",
                           "*.py[cod]", "**/wandb", "outputs/*/tmp"})
    rules.add_line(line);
  return rules;
}

void BM_IgnoreRulesIgnoredEntry(benchmark::State& state) {
  const auto rules = sample_rules();
  const auto paths = sample_paths();
  for (auto _ : state) {
    size_t n = 0;
    for (const auto& p : paths) n += rules.ignored_entry(p, false);
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(paths.size()));
}
BENCHMARK(BM_IgnoreRulesIgnoredEntry);

void BM_IgnoreRulesIgnored(benchmark::State& state) {
  const auto rules = sample_rules();
  const auto paths = sample_paths();
  for (auto _ : state) {
    size_t n = 0;
    for (const auto& p : paths) n += rules.ignored(p, false);
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(paths.size()));
}
BENCHMARK(BM_IgnoreRulesIgnored);

void BM_NormalizeRequirements(benchmark::State& state) {
  std::string text = "# generated\n--extra-index-url https://download.pytorch.org/whl/cpu\n";
  for (int i = 0; i < 100; ++i) {
    text += "Package_" + std::to_string(i) + "[Extra] >= 1." + std::to_string(i) +
            " ; python_version < '3.12'   # comment\n";
  }
  for (auto _ : state) benchmark::DoNotOptimize(kinetic::normalize_requirements(text));
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(BM_NormalizeRequirements);

}  // namespace
