// kinetic wait JOB|PIPELINE... [--timeout D] [--for ended|succeeded]: blocks until the jobs and
// pipelines end, prints each one's verdict as it comes, and exits with the job's exit code, as
// `kubectl wait`, `docker wait` and `gh run watch --exit-status` let a script do. Decisions:
// - It only reads (status records, never the job): stopping it, or its --timeout, leaves every
//   job running. It reads what `status` reads, so what it reports is what `status` says next.
// - It asks every pending id again with a pause growing from 0.5 s to 5 s: a few requests a
//   minute per job, whatever the backend, and one loop for jobs and pipelines alike.
// - Several ids: the exit code is the first failure's in the order given (not the first to
//   fail: a script's `wait $A $B` means the same on every run), 0 when all succeeded.
#include <algorithm>
#include <chrono>
#include <thread>

#include "app.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/spec.h"
#include "job_lookup.h"
#include "pipeline/pipeline_record.h"
#include "render/printer.h"
#include "run/pipeline.h"

namespace kinetic::cli {

namespace {

using ojson = nlohmann::ordered_json;

// One job or pipeline waited for, and how it ended once it has.
struct Waited {
  std::string id;
  std::optional<JobStatus> job;       // a job's record, once it ended
  std::optional<ojson> pipeline_run;  // a pipeline's record, once it ended

  bool is_pipeline() const { return looks_like_pipeline_id(id); }
  bool ended() const { return job || pipeline_run; }

  bool succeeded() const {
    return job ? job->state == kSucceeded : pipeline_run->value("state", "") == "succeeded";
  }

  int exit_code() const {
    if (job) return exit_code_of(*job);
    const ojson& code = pipeline_run->value("exit_code", ojson());
    if (code.is_number_integer()) return code.get<int>();
    return succeeded() ? exit_codes::ok : exit_codes::kinetic;
  }

  // "job-1a2b3c4d failed (exit 3) after 12s: ...", "pipeline pipe-… succeeded (exit 0)".
  std::string line() const {
    if (job) return verdict_line(*job, job->id);
    std::string text = "pipeline " + id + " " + pipeline_run->value("state", "") + " (exit " +
                       std::to_string(exit_code()) + ")";
    const std::string error = pipeline_run->value("error", "");
    return error.empty() ? text : text + ": " + error;
  }
};

// A held job (--hold-on-failure) has its verdict already: it failed, its pod kept for `exec`.
bool job_ended(const JobStatus& st) {
  return st.terminal() || is_held(st, rfc3339(now_unix()));
}

struct WaitOptions : PrintingOptions {
  std::vector<std::string> ids;
  std::string timeout;
  std::string condition = "ended";

  WaitOptions()
      : PrintingOptions(
            {OutputFormat::table, OutputFormat::json, OutputFormat::yaml, OutputFormat::name}) {}

  void validate() const override {
    for (const auto& id : ids) require_job_or_pipeline_id(id);
    if (condition != "ended" && condition != "succeeded")
      throw Error(Errc::usage, "--for " + condition +
                                   ": wait for `ended` (the default) or `succeeded` (stop at the "
                                   "first job that ends otherwise)");
    if (!timeout.empty() && parse_duration(timeout, "--timeout") <= 0)
      throw Error(Errc::usage, "--timeout must be positive, e.g. --timeout 30m");
  }

  int run(Factory& f) override;

