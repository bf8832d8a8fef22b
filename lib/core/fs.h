// Small filesystem helpers. Every write that others may read is atomic: temp file in the same
// directory, fsync, rename.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

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

// An open file descriptor (or -1), closed when this goes or at reset.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  // Closes the one held, then holds FD.
  void reset(int fd = -1);

 private:
  int fd_;
};

// A fresh directory under PARENT named PREFIX + random suffix (mkdtemp).
fs::path make_temp_dir(const fs::path& parent, std::string_view prefix);

// A fresh temporary directory (make_temp_dir) removed with everything in it when this goes out
// of scope, on success, error or exception alike; an empty one holds no directory.
class TempDir {
 public:
  TempDir() = default;
  TempDir(const fs::path& parent, std::string_view prefix) : path_(make_temp_dir(parent, prefix)) {}
  ~TempDir() { reset(); }
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  TempDir& operator=(TempDir&& other) noexcept {
    if (this != &other) {
      reset();
      path_ = std::exchange(other.path_, {});
    }
    return *this;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(const fs::path& name) const { return path_ / name; }
  // Removes it now (its files are no longer needed, though this object lives on).
  void reset() {
    if (!path_.empty()) remove_all_quiet(path_);
    path_.clear();
  }

 private:
  fs::path path_;
};

}  // namespace kinetic
