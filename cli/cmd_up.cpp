// kinetic up: enable the services, create (or reconcile) the cluster, the accelerator node pools,
// the JobSet controller, the image repository and the jobs bucket, then record the gke context
// and make it current.
#include "app.h"
#include "backend/auto_down_state.h"
#include "backend/cluster_cost.h"
// Only to check the pool requests in validate(), before the Factory hands out a cluster.
#include "backend/gke/cluster_requests.h"
#include "core/error.h"
#include "core/strings.h"
#include "job/pricing.h"

namespace kinetic::cli {

namespace {

struct UpFlags : CommandOptions {
  std::vector<std::string> accelerators;
  bool spot = false;
  bool flex_start = false;
  std::string reservation;
  int min_nodes = 0;
  std::optional<int> max_nodes;
  int slices = 1;
  std::string machine_type;
  std::string release_channel = "regular";
  std::string context_name;
  std::string jobset_manifests;
  std::string auto_down;  // --auto-down: a period or "off"
  std::string queue;      // --queue: on, fair or off
  std::string kueue_manifests;

  void validate() const override {
    if (!auto_down.empty()) (void)parse_auto_down(auto_down, "--auto-down");
    // Every pool request is checked before anything is touched, so a bad --min-nodes or an
    // unknown accelerator fails fast.
    const UpOptions o = up_options();
    for (const auto& a : o.accelerators) {
      PoolOptions pool = o.pool;
      if (a.hosts < 2) pool.slices = 1;  // --slices is for the multi-host TPUs given
      gke::node_pool_request(a, pool);
    }
    if (slices < 1 || slices > 64)
      throw Error(Errc::usage,
                  "--slices must be between 1 and 64 (got " + std::to_string(slices) + ")");
  }
  int run(Factory& f) override;

