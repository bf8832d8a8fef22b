// Small filesystem helpers. Every write that others may read is atomic: temp file in the same
// directory, fsync, rename.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kinetic {

namespace fs = std::filesystem;

enum class Durability { synced, unsynced };

// Writes DATA to PATH atomically with MODE (0600 for anything that may hold a secret).
// Creates the parent directories (0700) when missing. `synced` fsyncs before the rename so the
// content survives a power cut; `unsynced` keeps only the atomicity, for state that is rewritten
// often and is harmless to lose (a job's status while it runs).
void atomic_write(const fs::path& path, std::string_view data, unsigned mode = 0644,
                  Durability durability = Durability::synced);

// The whole file, or nullopt when it does not exist. Other failures throw.
std::optional<std::string> read_file(const fs::path& path);

// Creates DIR and its parents with MODE when missing.
void make_dirs(const fs::path& dir, unsigned mode = 0700);

// Removes PATH recursively; missing is fine.
void remove_all_quiet(const fs::path& path);

// Where PROG runs from, searched as execvp does in PATH_VAR (':'-separated; an empty entry is
// the current directory); PROG holding a '/' is returned as it is. nullopt when not found.
std::optional<std::string> find_executable(const std::string& prog, std::string_view path_var);

// A fresh directory under PARENT named PREFIX + random suffix (mkdtemp).
fs::path make_temp_dir(const fs::path& parent, std::string_view prefix);

}  // namespace kinetic
