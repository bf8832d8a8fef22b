// kinetic cleanup: remove what finished jobs left behind.
#include "app.h"
#include "core/duration.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

struct CleanupOptions : PrintingOptions {
  CleanupOptions()
      : PrintingOptions(
            {OutputFormat::table, OutputFormat::json, OutputFormat::yaml, OutputFormat::name}) {}
  // A finished job's record (status, logs, outputs in the store or bucket) is kept a week by
  // default, so `logs` and `status` work after the fact (issue #8).
  std::string older_than = "7d";
  bool dry_run = false;
  long older_than_seconds = 0;

  void complete(Factory& f) override {
    PrintingOptions::complete(f);
    older_than_seconds = parse_duration(older_than, "--older-than");
  }
  int run(Factory& f) override;
};

int CleanupOptions::run(Factory& f) {
  Backend& b = f.backend("cleanup");
  auto items = b.cleanup(older_than_seconds, dry_run);
  IOStreams& io = f.io();
  Printable p{.kind = "CleanupList", .print_empty_table = false};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  uint64_t total = 0;
  for (const auto& i : items) {
    list.push_back({{"kind", i.kind}, {"name", i.name}, {"bytes", i.bytes}, {"detail", i.detail}});
    p.names.push_back(i.kind + "/" + i.name);
    total += i.bytes;
  }
  p.fields = {{"dry_run", dry_run}, {"items", list}};
  p.table = [&items](bool) {
    Table t({"KIND", "NAME", "SIZE", "DETAIL"});
    for (const auto& i : items) t.add_row({i.kind, i.name, format_bytes(i.bytes), i.detail});
    return t;
  };
  print(io, format, p);
  if (format != OutputFormat::table) return 0;
  io.info(std::string(dry_run ? "would remove " : "removed ") + std::to_string(items.size()) +
          (items.size() == 1 ? " item" : " items") + " (" + format_bytes(total) + ")");
  return 0;
}

}  // namespace

void add_cleanup(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<CleanupOptions>();
  CLI::App* c = root.add_subcommand("cleanup", "Remove what finished jobs left behind");
  c->add_option("--older-than", o->older_than,
                "Only what finished at least this long ago, e.g. 1h or 0s for everything "
                "finished (default: 7d)");
  c->add_flag("--dry-run", o->dry_run, "List what would be removed, remove nothing");
  c->footer(
      "Removes finished jobs' records and logs, staged contexts no running job uses and temporary "
      "files (on gke also finished Jobs, orphaned Secrets and staging objects). Outputs already "
      "delivered to kinetic-out/ are never touched.\n\n"
      "Examples:\n  kinetic cleanup --dry-run\n  kinetic cleanup --older-than 0s");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
