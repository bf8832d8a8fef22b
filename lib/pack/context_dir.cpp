#include "pack/context_dir.h"

namespace kinetic {

namespace {

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

fs::path normal(const fs::path& p) {
  fs::path n = fs::absolute(p).lexically_normal();
  if (!n.has_filename() && n != n.root_path()) n = n.parent_path();  // drop a trailing '/'
  return n;
}

bool same_dir(const fs::path& a, const fs::path& b) {
  if (a == b) return true;
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

}  // namespace

fs::path find_context_dir(const fs::path& job_file, const fs::path& home) {
  const fs::path start = normal(job_file).parent_path();
  const fs::path home_dir = home.empty() ? fs::path() : normal(home);
  for (fs::path dir = start;; dir = dir.parent_path()) {
    if (dir == dir.root_path() || dir.empty()) break;         // never '/'
    if (!home_dir.empty() && same_dir(dir, home_dir)) break;  // never HOME
    for (const char* marker : {".git", "requirements.txt", "pyproject.toml"}) {
      if (present(dir / marker)) return dir;
    }
    if (dir == dir.parent_path()) break;
  }
  return start;
}

}  // namespace kinetic
