// kinetic pool add|remove|list: accelerator node pools of the current cluster.
#include "app.h"
// Only to check the pool request in validate(), before the Factory hands out a cluster.
#include "backend/gke/cluster_requests.h"
#include "core/error.h"
#include "render/output.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

std::string autoscaling_text(const gcp::NodePoolInfo& p) {
  return std::to_string(p.min_nodes) + "-" + std::to_string(p.max_nodes);
}

struct PoolAdd : CommandOptions {
  std::string accelerator;
  PoolOptions pool;
  std::string jobset_manifests;

  // Bad sizes and unknown accelerators fail before any call.
  void validate() const override {
    if (pool.slices < 1 || pool.slices > 64)
      throw Error(Errc::usage,
                  "--slices must be between 1 and 64 (got " + std::to_string(pool.slices) + ")");
    gke::node_pool_request(resolve_accelerator(accelerator), pool);
  }
  int run(Factory& f) override {
    Cluster& cluster = f.cluster("pool add");
    cluster.add_pool(resolve_accelerator(accelerator), pool, jobset_manifests);
    return 0;
  }
};

struct PoolRemove : CommandOptions {
  std::string name;

  int run(Factory& f) override {
    f.cluster("pool remove").remove_pool(name);
    return 0;
  }
};

struct PoolList : PrintingOptions {
  PoolList()
      : PrintingOptions({OutputFormat::table, OutputFormat::wide, OutputFormat::json,
                         OutputFormat::yaml, OutputFormat::name}) {}
  int run(Factory& f) override;
};

int PoolList::run(Factory& f) {
  Cluster& cluster = f.cluster("pool list");
  auto rows = cluster.pools();
  IOStreams& io = f.io();
  Printable p{.kind = "PoolList"};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    p.names.push_back(r.pool.name);
    list.push_back({{"name", r.pool.name},
                    {"accelerator", r.accelerator.empty() ? "cpu" : r.accelerator},
                    {"machine_type", r.pool.machine_type},
                    {"spot", r.pool.spot},
                    {"flex_start", r.pool.flex_start},
                    {"topology", r.pool.tpu_topology},
                    {"image_streaming", r.pool.image_streaming},
                    {"nodes", r.nodes},
                    {"min_nodes", r.pool.min_nodes},
                    {"max_nodes", r.pool.max_nodes},
                    {"status", r.pool.status}});
  }
  p.fields = {{"cluster", cluster.place().name}, {"pools", list}};
  p.table = [&rows](bool wide) {
    std::vector<std::string> headers = {"NAME",  "ACCELERATOR", "MACHINE", "SPOT",
                                        "NODES", "AUTOSCALE",   "STATUS"};
    if (wide) {
      headers.insert(headers.begin() + 3, "TOPOLOGY");
      headers.push_back("FLEX-START");
      headers.push_back("IMAGE STREAMING");
    }
    Table t(headers);
    for (const auto& r : rows) {
      std::vector<std::string> row = {r.pool.name,
                                      r.accelerator.empty() ? "-" : r.accelerator,
                                      r.pool.machine_type,
                                      r.pool.spot ? "yes" : "no",
                                      std::to_string(r.nodes),
                                      autoscaling_text(r.pool),
                                      r.pool.status};
      if (wide) {
        row.insert(row.begin() + 3, r.pool.tpu_topology.empty() ? "-" : r.pool.tpu_topology);
        row.push_back(r.pool.flex_start ? "yes" : "no");
        row.push_back(r.pool.image_streaming ? "on" : "off");
      }
      t.add_row(row);
    }
    return t;
  };
  print(io, format, p);
  return 0;
}

}  // namespace

void add_pool(CLI::App& root, Factory&, Action& action) {
  CLI::App* c = root.add_subcommand("pool", "Manage the accelerator node pools of the cluster");
  c->require_subcommand(1, 1);
  c->footer(
      "Examples:\n"
      "  kinetic pool add --accelerator v5litepod-4 --spot\n"
      "  kinetic pool add --accelerator v6e-8 --flex-start\n"
      "  kinetic pool list\n"
      "  kinetic pool remove v5litepod-4-spot");
  auto a = std::make_shared<PoolAdd>();
  CLI::App* add = c->add_subcommand("add", "Add a node pool for an accelerator");
  add->add_option("-a,--accelerator", a->accelerator, "Accelerator, e.g. v5litepod-4")->required();
  add->add_flag("--spot", a->pool.spot, "Spot nodes");
  add->add_flag("--flex-start", a->pool.flex_start,
                "Flex-start nodes: no reservation, they come when GKE has the capacity (GPUs; "
                "TPUs v5e, v5p, v6e; see docs/capacity.md); run with --flex-start");
  add->add_option("--reservation", a->pool.reservation, "Consume this reservation");
  add->add_option("--min-nodes", a->pool.min_nodes, "Minimum nodes (default 0)");
  add->add_option("--max-nodes", a->pool.max_nodes,
                  "Maximum nodes (default 4; a multi-host TPU pool is one slice: its hosts)");
  add->add_option("--slices", a->pool.slices,
                  "Make N pools of a multi-host TPU, one a slice (NAME, NAME-slice-2, ...), for "
                  "`run --slices N` (default 1)");
  add->add_option("--jobset-manifests", a->jobset_manifests,
                  "For a multi-host TPU pool, install JobSet from this copy of its release "
                  "manifests (a file or URL; default: the pinned release on GitHub, or "
                  "KINETIC_JOBSET_MANIFESTS)");
  on_parse(add, action, a);
  auto r = std::make_shared<PoolRemove>();
  CLI::App* remove = c->add_subcommand("remove", "Delete a node pool");
  remove->add_option("name", r->name, "Pool name (see `kinetic pool list`)")->required();
  on_parse(remove, action, r);
  CLI::App* list =
      c->add_subcommand("list", "List the node pools with their accelerators and sizes");
  on_parse(list, action, std::make_shared<PoolList>());
}

}  // namespace kinetic::cli