 private:
  // Whether W has ended now (and then its record is in W). FIRST: the first look, where an
  // unknown id is an error rather than a wait.
  bool look(Factory& f, Waited& w, bool first);
  void report(Factory& f, const Waited& w) const;
  std::unique_ptr<PipelineRecords> records_;  // where pipelines are kept, once asked
  int finish(Factory& f, const std::vector<Waited>& all, bool timed_out) const;
};

bool WaitOptions::look(Factory& f, Waited& w, bool first) {
  if (w.is_pipeline()) {
    // Made once, on the first pipeline looked at, not at every look of the loop.
    if (!records_) records_ = pipeline_records(f.backend("wait"));
    PipelineRecords* records = records_.get();
    const ojson doc =
        first ? require_pipeline(*records, w.id) : pipeline_view(*records, w.id).value_or(ojson());
    if (doc.is_null())
      throw Error(Errc::not_found, "the record of " + w.id + " is gone (removed while waiting)");
    if (doc.value("state", "running") == "running") return false;
    w.pipeline_run = doc;
    return true;
  }
  Backend& b = f.backend("wait");
  std::optional<JobStatus> st = first ? require_job(b, w.id) : b.get(w.id);
  if (!st)
    throw Error(Errc::not_found, "the record of " + w.id + " is gone (removed while waiting)");
  if (!job_ended(*st)) return false;
  w.job = std::move(*st);
  return true;
}

// As each one ends: its verdict line (table), its id (-o name); -o json and yaml print one
// document once the waiting is over.
void WaitOptions::report(Factory& f, const Waited& w) const {
  const IOStreams& io = f.io();
  if (format != OutputFormat::table && format != OutputFormat::name) return;
  const std::string text = (format == OutputFormat::name ? w.id : w.line()) + "\n";
  std::fwrite(text.data(), 1, text.size(), io.out);
  std::fflush(io.out);
}

int WaitOptions::finish(Factory& f, const std::vector<Waited>& all, bool timed_out) const {
  int code = exit_codes::ok;
  ojson jobs = ojson::array(), pipelines = ojson::array(), waiting = ojson::array();
  for (const auto& w : all) {
    if (!w.ended()) {
      waiting.push_back(w.id);
      continue;
    }
    if (code == exit_codes::ok && !w.succeeded()) code = w.exit_code();
    if (w.job) {
      ojson item = ojson::parse(to_json(*w.job).dump());
      item.erase("schema_version");  // the document carries it
      jobs.push_back(std::move(item));
    } else {
      ojson item = *w.pipeline_run;
      item.erase("kind");
      item.erase("schema_version");
      pipelines.push_back(std::move(item));
    }
  }
  if (timed_out) code = exit_codes::timeout;
  if (format == OutputFormat::json || format == OutputFormat::yaml) {
    Printable p{.kind = "WaitResult",
                .fields = {{"exit_code", code},
                           {"timed_out", timed_out},
                           {"jobs", jobs},
                           {"pipelines", pipelines},
                           {"waiting", waiting}}};
    print(f.io(), format, p);
  }
  if (timed_out) {
    std::string still;
    for (const auto& id : waiting) still += (still.empty() ? "" : " ") + id.get<std::string>();
    f.io().warn("kinetic: --timeout " + timeout + " passed with " + still +
                " still running; it goes on (`kinetic wait " + still + "` waits again)");
  }
  return code;
}

int WaitOptions::run(Factory& f) {
  std::vector<Waited> all;
  for (const auto& id : ids) {
    if (std::none_of(all.begin(), all.end(), [&](const Waited& w) { return w.id == id; }))
      all.push_back({.id = id});
  }
  using clock = std::chrono::steady_clock;
  const auto deadline =
      timeout.empty() ? clock::time_point::max()
                      : clock::now() + std::chrono::seconds(parse_duration(timeout, "--timeout"));
  double pause_seconds = 0.5;
  for (bool first = true;; first = false) {
    bool pending = false;
    for (auto& w : all) {
      if (w.ended()) continue;
      if (!look(f, w, first)) {
        pending = true;
        continue;
      }
      report(f, w);
      if (condition == "succeeded" && !w.succeeded()) return finish(f, all, false);
    }
    if (!pending) return finish(f, all, false);
    const auto now = clock::now();
    if (now >= deadline) return finish(f, all, true);
    const auto pause =
        std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(pause_seconds));
    std::this_thread::sleep_for(std::min(pause, deadline - now));
    pause_seconds = std::min(pause_seconds * 1.5, 5.0);
  }
}

}  // namespace

void add_wait(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<WaitOptions>();
  CLI::App* c = root.add_subcommand(
      "wait", "Wait for jobs or pipelines to end, and exit with the job's exit code");
  c->add_option("ids", o->ids, "Job ids or pipeline ids (see `kinetic status`)")->required();
  c->add_option("--timeout", o->timeout,
                "Stop waiting after this long, e.g. 30m (exit 124; the jobs go on)");
  c->add_option("--for", o->condition,
                "ended (default): until every one has ended; succeeded: stop at the first that "
                "ends otherwise");
  c->footer(
      "Blocks until each job (or pipeline) has ended, printing its verdict line on stdout as it "
      "comes (-o name: its id; -o json or yaml: one WaitResult document at the end), then exits "
      "with its exit code: for several, the first failure's in the order given. It only reads "
      "their records: stopping it, or --timeout, leaves them running. What it reports is what "
      "`kinetic status` says from then on.\n\n"
      "Examples:\n"
      "  JOB=$(kinetic run train.py --detach)\n"
      "  kinetic wait $JOB && kinetic collect $JOB\n"
      "  kinetic wait $A $B $C --for succeeded --timeout 2h\n"
      "  kinetic wait $PIPE -o json | jq .exit_code\n"
      "\nExit code: the job's own (0 succeeded; 124 timed out, 125 lost, 126 could not start, "
      "130 cancelled); 124 when --timeout passed first; 1 no such job.");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
