// Remembers which archive a context tree packed into, keyed by its tree_signature(), so a run
// over an unchanged tree skips packing altogether when the backend already holds the archive
// (content-addressed: the same tree gives the same bytes). Entries live under STATE/pack-cache/.
#pragma once

#include <optional>
#include <string>

#include "core/fs.h"
#include "pack/archive.h"

namespace kinetic {

// Trees changed this recently are not remembered: a file rewritten again within the timestamps'
// resolution could look unchanged (git's "racy" entries).
inline constexpr double kPackCacheSettleSeconds = 2.0;

std::optional<PackResult> pack_cache_lookup(const fs::path& state_dir,
                                            const std::string& signature);
// Records RESULT for SIGNATURE unless NEWEST (the tree's latest change) is within
// kPackCacheSettleSeconds of NOW. Failures to write are ignored: it is only a cache.
void pack_cache_remember(const fs::path& state_dir, const std::string& signature,
                         const PackResult& result, double newest, double now);

}  // namespace kinetic
