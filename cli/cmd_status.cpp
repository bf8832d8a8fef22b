// kinetic status [JOB]: where jobs stand, as a table or -o json|yaml|name.
#include <algorithm>

#include "app.h"
#include "backend/gke/auto_down.h"
#include "backend/gke/provisioner.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/pricing.h"
#include "job/spec.h"
#include "job_lookup.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

struct StatusOptions : PrintingOptions {
  StatusOptions()
      : PrintingOptions({OutputFormat::table, OutputFormat::wide, OutputFormat::json,
                         OutputFormat::yaml, OutputFormat::name}) {}
  std::string job;
  void validate() const override {
    if (!job.empty()) require_job_id(job);
  }
  int run(Factory& f) override;
};

std::string exit_text(const JobStatus& s) {
  return s.exit_code ? std::to_string(*s.exit_code) : "-";
}

// What the job's accelerator has cost so far at list price (0 when unknown or local).
double cost_of(const JobStatus& s, const PriceBook& prices) {
  if (s.backend != "gke" || s.accelerator.empty()) return 0;
  try {
    return accelerator_price(resolve_accelerator(s.accelerator), prices) * s.duration_seconds /
           3600.0;
  } catch (const Error&) {
    return 0;
  }
}

std::string cost_text(const JobStatus& s, const PriceBook& prices) {
  if (s.backend != "gke") return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.2f", cost_of(s, prices));
  return buf;
}

// The cluster and its pools, for `status` on a gke context.
struct ClusterView {
  std::string name;
  std::string location;
  std::vector<gke::PoolRow> pools;
  std::optional<gke::AutoDownState> auto_down;  // what the in-cluster check recorded
  bool missing = false;  // GKE has no such cluster (deleted by auto-down, or by `down`)
};

std::optional<ClusterView> cluster_view(Factory& f) {
  if (f.settings().backend != "gke") return std::nullopt;
  gke::Session& s = f.gke_session();
  gke::Provisioner provisioner(s, nullptr);
  ClusterView view{s.target.cluster, s.target.location, {}, std::nullopt};
  try {
    view.pools = provisioner.list_pools();
  } catch (const Error& e) {
    // Jobs' records outlive the cluster (they are in the bucket): still show them.
    if (e.code() != Errc::not_found) throw;
    view.missing = true;
    return view;
  }
  view.auto_down = gke::read_auto_down(s);
  return view;
}

std::string duration_text(const JobStatus& s) {
  if (!s.terminal()) {
    std::string age = age_of(s.started.empty() ? s.created : s.started);
    return age.empty() ? "-" : age;
  }
  return format_duration(s.duration_seconds);
}

