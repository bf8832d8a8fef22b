// Deterministic context archives (tar + zstd or gzip, via libarchive) and their safe extraction.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "pack/ignore.h"

namespace kinetic {

struct PackResult {
  std::string sha256;  // of the archive bytes: the context's content address
  uint64_t archive_bytes = 0;
  uint64_t files = 0;        // regular files, symlinks and directories written
  uint64_t input_bytes = 0;  // sum of regular file sizes
  // The largest regular files (relative path, size), largest first, at most 5.
  std::vector<std::pair<std::string, uint64_t>> largest;
};

// Packs ROOT into OUT_FILE as a tar.zst with entries sorted by path, owner 0:0 with empty names,
// mtime 0, modes kept, symlinks stored as links. The file is not fsynced: whoever keeps it does.
// Files are streamed in blocks, so memory stays flat whatever the context size. Two runs over the
// same tree give the same bytes. PROGRESS, when given, is called after each entry with the entries
// and input bytes so far.
using PackProgress = std::function<void(uint64_t entries, uint64_t bytes)>;
PackResult pack_directory(const fs::path& root, const IgnoreRules& rules, const fs::path& out_file,
                          const PackProgress& progress = nullptr);

// How the tar stream is compressed. zstd (the default, used by the local backend) is fast and
// small; gzip is what Python's standard library reads before 3.14 (`tarfile`), so GKE contexts,
// unpacked in the pod by the bootstrap (job/bootstrap.h), use it. Both are deterministic: the
// gzip header carries no timestamp and no file name, and the level is fixed.
enum class Compression { zstd, gzip };
// ".tar.zst" or ".tar.gz".
std::string_view archive_extension(Compression compression);
// As above, with the given compression (same entries, same tar bytes).
PackResult pack_directory(const fs::path& root, const IgnoreRules& rules, const fs::path& out_file,
                          Compression compression, const PackProgress& progress = nullptr);

// A fingerprint of what pack_directory would read from ROOT: every entry the rules keep, with its
// type, mode, size, modification and change times (ns), inode and link target. Equal
// fingerprints mean the archive would come out the same, so a run can skip packing (see
// pack/pack_cache.h); stat calls only, no file is read. *NEWEST gets the latest mtime/ctime seen
// (Unix seconds), so callers can refuse to trust entries changed too recently to be told apart.
std::string tree_signature(const fs::path& root, const IgnoreRules& rules, Compression compression,
                           double* newest);

// Extracts ARCHIVE into DEST (created if missing). Refuses, with Error(Errc::packaging), entries
// with absolute paths, '..' components, hard links, device files, or symlinks that point outside
// DEST; nothing outside DEST is ever written.
void unpack_archive(const fs::path& archive, const fs::path& dest);

// What unpack_archive does with a symlink to an absolute path or one leading outside DEST:
// refuse the archive (contexts), or leave the link out and carry on (a job's outputs, which the
// job wrote: one bad link must not lose the rest).
enum class UnsafeLinks { refuse, skip };
// As above; with UnsafeLinks::skip such links are not written and SKIPPED (when given) gets
// "NAME -> TARGET" for each, in archive order. Everything else is refused as above.
void unpack_archive(const fs::path& archive, const fs::path& dest, UnsafeLinks unsafe_links,
                    std::vector<std::string>* skipped);

}  // namespace kinetic
