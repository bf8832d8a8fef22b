// kinetic up: provision (or reconcile) the GKE cluster, pools, registry and bucket.
// Registered with its final flags and help so scripts and completions see the real interface;
// until the gke backend lands it says so in one line and exits 1 (never a fake success).
#include "app.h"

namespace kinetic::cli {

void add_up(CLI::App& root, Factory& f, Action& action) {
  auto accelerators = std::make_shared<std::vector<std::string>>();
  CLI::App* c = root.add_subcommand(
      "up", "Provision (or reconcile) a GKE cluster for kinetic and make it the current context");
  c->add_option("-a,--accelerator", *accelerators, "Add a node pool for this accelerator");
  c->add_flag("--spot", unused_flag(), "Make the node pools Spot");
  c->add_option("--reservation", "Consume this reservation");
  c->add_option("--min-nodes", "Minimum nodes per pool (default 0)");
  c->add_option("--idle-down", "Delete the cluster after this long without jobs, e.g. 2h");
  c->footer(
      "Examples:\n  kinetic up --project acme-ml --zone us-central1-a --accelerator "
      "v5litepod-1");
  c->callback([&f, &action] {
    action = [&f]() -> int {
      (void)f;
      needs_cloud("up");
    };
  });
}

}  // namespace kinetic::cli