int StatusOptions::run(Factory& f) {
  Backend& b = f.backend("status");
  const Settings& s = f.settings();
  std::vector<JobStatus> jobs;
  if (!job.empty()) {
    jobs.push_back(require_job(b, job));
  } else {
    jobs = b.list();
  }
  IOStreams& io = f.io();
  // Prices matter on gke only: a bad setting does not stop a local status.
  const PriceBook prices =
      s.backend == "gke" ? price_book_setting(s.prices.value, s.prices.source) : PriceBook{};
  const bool whole = job.empty() && format != OutputFormat::name;
  std::optional<ClusterView> cluster = whole ? cluster_view(f) : std::nullopt;
  const gke::ClusterCost cost =
      cluster ? gke::cluster_cost(cluster->pools, prices) : gke::ClusterCost{};
  Printable p{.kind = job.empty() ? "JobList" : "Job"};
  for (const auto& j : jobs) p.names.push_back(j.id);
  if (!job.empty()) {
    p.fields = nlohmann::ordered_json::parse(to_json(jobs.front()).dump());
    p.fields.erase("schema_version");  // document_of puts it first
  } else {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& j : jobs) {
      auto item = nlohmann::ordered_json::parse(to_json(j).dump());
      item.erase("schema_version");  // the list carries it
      if (j.backend == "gke") item["cost_usd"] = cost_of(j, prices);
      list.push_back(item);
    }
    p.fields = {{"context", s.context.value}, {"backend", s.backend}};
    if (cluster) {
      nlohmann::ordered_json pools = nlohmann::ordered_json::array();
      for (const auto& pool : cluster->pools) {
        auto each = gke::pool_node_price(pool, prices);
        pools.push_back({{"name", pool.pool.name},
                         {"accelerator", pool.accelerator.empty() ? "cpu" : pool.accelerator},
                         {"nodes", pool.nodes},
                         {"max_nodes", pool.pool.max_nodes},
                         {"status", pool.pool.status},
                         {"cost_per_hour", each ? nlohmann::ordered_json(*each * pool.nodes)
                                                : nlohmann::ordered_json(nullptr)}});
      }
      p.fields["cluster"] = {{"name", cluster->name},
                             {"location", cluster->location},
                             {"exists", !cluster->missing},
                             {"cost_per_hour", cost.per_hour},
                             {"pools", pools}};
      if (const auto& a = cluster->auto_down) {
        auto when = [](const std::optional<double>& t) {
          return t ? nlohmann::ordered_json(rfc3339(*t)) : nlohmann::ordered_json(nullptr);
        };
        p.fields["cluster"]["auto_down"] = {{"idle_after_seconds", a->idle_seconds},
                                            {"state", a->state.empty() ? "unchecked" : a->state},
                                            {"idle_since", when(a->idle_since)},
                                            {"deletes_at", when(a->deletes_at)},
                                            {"checked_at", when(a->checked_at)},
                                            {"text", gke::auto_down_text(*a, now_unix())}};
      }
    }
    p.fields["jobs"] = list;
  }
  if (format != OutputFormat::table && format != OutputFormat::wide) {
    print(io, format, p);
    return 0;
  }
  // The table: the cluster's pools first (on a gke context), then the jobs.
  p.print_empty_table = !job.empty();
  const std::string held_now = rfc3339(now_unix());
  p.table = [&jobs, &prices, &held_now](bool wide) {
    std::vector<std::string> headers = {"JOB", "STATE",    "EXIT", "ACCELERATOR",
                                        "AGE", "DURATION", "COST", "FILE"};
    if (wide) {
      headers.push_back("OUTPUT");
      headers.push_back("ERROR");
    }
    Table t(headers);
    for (const auto& j : jobs) {
      // A failed job held for `exec` (--hold-on-failure) still has its pod and node up.
      std::vector<std::string> row = {j.id,
                                      is_held(j, held_now) ? j.state + " (held)" : j.state,
                                      exit_text(j),
                                      j.accelerator,
                                      age_of(j.created),
                                      duration_text(j),
                                      cost_text(j, prices),
                                      j.file};
      if (wide) {
        row.push_back(j.output_dir);
        row.push_back(j.error.empty() ? "-" : j.error);
      }
      t.add_row(row);
    }
    return t;
  };
  if (cluster && cluster->missing) {
    io.info("cluster " + cluster->name + " (" + cluster->location +
            "): not found (deleted by its auto-down or by `kinetic down`); `kinetic up` makes it "
            "again and reuses the images");
  } else if (cluster) {
    io.info("cluster " + cluster->name + " (" + cluster->location + "): costs " +
            gke::cluster_cost_text(cost) + " now" +
            (cluster->auto_down ? "; " + gke::auto_down_text(*cluster->auto_down, now_unix())
                                : std::string()));
    Table pools({"POOL", "ACCELERATOR", "NODES", "MAX", "COST/H"});
    for (const auto& pool : cluster->pools) {
      auto each = gke::pool_node_price(pool, prices);
      pools.add_row({pool.pool.name, pool.accelerator.empty() ? "cpu" : pool.accelerator,
                     std::to_string(pool.nodes), std::to_string(pool.pool.max_nodes),
                     each ? format_usd(*each * pool.nodes) : "?"});
    }
    std::string text = pools.render(io.out_tty);
    std::fwrite(text.data(), 1, text.size(), io.out);
    std::fputs("\n", io.out);
  }
  if (job.empty())
    io.info("context " + s.context.value + " (backend " + s.backend +
            "): " + std::to_string(jobs.size()) + (jobs.size() == 1 ? " job" : " jobs"));
  print(io, format, p);
  // Idle and still billing: the reminder kinetic's users most asked for (issue #12).
  if (cluster && !cluster->missing &&
      std::none_of(jobs.begin(), jobs.end(), [&held_now](const JobStatus& j) {
        return j.state == kPending || j.state == kRunning || is_held(j, held_now);
      }))
    io.warn("no job is pending or running, and cluster " + cluster->name + " still costs " +
            gke::cluster_cost_text(cost) +
            "; `kinetic down --yes --keep-images` stops it (the next `kinetic up` reuses the "
            "images)" +
            (cluster->auto_down ? std::string()
                                : ", or let it go by itself: `kinetic up --auto-down 2h`"));
  return 0;
}

}  // namespace

void add_status(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* c = root.add_subcommand("status", "Show running and recent jobs");
  c->add_option("job", o->job, "Show only this job");
  c->footer(
      "Examples:\n"
      "  kinetic status\n"
      "  kinetic status job-1a2b3c4d -o json\n"
      "  kinetic status -o name            # job ids, one per line");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
