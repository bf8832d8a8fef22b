#include "core/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path) {
  throw Error(Errc::internal, what + " " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

void make_dirs(const fs::path& dir, unsigned mode) {
  if (dir.empty()) return;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  make_dirs(dir.parent_path(), mode);
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) fail("cannot create directory", dir);
}

void atomic_write(const fs::path& path, std::string_view data, unsigned mode,
                  Durability durability) {
  make_dirs(path.parent_path());
  std::string tmpl = (path.parent_path() / ("." + path.filename().string() + ".XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0) fail("cannot write", path);
  fs::path tmp(buf.data());
  auto cleanup = [&] {
    ::close(fd);
    ::unlink(tmp.c_str());
  };
  if (::fchmod(fd, mode) != 0) {
    cleanup();
    fail("cannot set mode of", path);
  }
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      cleanup();
      fail("cannot write", path);
    }
    off += static_cast<size_t>(n);
  }
  if (durability == Durability::synced && ::fsync(fd) != 0) {
    cleanup();
    fail("cannot sync", path);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    fail("cannot write", path);
  }
}

std::optional<std::string> read_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    fail("cannot read", path);
  }
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

void remove_all_quiet(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

fs::path make_temp_dir(const fs::path& parent, std::string_view prefix) {
  make_dirs(parent);
  std::string tmpl = (parent / (std::string(prefix) + "XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) fail("cannot create directory in", parent);
  return fs::path(buf.data());
}

std::optional<std::string> find_executable(const std::string& prog, std::string_view path_var) {
  if (prog.find('/') != std::string::npos) return prog;
  for (const auto& dir : split(path_var, ':')) {
    fs::path p = fs::path(dir.empty() ? "." : dir) / prog;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

}  // namespace kinetic