  UpOptions up_options() const {
    UpOptions o;
    for (const auto& a : accelerators) o.accelerators.push_back(resolve_accelerator(a));
    o.pool.spot = spot;
    o.pool.flex_start = flex_start;
    o.pool.reservation = reservation;
    o.pool.min_nodes = min_nodes;
    o.pool.max_nodes = max_nodes;
    o.pool.slices = slices;
    o.default_machine_type = machine_type;
    o.release_channel = to_lower(release_channel);
    for (auto& c : o.release_channel) c = static_cast<char>(std::toupper(c));
    return o;
  }
};

int UpFlags::run(Factory& f) {
  Cluster& cluster = f.cluster("up", /*provisioning=*/true);
  IOStreams& io = f.io();
  const PriceBook prices =
      price_book_setting(f.settings().prices.value, f.settings().prices.source);

  UpOptions options = up_options();
  options.jobset_manifests = jobset_manifests;
  if (!queue.empty()) options.queue = to_lower(queue) != "off";
  options.queue_fair = to_lower(queue) == "fair";
  options.kueue_manifests = kueue_manifests;
  // --auto-down, else the context's setting (which --auto-down updates); neither: as it is.
  const Setting& setting = f.settings().auto_down;
  const std::string period = auto_down.empty() ? setting.value : auto_down;
  if (!period.empty())
    options.auto_down = parse_auto_down(
        period, auto_down.empty() ? "auto-down (" + setting.source + ")" : "--auto-down");

  const ClusterPlace t = cluster.place();
  io.info("kinetic up: project " + t.project + ", " + t.location + ", cluster " + t.name);
  std::vector<ClusterChange> changes = cluster.up(options);
  // What keeping it up costs (docs/cost.md); the run goes on without the figure.
  try {
    io.info("kinetic up: the cluster costs " +
            cluster_cost_text(cluster_cost(cluster.pools(), prices)) +
            " while it exists, and each accelerator node its price while it is up; `kinetic "
            "down --yes` stops it");
  } catch (const Error&) {
  }

  // Record the context and make it current.
  ConfigFile& config = f.config();
  std::string name = context_name;
  if (name.empty()) name = t.context_name;
  Context& ctx = config.upsert(name);
  ctx.backend = "gke";
  ctx.project = t.project;
  ctx.zone = t.location == t.region ? "" : t.location;
  ctx.region = t.location == t.region ? t.region : "";
  ctx.cluster = t.name;
  if (!auto_down.empty()) ctx.auto_down = auto_down;
  config.set_current_context(name);
  config.save();

  int created = 0;
  for (const auto& c : changes) created += c.action != "exists";  // created, enabled, granted
  io.info("kinetic up: " + std::string(created == 0 ? "everything already existed" : "ready") +
          "; context " + name + " is current (run jobs with `kinetic run FILE`)");
  return 0;
}

}  // namespace

void add_up(CLI::App& root, Factory&, Action& action) {
  auto flags = std::make_shared<UpFlags>();
  CLI::App* c = root.add_subcommand(
      "up", "Provision (or reconcile) a GKE cluster for kinetic and make it the current context");
  c->add_option("-a,--accelerator", flags->accelerators,
                "Add a node pool for this accelerator (repeatable)");
  c->add_flag("--spot", flags->spot, "Make the accelerator node pools Spot");
  c->add_flag("--flex-start", flags->flex_start,
              "Make the accelerator node pools flex-start: no reservation, nodes come when GKE "
              "has the capacity (see docs/capacity.md)");
  c->add_option("--reservation", flags->reservation, "Consume this reservation");
  c->add_option("--slices", flags->slices,
                "For each multi-host TPU accelerator, make N node pools, one a slice, for "
                "`run --slices N` (default 1)");
  c->add_option("--min-nodes", flags->min_nodes, "Minimum nodes per pool (default 0)");
  c->add_option(
      "--max-nodes", flags->max_nodes,
      "Maximum nodes per pool (default 4; a multi-host TPU pool is one slice: its hosts)");
  c->add_option("--machine-type", flags->machine_type,
                "Machine type of the default pool (default: the first the zone offers of "
                "e2/n2/n1/n2d/c3/t2d-standard-4)");
  c->add_option("--release-channel", flags->release_channel,
                "GKE release channel: rapid, regular, stable or extended")
      ->check(CLI::IsMember({"rapid", "regular", "stable", "extended"}, CLI::ignore_case));
  c->add_option("--jobset-manifests", flags->jobset_manifests,
                "For multi-host TPU pools, install JobSet from this copy of its release manifests "
                "(a file or URL; default: the pinned release on GitHub, or "
                "KINETIC_JOBSET_MANIFESTS)");
  c->add_option("--queue", flags->queue,
                "Share the cluster through Kueue: on installs it (a pinned release) with a queue "
                "per accelerator, whose quota is its pools' size; fair does too, and admits a "
                "namespace's jobs by how little it used lately, before priority; off removes "
                "kinetic's queues")
      ->type_name("on|fair|off")
      ->check(CLI::IsMember({"on", "fair", "off"}, CLI::ignore_case));
  c->add_option(
      "--kueue-manifests", flags->kueue_manifests,
      "With --queue on or fair, install Kueue from this copy of its release manifests (a file "
      "or URL; default: the pinned release on GitHub, or KINETIC_KUEUE_MANIFESTS)");
  c->add_option("--auto-down", flags->auto_down,
                "Delete the cluster by itself once no job has been pending or running for this "
                "long (e.g. 2h; at least 10m; off removes it); kept in the context")
      ->type_name("DURATION|off");
  c->add_option("--context-name", flags->context_name,
                "Name of the kinetic context to write (default: the project)");
  c->footer(
      "Examples:\n"
      "  kinetic up --project acme-ml --zone us-central1-a --accelerator v5litepod-1\n"
      "  kinetic up --project acme-ml --region us-east5 --accelerator v6e-8 --spot\n"
      "  kinetic up --auto-down 2h    # deletes itself after 2 idle hours (bucket, images kept)\n"
      "  kinetic up --queue on        # several people share it: jobs wait their turn whole\n"
      "  kinetic up --queue fair      # ...and one namespace's sweep does not starve the rest\n"
      "Running it again reconciles: what exists is reported and left alone. Multi-host TPU\n"
      "slices run as JobSets: the first multi-host pool brings the JobSet controller (a pinned\n"
      "release); a cluster of single-host pools never downloads it.");
  on_parse(c, action, flags);
}

}  // namespace kinetic::cli
