// kinetic accelerators: the catalog. Never reads config or credentials.
#include <cstdio>

#include "app.h"
#include "job/catalog.h"

namespace kinetic::cli {

namespace {

nlohmann::ordered_json entry_json(const Accelerator& a) {
  return {{"name", a.name},
          {"family", family_name(a.family)},
          {"kind", a.kind},
          {"chips", a.chips},
          {"hosts", a.hosts},
          {"multiHost", a.hosts > 1},
          {"chipsPerHost", a.chips_per_host},
          {"topology", a.topology},
          {"machineType", a.machine_type},
          {"gkeAccelerator", a.gke_accelerator},
          {"resource", a.resource_name},
          {"nodeSelector", a.node_selector},
          {"pricePerHour", a.price_per_hour}};
}

std::string price_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.2f", p);
  return buf;
}

int run_accelerators(Factory& f) {
  const auto format = f.format({OutputFormat::table, OutputFormat::wide, OutputFormat::json,
                                OutputFormat::yaml, OutputFormat::name});
  IOStreams& io = f.io();
  const auto& all = accelerator_catalog();
  if (format == OutputFormat::json || format == OutputFormat::yaml) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& a : all) list.push_back(entry_json(a));
    print_document(io.out, format, {{"pricesAsOf", catalog_price_date()}, {"accelerators", list}});
    return 0;
  }
  if (format == OutputFormat::name) {
    for (const auto& a : all) std::fprintf(io.out, "%s\n", a.name.c_str());
    return 0;
  }
  const bool wide = format == OutputFormat::wide;
  std::vector<std::string> headers = {"NAME",  "FAMILY",       "CHIPS",
                                      "HOSTS", "MACHINE TYPE", "PRICE/HOUR"};
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
        price_text(a.price_per_hour)};
    if (wide) {
      row.insert(row.begin() + 4, a.topology.empty() ? "-" : a.topology);
      row.push_back(a.gke_accelerator.empty() ? "-" : a.gke_accelerator);
    }
    t.add_row(row);
  }
  std::string text = t.render(io.out_tty);
  std::fwrite(text.data(), 1, text.size(), io.out);
  io.info("Prices: on-demand list prices for the whole slice in us-central1, as of " +
          std::string(catalog_price_date()) + ". Append :spot (or pass --spot) for Spot capacity.");
  io.info(
      "Multi-host slices run one pod per host as a JobSet and scale a whole slice at a time "
      "(docs/multihost.md).");
  return 0;
}

}  // namespace

void add_accelerators(CLI::App& root, Factory& f, Action& action) {
  CLI::App* c = root.add_subcommand(
      "accelerators",
      "List the accelerators kinetic knows: name, family, chips, hosts, machine "
      "type and price per hour");
  c->footer(
      "Examples:\n"
      "  kinetic accelerators\n"
      "  kinetic accelerators -o wide\n"
      "  kinetic accelerators -o json | jq '.accelerators[] | select(.family==\"tpu\")'");
  c->callback([&f, &action] { action = [&f] { return run_accelerators(f); }; });
}

}  // namespace kinetic::cli
