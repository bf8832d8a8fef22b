// Accelerator names (job/catalog.h): resolve_accelerator on arbitrary text. Only
// Error(Errc::usage) may come out; a name that resolves names a catalog entry.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "job/catalog.h"
#include "support.h"

using namespace kinetic;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Accelerator a;
  try {
    a = resolve_accelerator(fuzz::text(data, size));
  } catch (const Error& e) {
    fuzz::check(e.code() == Errc::usage, "resolve_accelerator throws only Errc::usage");
    return 0;
  }
  bool listed = false;
  for (const auto& entry : accelerator_catalog()) listed = listed || entry.name == a.name;
  fuzz::check(listed, "a resolved accelerator is in the catalog");
  fuzz::check(a.hosts >= 1 && a.chips >= 0, "hosts and chips are counts");
  return 0;
}
