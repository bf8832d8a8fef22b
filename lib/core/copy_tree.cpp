#include "core/copy_tree.h"

#include "core/error.h"

namespace kinetic {

void copy_tree(const fs::path& from, const fs::path& to, const std::string& what) {
  make_dirs(to, 0755);
  std::error_code ec;
  fs::copy(from, to,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing |
               fs::copy_options::copy_symlinks,
           ec);
  if (ec)
    throw Error(Errc::internal, "cannot copy " + what + " from " + from.string() + " to " +
                                    to.string() + ": " + ec.message());
}

}  // namespace kinetic
