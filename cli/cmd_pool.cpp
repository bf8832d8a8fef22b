// kinetic pool add|remove|list: accelerator node pools of the current cluster.
// Registered with its final flags and help so scripts and completions see the real interface;
// until the gke backend lands it says so in one line and exits 1 (never a fake success).
#include "app.h"

namespace kinetic::cli {

void add_pool(CLI::App& root, Factory& f, Action& action) {
  CLI::App* c = root.add_subcommand("pool", "Manage the accelerator node pools of the cluster");
  c->require_subcommand(0, 1);
  c->footer(
      "Examples:\n"
      "  kinetic pool add --accelerator v5litepod-4 --spot\n"
      "  kinetic pool list\n"
      "  kinetic pool remove tpu-v5litepod-4-1a2b");
  CLI::App* add = c->add_subcommand("add", "Add a node pool for an accelerator");
  add->add_option("-a,--accelerator", "Accelerator, e.g. v5litepod-4")->required();
  add->add_flag("--spot", unused_flag(), "Spot nodes");
  add->add_option("--reservation", "Consume this reservation");
  add->add_option("--min-nodes", "Minimum nodes (default 0)");
  add->callback([&f, &action] {
    action = [&f]() -> int {
      (void)f;
      needs_cloud("pool add");
    };
  });
  CLI::App* remove = c->add_subcommand("remove", "Delete a node pool");
  remove->add_option("name", "Pool name (see `kinetic pool list`)")->required();
  remove->callback([&f, &action] {
    action = [&f]() -> int {
      (void)f;
      needs_cloud("pool remove");
    };
  });
  CLI::App* list =
      c->add_subcommand("list", "List the node pools with their accelerators and sizes");
  list->callback([&f, &action] {
    action = [&f]() -> int {
      (void)f;
      needs_cloud("pool list");
    };
  });
}

}  // namespace kinetic::cli
