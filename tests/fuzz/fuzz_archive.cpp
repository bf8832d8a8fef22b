// Archive extraction (pack/archive.h): arbitrary bytes as a context archive (tar, tar.gz or
// tar.zst), unpacked into a fresh directory refusing unsafe links, then again skipping them.
// Nothing may appear outside the destination (it sits two levels deep in a directory whose
// listing is checked), only Error(Errc::packaging) may come out, and after a successful unpack no
// symlink under the destination resolves outside it.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "pack/archive.h"
#include "support.h"

using namespace kinetic;

namespace {

bool within(const fs::path& p, const fs::path& base) {
  auto [b, _] = std::mismatch(base.begin(), base.end(), p.begin(), p.end());
  return b == base.end();
}

// Whatever unpacking left (directories without write or search permission included), removed.
void clean(const fs::path& dir) {
  std::error_code ec;
  ::chmod(dir.c_str(), 0700);
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
  }
  fs::remove_all(dir, ec);
  fuzz::check(!fs::exists(fs::symlink_status(dir)), "the destination can be removed");
}

void unpack(const fs::path& jail, UnsafeLinks mode) {
  const fs::path archive = jail / "context.tar.zst";
  const fs::path dest = jail / "a" / "b" / "dest";
  bool unpacked = false;
  std::vector<std::string> skipped;
  try {
    unpack_archive(archive, dest, mode, &skipped);
    unpacked = true;
  } catch (const Error& e) {
    fuzz::check(e.code() == Errc::packaging, "unpack_archive throws only Errc::packaging");
  }

  // The jail holds the archive, a/, a/b/ and a/b/dest/, and nothing else: an entry or a link
  // that escaped the destination by one or two levels would show here.
  std::set<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(jail, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    found.insert(fs::relative(it->path(), jail).string());
    if (it->path() == dest) it.disable_recursion_pending();
  }
  fuzz::check(!ec, "the scratch directory can be listed");
  fuzz::check(found == std::set<std::string>{"context.tar.zst", "a", "a/b", "a/b/dest"},
              "nothing is written outside the destination");

  if (unpacked) {
    const fs::path base = fs::canonical(dest);
    for (auto it = fs::recursive_directory_iterator(dest, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (!it->is_symlink(ec)) continue;
      fs::path resolved = fs::weakly_canonical(it->path(), ec);
      fuzz::check(ec || within(resolved, base), "no symlink resolves outside the destination");
      ec.clear();
    }
  }
  clean(jail / "a");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path jail = fuzz::scratch_dir() / "jail";
  make_dirs(jail);
  {
    std::ofstream out(jail / "context.tar.zst", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  unpack(jail, UnsafeLinks::refuse);
  unpack(jail, UnsafeLinks::skip);
  return 0;
}
