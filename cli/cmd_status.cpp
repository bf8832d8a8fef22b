// kinetic status [JOB|PIPELINE]: where jobs and pipelines stand, as a table or
// -o json|yaml|name.
#include <algorithm>
#include <functional>

#include "app.h"
#include "backend/auto_down_state.h"
#include "backend/cluster_cost.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/pricing.h"
#include "job/spec.h"
#include "job_lookup.h"
#include "render/printer.h"
#include "run/serve.h"

namespace kinetic::cli {

namespace {

struct StatusOptions : PrintingOptions {
  StatusOptions()
      : PrintingOptions({OutputFormat::table, OutputFormat::wide, OutputFormat::json,
                         OutputFormat::yaml, OutputFormat::name}) {}
  std::string job;
  std::vector<std::string> selector_flags;
  std::vector<std::pair<std::string, std::string>> selector;  // -l K=V, parsed
  void complete(Factory& f) override {
    PrintingOptions::complete(f);
    selector.clear();
    for (const auto& value : selector_flags) selector.push_back(parse_label(value, "-l"));
  }
  void validate() const override {
    if (!job.empty()) require_job_or_pipeline_id(job);
    if (!job.empty() && !selector.empty())
      throw Error(Errc::usage, "-l selects among all jobs; pass JOB or -l, not both");
  }
  int run(Factory& f) override;
  int show_pipeline(Factory& f);
  // The job named, or every job -l selects.
  std::vector<JobStatus> find_jobs(JobStore& b) const;
};

// A document as a Printable's fields: document_of puts kind and schema_version first again.
nlohmann::ordered_json fields_of(PipelineDocument doc) {
  doc.erase("kind");
  doc.erase("schema_version");
  return doc;
}

std::string text_of(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  return "-";
}

// A step's duration: so far while it runs, "-" when it did not run.
std::string step_duration(const nlohmann::ordered_json& step) {
  const std::string state = step.value("state", "");
  if (state == "running") {
    const std::string age = age_of(step.value("started", ""));
    return age.empty() ? "-" : age;
  }
  if (step.value("started", "").empty()) return "-";
  return format_duration(step.value("duration_seconds", 0.0));
}

// "2/3": the steps that are done (ran or reused) of all of them.
std::string steps_done(const PipelineDocument& doc) {
  int done = 0, all = 0;
  for (const auto& step : doc.value("steps", nlohmann::ordered_json::array())) {
    ++all;
    const std::string state = step.value("state", "");
    done += state == "succeeded" || state == "reused" ? 1 : 0;
  }
  return std::to_string(done) + "/" + std::to_string(all);
}

// Recent pipelines, each as `status PIPELINE` sees it (lost when its runner is gone).
std::vector<PipelineDocument> recent_pipelines(Factory& f) {
  std::vector<PipelineDocument> out;
  if (f.settings().backend != "local" && f.settings().backend != "gke") return out;
  auto records = pipeline_records(f.backend("pipeline"));
  for (const auto& doc : records->list()) {
    const std::string id = doc.value("id", "");
    if (auto seen = looks_like_pipeline_id(id) ? pipeline_view(*records, id) : std::nullopt)
      out.push_back(std::move(*seen));
  }
  return out;
}

std::string cost_text(const JobStatus& s, const PriceBook& prices);

int StatusOptions::show_pipeline(Factory& f) {
  Backend& b = f.backend("pipeline");
  auto records = pipeline_records(b);
  const PipelineDocument doc = require_pipeline(*records, job);
  IOStreams& io = f.io();
  // On gke, what each step's job cost at list price (its record's accelerator and duration); a
  // reused step cost nothing this time. Locally, nothing.
  std::map<std::string, std::string> costs;
  if (f.settings().backend == "gke" &&
      (format == OutputFormat::table || format == OutputFormat::wide)) {
    const Settings& s = f.settings();
    const PriceBook prices = price_book_setting(s.prices.value, s.prices.source);
    for (const auto& step : doc.value("steps", nlohmann::ordered_json::array())) {
      const std::string name = step.value("name", ""), id = step.value("job", "");
      if (step.value("reused", false)) {
        costs[name] = "$0.00";
      } else if (!id.empty()) {
        if (auto st = b.get(id)) costs[name] = cost_text(*st, prices);
      }
    }
  }
  Printable p{.kind = "PipelineRun", .fields = fields_of(doc), .names = {job}};
  p.table = [&doc, &costs](bool wide) {
    std::vector<std::string> headers = {"STEP", "STATE", "REUSED", "DURATION",
                                        "EXIT", "JOB",   "COST"};
    if (wide) {
      headers.push_back("RECORD");
      headers.push_back("OUTPUT");
      headers.push_back("ERROR");
    }
    Table t(headers);
    for (const auto& step : doc.value("steps", nlohmann::ordered_json::array())) {
      std::vector<std::string> row = {
          step.value("name", ""),
          step.value("state", ""),
          step.value("reused", false) ? "yes" : "no",
          step_duration(step),
          text_of(step.value("exit_code", nlohmann::ordered_json())),
          text_of(step.value("job", "")),
          costs.count(step.value("name", "")) ? costs.at(step.value("name", "")) : "-"};
      if (wide) {
        row.push_back(text_of(step.value("output_dir", "")));
        row.push_back(text_of(step.value("error", "")));
      }
      t.add_row(row);
    }
    return t;
  };
  if (format == OutputFormat::table || format == OutputFormat::wide) {
    std::string line = "pipeline " + job + " " + doc.value("state", "") + ": " +
                       std::to_string(doc.value("steps", nlohmann::ordered_json::array()).size()) +
                       " steps from " + doc.value("file", "");
    const auto& runner = doc.value("runner", nlohmann::ordered_json::object());
    if (doc.value("detached", false) && runner.contains("pid"))
      line += " (detached, runner pid " + text_of(runner["pid"]) + ")";
    if (runner.contains("job")) line += " (detached, runner Job " + text_of(runner["job"]) + ")";
    io.info(line);
    // Why a run that ended before its steps did (lost, its runner refused its plan, ...).
    if (!doc.value("error", "").empty()) io.warn(doc.value("error", ""));
  }
  print(io, format, p);
  return 0;
}

std::string exit_text(const JobStatus& s) {
  return s.exit_code ? std::to_string(*s.exit_code) : "-";
}

// What the job's accelerator has cost so far at list price (0 when unknown or local).
double cost_of(const JobStatus& s, const PriceBook& prices) {
  if (s.backend != "gke" || s.accelerator.empty()) return 0;
  try {
    Accelerator accel = resolve_accelerator(s.accelerator);
    accel.slices = s.slices;  // a multislice run costs its N slices
    return accelerator_price(accel, prices) * s.duration_seconds / 3600.0;
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

std::string duration_text(const JobStatus& s) {
  if (!s.terminal()) {
    std::string age = age_of(s.started.empty() ? s.created : s.started);
    return age.empty() ? "-" : age;
  }
  return format_duration(s.duration_seconds);
}

// A JobStatus as a document's fields, without the schema_version its container carries.
nlohmann::ordered_json job_fields(const JobStatus& j) {
  auto fields = nlohmann::ordered_json::parse(to_json(j).dump());
  fields.erase("schema_version");
  return fields;
}

// A job's STATE cell: a failed job held for `exec` (--hold-on-failure) still has its pod and
// node up, a job in a cluster's queue says its place in line, and a server (`kinetic serve`) says
// which port it serves.
std::string state_text(const JobStatus& j, const std::string& held_now) {
  if (is_held(j, held_now)) return j.state + " (held)";
  // "pending (queued: 2nd in line in kinetic-v5litepod-1)": a job waiting its turn.
  if (!j.queued.empty()) return j.state + " (" + j.queued + ")";
  if (is_server(j) && !j.terminal())
    return j.state + " (server :" + std::to_string(server_port(j)) + ")";
  return j.state;
}

// The jobs' table. HELD_NOW: the time holds are judged at.
std::function<Table(bool)> jobs_table(const std::vector<JobStatus>& jobs, const PriceBook& prices,
                                      const std::string& held_now,
                                      const std::map<std::string, uint64_t>& record_bytes) {
  return [&jobs, &prices, held_now, &record_bytes](bool wide) {
    std::vector<std::string> headers = {"JOB", "STATE",    "EXIT", "ACCELERATOR",
                                        "AGE", "DURATION", "COST", "FILE"};
    if (wide) {
      headers.push_back("OUTPUT");
      headers.push_back("ERROR");
    }
    Table t(headers);
    for (const auto& j : jobs) {
      // A multislice run: "v5litepod-16 x2" (its cost is theirs).
      const std::string accelerator =
          j.slices > 1 ? j.accelerator + " x" + std::to_string(j.slices) : j.accelerator;
      std::vector<std::string> row = {j.id,
                                      state_text(j, held_now),
                                      exit_text(j),
                                      accelerator,
                                      age_of(j.created),
                                      duration_text(j),
                                      cost_text(j, prices),
                                      j.file};
      if (wide) {
        const auto size = record_bytes.find(j.id);
        row.push_back(size == record_bytes.end() ? "-" : format_bytes(size->second));
        row.push_back(j.output_dir);
        row.push_back(j.error.empty() ? "-" : j.error);
      }
      t.add_row(row);
    }
    return t;
  };
}

// The cluster and its pools: the "cluster" field of the JobList and the table above the jobs
// (this Printable's table alone is printed; its fields go into the JobList).
Printable pools_printable(const ClusterDescription& cluster, const PriceBook& prices,
                          const ClusterCost& cost) {
  Printable p{.kind = "Cluster"};
  nlohmann::ordered_json pools = nlohmann::ordered_json::array();
  for (const auto& pool : cluster.pools) {
    auto each = pool_node_price(pool, prices);
    pools.push_back({{"name", pool.pool.name},
                     {"accelerator", pool.accelerator.empty() ? "cpu" : pool.accelerator},
                     {"nodes", pool.nodes},
                     {"max_nodes", pool.pool.max_nodes},
                     {"status", pool.pool.status},
                     {"cost_per_hour", each ? nlohmann::ordered_json(*each * pool.nodes)
                                            : nlohmann::ordered_json(nullptr)}});
  }
  p.fields = {{"name", cluster.name},
              {"location", cluster.location},
              {"exists", !cluster.missing},
              {"cost_per_hour", cost.per_hour},
              {"pools", pools}};
  if (const auto& a = cluster.auto_down) {
    auto when = [](const std::optional<double>& t) {
      return t ? nlohmann::ordered_json(rfc3339(*t)) : nlohmann::ordered_json(nullptr);
    };
    p.fields["auto_down"] = {{"idle_after_seconds", a->idle_seconds},
                             {"state", a->state.empty() ? "unchecked" : a->state},
                             {"idle_since", when(a->idle_since)},
                             {"deletes_at", when(a->deletes_at)},
                             {"checked_at", when(a->checked_at)},
                             {"text", auto_down_text(*a, now_unix())}};
  }
  p.table = [&cluster, &prices](bool) {
    Table t({"POOL", "ACCELERATOR", "NODES", "MAX", "COST/H"});
    for (const auto& pool : cluster.pools) {
      auto each = pool_node_price(pool, prices);
      t.add_row({pool.pool.name, pool.accelerator.empty() ? "cpu" : pool.accelerator,
                 std::to_string(pool.nodes), std::to_string(pool.pool.max_nodes),
                 each ? format_usd(*each * pool.nodes) : "?"});
    }
    return t;
  };
  return p;
}

// The recent pipelines: the "pipelines" field of the JobList and the table below the jobs (as
// with the pools, only the table is printed on its own).
Printable pipelines_printable(const std::vector<PipelineDocument>& pipelines) {
  Printable p{.kind = "PipelineList", .fields = {{"pipelines", nlohmann::ordered_json::array()}}};
  for (const auto& doc : pipelines) p.fields["pipelines"].push_back(fields_of(doc));
  p.table = [&pipelines](bool) {
    Table t({"PIPELINE", "STATE", "STEPS", "AGE", "FILE"});
    for (const auto& doc : pipelines)
      t.add_row({doc.value("id", ""), doc.value("state", ""), steps_done(doc),
                 age_of(doc.value("created", "")), doc.value("file", "")});
    return t;
  };
  return p;
}

// The line above the pools: what the cluster costs now and when auto-down takes it, or that it
// is gone.
std::string cluster_line(const ClusterDescription& cluster, const ClusterCost& cost) {
  const std::string where = "cluster " + cluster.name + " (" + cluster.location + "): ";
  if (cluster.missing)
    return where +
           "not found (deleted by its auto-down or by `kinetic down`); `kinetic up` makes it "
           "again and reuses the images";
  return where + "costs " + cluster_cost_text(cost) + " now" +
         (cluster.auto_down ? "; " + auto_down_text(*cluster.auto_down, now_unix()) : "");
}

// Idle and still billing: the reminder kinetic's users most asked for (issue #12).
void warn_if_idle(IOStreams& io, const ClusterDescription& cluster, const ClusterCost& cost,
                  const std::vector<JobStatus>& jobs, const std::string& held_now) {
  if (cluster.missing || std::any_of(jobs.begin(), jobs.end(), [&held_now](const JobStatus& j) {
        return j.state == kPending || j.state == kRunning || is_held(j, held_now);
      }))
    return;
  io.warn("no job is pending or running, and cluster " + cluster.name + " still costs " +
          cluster_cost_text(cost) +
          "; `kinetic down --yes --keep-images` stops it (the next `kinetic up` reuses the "
          "images)" +
          (cluster.auto_down ? std::string()
                             : ", or let it go by itself: `kinetic up --auto-down 2h`"));
}

std::vector<JobStatus> StatusOptions::find_jobs(JobStore& b) const {
  if (!job.empty()) return {require_job(b, job)};
  std::vector<JobStatus> jobs = b.list();
  std::erase_if(jobs, [&](const JobStatus& j) { return !has_labels(j, selector); });
  return jobs;
}

int StatusOptions::run(Factory& f) {
  if (looks_like_pipeline_id(job)) return show_pipeline(f);
  Backend& b = f.backend("status");
  const Settings& s = f.settings();
  const std::vector<JobStatus> jobs = find_jobs(b);
  IOStreams& io = f.io();
  // Prices matter on gke only: a bad setting does not stop a local status.
  const PriceBook prices =
      s.backend == "gke" ? price_book_setting(s.prices.value, s.prices.source) : PriceBook{};
  // The whole picture (no JOB, not -o name): the cluster, if the context has one, and the
  // pipelines, unless -l picks jobs.
  const bool whole = job.empty() && format != OutputFormat::name;
  const std::optional<ClusterDescription> cluster =
      whole ? f.cluster("status").describe() : std::nullopt;
  const ClusterCost cost = cluster ? cluster_cost(cluster->pools, prices) : ClusterCost{};
  const std::optional<Printable> pools =
      cluster ? std::optional(pools_printable(*cluster, prices, cost)) : std::nullopt;
  const std::vector<PipelineDocument> pipelines =
      whole && selector.empty() ? recent_pipelines(f) : std::vector<PipelineDocument>{};
  const Printable pipeline_list = pipelines_printable(pipelines);

  const std::string held_now = rfc3339(now_unix());
  // How much each record holds (cleanup --keep-last and --older-than prune them): wide only,
  // since on gke it is one more listing.
  const std::map<std::string, uint64_t> record_bytes =
      format == OutputFormat::wide ? b.record_bytes() : std::map<std::string, uint64_t>{};
  Printable p{.kind = job.empty() ? "JobList" : "Job",
              .table = jobs_table(jobs, prices, held_now, record_bytes)};
  for (const auto& j : jobs) p.names.push_back(j.id);
  p.print_empty_table = !job.empty();
  if (!job.empty()) {
    p.fields = job_fields(jobs.front());
  } else {
    p.fields = {{"context", s.context.value}, {"backend", s.backend}};
    if (pools) p.fields["cluster"] = pools->fields;
    p.fields["jobs"] = nlohmann::ordered_json::array();
    for (const auto& j : jobs) {
      p.fields["jobs"].push_back(job_fields(j));
      if (j.backend == "gke") p.fields["jobs"].back()["cost_usd"] = cost_of(j, prices);
    }
    // Pipelines below the jobs, when there are any (none: the output is the jobs' alone).
    if (!pipelines.empty()) p.fields["pipelines"] = pipeline_list.fields["pipelines"];
  }
  if (format != OutputFormat::table && format != OutputFormat::wide) {
    print(io, format, p);
    return 0;
  }
  // The table: the cluster's pools first (on a gke context), then the jobs, then the pipelines.
  if (cluster) io.info(cluster_line(*cluster, cost));
  if (cluster && !cluster->missing) {
    print(io, format, *pools);
    std::fputs("\n", io.out);
  }
  if (job.empty())
    io.info("context " + s.context.value + " (backend " + s.backend +
            "): " + std::to_string(jobs.size()) + (jobs.size() == 1 ? " job" : " jobs"));
  print(io, format, p);
  if (!pipelines.empty()) {
    io.info(std::to_string(pipelines.size()) +
            (pipelines.size() == 1 ? " pipeline" : " pipelines") +
            " (`kinetic status PIPELINE-ID` shows its steps)");
    if (!jobs.empty()) std::fputs("\n", io.out);
    print(io, format, pipeline_list);
  }
  if (cluster) warn_if_idle(io, *cluster, cost, jobs, held_now);
  return 0;
}

}  // namespace

void add_status(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* c = root.add_subcommand("status", "Show running and recent jobs and pipelines");
  c->add_option("job", o->job, "Show only this job, or this pipeline's steps");
  c->add_option("-l,--selector", o->selector_flags,
                "Only the jobs labelled KEY=VALUE (`run --label`; repeatable: all must match)");
  c->footer(
      "Examples:\n"
      "  kinetic status\n"
      "  kinetic status job-1a2b3c4d -o json\n"
      "  kinetic status pipe-1a2b3c4d      # its steps: state, reused, duration, exit, job\n"
      "  kinetic status -o name            # job ids, one per line");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
