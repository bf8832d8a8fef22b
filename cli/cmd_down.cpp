// kinetic down --yes: delete what `up` created.
// Registered with its final flags and help so scripts and completions see the real interface;
// until the gke backend lands it says so in one line and exits 1 (never a fake success).
#include <unistd.h>

#include "app.h"
#include "core/error.h"

namespace kinetic::cli {

void add_down(CLI::App& root, Factory& f, Action& action) {
  auto yes = std::make_shared<bool>(false);
  CLI::App* c = root.add_subcommand("down", "Delete what `up` created and report it");
  c->add_flag("-y,--yes", *yes, "Do not ask for confirmation (needed when not on a terminal)");
  c->add_flag("--keep-bucket", unused_flag(), "Keep the jobs bucket and its objects");
  c->add_flag("--keep-images", unused_flag(), "Keep the image repository");
  c->footer("Examples:\n  kinetic down --yes");
  c->callback([&f, &action, yes] {
    action = [&f, yes]() -> int {
      if (!*yes && ::isatty(0) != 1)
        throw Error(Errc::refused,
                    "refusing to delete cloud resources without confirmation; pass --yes");
      (void)f;
      needs_cloud("down");
    };
  });
}

}  // namespace kinetic::cli
