// kinetic accelerators: the catalog. Never reads config or credentials.
#include "app.h"
#include "job/catalog.h"
#include "job/pricing.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

// What a run or pool of A can ask for beyond on-demand nodes (docs/capacity.md): Spot, flex-start
// (GPUs, TPUs from v5e on), and for a multi-host TPU, `--slices N` and COMPACT placement of its
// pool (docs/multihost.md).
std::vector<std::string> supports(const Accelerator& a) {
  std::vector<std::string> out;
  if (a.family == AcceleratorFamily::cpu) return out;
  out.push_back("spot");
  if (offers_flex_start(a)) out.push_back("flex-start");
  if (a.family == AcceleratorFamily::tpu && a.hosts > 1) {
    out.push_back("slices");
    out.push_back("compact-placement");
  }
  return out;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ",") + w;
  return out.empty() ? "-" : out;
}

nlohmann::ordered_json entry_json(const Accelerator& a) {
  return {{"name", a.name},
          {"family", family_name(a.family)},
          {"kind", a.kind},
          {"chips", a.chips},
          {"hosts", a.hosts},
          {"multi_host", a.hosts > 1},
          {"chips_per_host", a.chips_per_host},
          {"topology", a.topology},
          {"machine_type", a.machine_type},
          {"gke_accelerator", a.gke_accelerator},
          {"resource", a.resource_name},
          {"node_selector", a.node_selector},
          {"price_per_hour", a.price_per_hour},
          {"capacity", capacity_name(a.capacity)},
          {"supports", supports(a)}};
}

// The footnote of the rows marked "*", from the catalog: which machine types, and how they are
// sold instead.
std::string not_on_demand_note(const std::vector<Accelerator>& all) {
  std::string spot_only, reserved;
  for (const auto& a : all) {
    std::string& list = a.capacity == Capacity::spot_or_flex_start ? spot_only : reserved;
    if (a.capacity == Capacity::on_demand || list.find(a.machine_type) != std::string::npos)
      continue;
    list += (list.empty() ? "" : ", ") + a.machine_type;
  }
  std::string note = "* Not sold on demand:";
  if (!spot_only.empty()) note += " " + spot_only + " only as Spot or flex-start VMs;";
  if (!reserved.empty())
    note += " " + reserved + " through a reservation (--reservation NAME), flex-start or Spot;";
  note.back() = '.';
  return note;
}

struct Accelerators : PrintingOptions {
  Accelerators()
      : PrintingOptions({OutputFormat::table, OutputFormat::wide, OutputFormat::json,
                         OutputFormat::yaml, OutputFormat::name}) {}
  int run(Factory& f) override;
};

int Accelerators::run(Factory& f) {
  IOStreams& io = f.io();
  const auto& all = accelerator_catalog();
  Printable p{.kind = "AcceleratorList"};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& a : all) {
    list.push_back(entry_json(a));
    p.names.push_back(a.name);
  }
  p.fields = {{"prices_as_of", catalog_price_date()}, {"accelerators", list}};
  p.table = [&all](bool wide) {
    std::vector<std::string> headers = {"NAME",         "FAMILY",     "CHIPS",   "HOSTS",
                                        "MACHINE TYPE", "PRICE/HOUR", "SUPPORTS"};
    if (wide) {
      headers.insert(headers.begin() + 4, "TOPOLOGY");
      headers.push_back("GKE ACCELERATOR");
    }
    Table t(headers);
    for (const auto& a : all) {
      std::vector<std::string> row = {
          a.name,
          std::string(family_name(a.family)),
          std::to_string(a.chips),
          a.hosts > 1 ? std::to_string(a.hosts) + " (multi-host)" : std::to_string(a.hosts),
          a.machine_type,
          format_usd(a.price_per_hour) + (a.capacity == Capacity::on_demand ? "" : " *"),
          joined(supports(a))};
      if (wide) {
        row.insert(row.begin() + 4, a.topology.empty() ? "-" : a.topology);
        row.push_back(a.gke_accelerator.empty() ? "-" : a.gke_accelerator);
      }
      t.add_row(row);
    }
    return t;
  };
  print(io, format, p);
  if (format != OutputFormat::table && format != OutputFormat::wide) return 0;
  io.info("Prices: on-demand list prices for the whole slice in us-central1, as of " +
          std::string(catalog_price_date()) +
          ". Append :spot (or pass --spot) for Spot capacity, :flex-start (or pass --flex-start) "
          "for flex-start (SUPPORTS; docs/capacity.md).");
  io.info(not_on_demand_note(all));
  io.info(
      "Multi-host slices run one pod per host as a JobSet and scale a whole slice at a time; "
      "only they take `run --slices N` (multislice: N slices, a node pool each; "
      "docs/multihost.md).");
  return 0;
}

}  // namespace

void add_accelerators(CLI::App& root, Factory&, Action& action) {
  CLI::App* c = root.add_subcommand(
      "accelerators",
      "List the accelerators kinetic knows: chips, hosts, machine type, price per hour and "
      "what each supports");
  c->footer(
      "Examples:\n"
      "  kinetic accelerators\n"
      "  kinetic accelerators -o wide\n"
      "  kinetic accelerators -o json | jq '.accelerators[] | select(.family==\"tpu\")'");
  on_parse(c, action, std::make_shared<Accelerators>());
}

}  // namespace kinetic::cli
