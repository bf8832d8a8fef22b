// kinetic_pack_bench ROOT OUT_FILE: packs ROOT (default ignore rules plus ROOT/.kineticignore) and
// prints the PackResult. Driver for bench/pack_bench.sh.
#include <chrono>
#include <cstdio>
#include <exception>

#include "pack/archive.h"
#include "pack/ignore.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s ROOT OUT_FILE\n", argv[0]);
    return 2;
  }
  try {
    kinetic::fs::path root = argv[1];
    auto rules = kinetic::IgnoreRules::defaults();
    rules.add_file(root / ".kineticignore");
    auto start = std::chrono::steady_clock::now();
    auto r = kinetic::pack_directory(root, rules, argv[2]);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("sha256        %s\n", r.sha256.c_str());
    std::printf("entries       %llu\n", static_cast<unsigned long long>(r.files));
    std::printf("input_bytes   %llu\n", static_cast<unsigned long long>(r.input_bytes));
    std::printf("archive_bytes %llu (%.1f%%)\n", static_cast<unsigned long long>(r.archive_bytes),
                r.input_bytes ? 100.0 * static_cast<double>(r.archive_bytes) /
                                    static_cast<double>(r.input_bytes)
                              : 0.0);
    std::printf("seconds       %.3f (%.0f MiB/s)\n", secs,
                static_cast<double>(r.input_bytes) / (1024.0 * 1024.0) / secs);
    for (const auto& [path, size] : r.largest)
      std::printf("largest       %12llu  %s\n", static_cast<unsigned long long>(size),
                  path.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kinetic_pack_bench: %s\n", e.what());
    return 1;
  }
}
