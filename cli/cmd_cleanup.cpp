// kinetic cleanup: remove what finished jobs left behind.
#include "app.h"
#include "backend/pipeline_cleanup.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/spec.h"
#include "job_lookup.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

struct CleanupOptions : PrintingOptions {
  CleanupOptions()
      : PrintingOptions(
            {OutputFormat::table, OutputFormat::json, OutputFormat::yaml, OutputFormat::name}) {}
  // A finished job's record (status, logs, outputs in the store or bucket) is kept a week by
  // default, so `logs` and `status` work after the fact (issue #8).
  std::string older_than;  // default 7d
  int keep_last = -1;      // -1: not given
  bool dry_run = false;
  CleanupPolicy policy;
  std::vector<std::string> jobs;

  void complete(Factory& f) override {
    PrintingOptions::complete(f);
    if (!older_than.empty()) policy.older_than_seconds = parse_duration(older_than, "--older-than");
    if (keep_last >= 0) policy.keep_last = static_cast<size_t>(keep_last);
    // --keep-last alone keeps that many records whatever their age, and only those.
    policy.records_by_age = keep_last < 0 || !older_than.empty();
  }
  void validate() const override {
    for (const auto& id : jobs) require_job_id(id);
    if (!jobs.empty() && (!older_than.empty() || keep_last >= 0))
      throw Error(Errc::usage,
                  "--older-than and --keep-last pick finished jobs; with job ids, those jobs go "
                  "whatever their age: pass one or the other");
  }
  int run(Factory& f) override;
};

int CleanupOptions::run(Factory& f) {
  Backend& b = f.backend("cleanup");
  std::vector<CleanupItem> items;
  if (jobs.empty()) {
    items = b.cleanup(policy, dry_run);
    // Finished pipeline runs' records go by the same rule (their steps are jobs of their own).
    if (auto records = b.pipeline_records())
      for (auto& item : prune_pipeline_records(*records, policy, now_unix(), dry_run))
        items.push_back(std::move(item));
  } else {
    // Every job checked before any is touched: a running one stops the whole command.
    for (const auto& id : jobs) require_ended_for_removal(require_job(b, id));
    for (const auto& id : jobs)
      for (auto& item : b.remove_job(id, dry_run)) items.push_back(std::move(item));
  }
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
  c->add_option("job", o->jobs, "Only these ended jobs, whatever their age");
  c->add_option("--older-than", o->older_than,
                "Only what finished at least this long ago, e.g. 1h or 0s for everything "
                "finished (default: 7d; with --keep-last, records within it also stay)");
  c->add_option("--keep-last", o->keep_last,
                "Keep the N most recently finished jobs' records whatever their age, and remove "
                "the other finished ones (with --older-than: those finished before it)")
      ->check(CLI::NonNegativeNumber);
  c->add_flag("--dry-run", o->dry_run, "List what would be removed, remove nothing");
  c->footer(
      "Removes finished jobs' records and logs, staged contexts no running job uses and temporary "
      "files (on gke also finished Jobs, orphaned Secrets and staging objects). Outputs already "
      "delivered to kinetic-out/ are never touched.\n\n"
      "Examples:\n  kinetic cleanup --dry-run\n  kinetic cleanup --older-than 0s\n"
      "  kinetic cleanup --keep-last 20             # the 20 latest records stay\n"
      "  kinetic cleanup job-1a2b3c4d              # that job's record, now");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
