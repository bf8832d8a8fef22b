// Helpers shared by the fuzz targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/fs.h"

namespace kinetic::fuzz {

// A scratch directory, made once per process under $TMPDIR (scripts/fuzz.sh gives each target
// its own, on tmpfs when it can) and removed when the fuzzer exits normally.
inline const fs::path& scratch_dir() {
  // Never destroyed, so that the exit handler still has it.
  static const fs::path* dir = [] {
    auto* d = new fs::path(make_temp_dir(fs::temp_directory_path(), "kinetic-fuzz-"));
    std::atexit([] { remove_all_quiet(scratch_dir()); });
    return d;
  }();
  return *dir;
}

// A broken promise of the code under test: says which, then aborts (libFuzzer keeps the input).
inline void check(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

inline std::string_view text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace kinetic::fuzz
