// kinetic down --yes: delete what `up` created (cluster with its pools, repository, bucket) and
// say what went and what stayed. A second `down` finds nothing and succeeds.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "app.h"
#include "backend/cluster_cost.h"
#include "core/error.h"
#include "job/pricing.h"

namespace kinetic::cli {

namespace {

struct DownFlags : CommandOptions {
  bool yes = false;
  bool keep_bucket = false;
  bool keep_images = false;

  // Scripts get the refusal before anything else is looked at.
  void validate() const override {
    if (!yes && ::isatty(0) != 1)
      throw Error(Errc::refused,
                  "refusing to delete cloud resources without confirmation; pass --yes");
  }
  int run(Factory& f) override;
};

bool confirm(const ClusterPlace& t, const std::string& cost, FILE* err) {
  std::fprintf(err,
               "Delete cluster %s (%s) in project %s%s, with its node pools, image repository "
               "and jobs bucket? [y/N] ",
               t.name.c_str(), t.location.c_str(), t.project.c_str(), cost.c_str());
  std::fflush(err);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

int DownFlags::run(Factory& f) {
  Cluster& cluster = f.cluster("down", /*provisioning=*/true);
  const ClusterPlace place = cluster.place();
  const PriceBook prices =
      price_book_setting(f.settings().prices.value, f.settings().prices.source);
  // What stops with the cluster (docs/cost.md); a cluster that is gone or unreachable has none.
  std::string cost;
  try {
    cost = cluster_cost_text(cluster_cost(cluster.pools(), prices));
  } catch (const Error&) {
  }
  if (!yes && !confirm(place, cost.empty() ? "" : ", costing " + cost, f.io().err))
    throw Error(Errc::refused, "nothing deleted");
  IOStreams& io = f.io();
  auto changes = cluster.down({keep_bucket, keep_images});
  int deleted = 0;
  bool cluster_deleted = false;
  for (const auto& c : changes) {
    deleted += c.action == "deleted";
    cluster_deleted = cluster_deleted || (c.kind == "cluster" && c.action == "deleted");
  }
  io.info(deleted == 0 ? "kinetic down: nothing to delete in project " + place.project
                       : "kinetic down: deleted " + std::to_string(deleted) +
                             (deleted == 1 ? " resource" : " resources") +
                             (cluster_deleted && !cost.empty() ? "; " + cost + " stops" : ""));
  return 0;
}

}  // namespace

void add_down(CLI::App& root, Factory&, Action& action) {
  auto flags = std::make_shared<DownFlags>();
  CLI::App* c = root.add_subcommand("down", "Delete what `up` created and report it");
  c->add_flag("-y,--yes", flags->yes,
              "Do not ask for confirmation (needed when not on a terminal)");
  c->add_flag("--keep-bucket", flags->keep_bucket, "Keep the jobs bucket and its objects");
  c->add_flag("--keep-images", flags->keep_images, "Keep the image repository");
  c->footer(
      "Examples:\n"
      "  kinetic down --yes\n"
      "  kinetic down --yes --keep-images     # the next `up` reuses built images");
  on_parse(c, action, flags);
}

}  // namespace kinetic::cli
