// gs:// object names (backend/local/gcs_cache.h): whatever a bucket's writer names an object,
// gcs_copy_path either refuses it (Errc::usage) or gives a relative path that stays inside the
// copy once joined and normalized (issue #28 point 2).
#include <cstddef>
#include <cstdint>

#include "backend/local/gcs_cache.h"
#include "core/error.h"
#include "support.h"

using namespace kinetic;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name(fuzz::text(data, size));
  for (const std::string prefix : {"pre/", ""}) {
    GcsCopyPath p;
    try {
      p = gcs_copy_path(prefix + name, prefix, "bucket");
    } catch (const Error& e) {
      fuzz::check(e.code() == Errc::usage, "gcs_copy_path throws only Errc::usage");
      continue;
    }
    fuzz::check(p.rel.is_relative(), "the path in the copy is relative");
    const fs::path copy = "/state/cache/data/copy";
    const fs::path inside = (copy / p.rel).lexically_normal().lexically_relative(copy);
    fuzz::check(!inside.empty() && *inside.begin() != "..", "the path stays inside the copy");
  }
  return 0;
}
