// kinetic logs JOB [-f] | PIPELINE --step STEP [-f]: a job's output, following it while it runs;
// a pipeline's step is the job its record names.
#include <poll.h>

#include <algorithm>

#include "app.h"
#include "backend/stream_sink.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/strings.h"
#include "job/spec.h"
#include "job_lookup.h"

namespace kinetic::cli {

namespace {

std::string comma_list(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

struct LogsOptions : CommandOptions {
  std::string job;
  std::string step;
  bool follow = false;
  bool all_hosts = false;
  long tail = -1;  // --tail N; -1: the whole log
  std::string since;

  void validate() const override {
    require_job_or_pipeline_id(job);
    if (tail < -1) throw Error(Errc::usage, "--tail must be 0 or more lines, e.g. --tail 100");
    if (!since.empty() && tail >= 0)
      throw Error(Errc::usage, "--since and --tail each say where the log starts: pass one");
    if (!since.empty()) since_unix();
    if (!step.empty() && !looks_like_pipeline_id(job))
      throw Error(Errc::usage, "--step names a step of a pipeline; " + job +
                                   " is a job: `kinetic logs " + job + "`");
  }

  int run(Factory& f) override {
    std::string id = job;
    if (looks_like_pipeline_id(job)) id = step_job(f);
    Backend& b = f.backend("logs");
    require_job(b, id);
    StreamSink sink(f.io());
    LogRequest request{.follow = follow, .all_hosts = all_hosts, .tail = tail};
    if (!since.empty()) request.since = since_unix();
    b.stream_logs(id, request, sink, nullptr);
    return 0;
  }

  // --since as a Unix time: an RFC 3339 UTC time, or a duration back from now (kubectl's
  // --since-time and --since in one flag).
  int64_t since_unix() const {
    if (since.find('T') != std::string::npos) {
      const double t = parse_rfc3339(since);
      if (t <= 0)
        throw Error(Errc::usage, "--since " + since +
                                     " is not an RFC 3339 UTC time; pass e.g. "
                                     "2026-11-27T09:30:00Z, or a duration such as 10m or 2h");
      return static_cast<int64_t>(t);
    }
    return static_cast<int64_t>(now_unix()) - parse_duration(since, "--since");
  }

  // The job that runs (or ran) --step of pipeline JOB; with -f, once it has started.
  std::string step_job(Factory& f) {
    auto records = pipeline_records(f.backend("pipeline"));
    PipelineDocument doc = require_pipeline(*records, job);
    std::vector<std::string> names;
    for (const auto& s : doc["steps"]) names.push_back(s.value("name", ""));
    if (step.empty())
      throw Error(Errc::usage, job + " has steps " + comma_list(names) +
                                   ": pass one with --step, e.g. `kinetic logs " + job +
                                   " --step " + names.front() + "`");
    if (std::find(names.begin(), names.end(), step) == names.end()) {
      const auto near = closest_matches(step, names);
      throw Error(Errc::usage, "no step '" + step + "' in " + job +
                                   (near.empty() ? "" : "; did you mean " + join_or(near) + "?") +
                                   " (its steps: " + comma_list(names) + ")");
    }
    for (;;) {
      nlohmann::ordered_json s;
      for (const auto& each : doc["steps"])
        if (each.value("name", "") == step) s = each;
      const std::string state = s.value("state", "");
      if (state == "skipped")
        throw Error(Errc::not_found, "step " + step + " of " + job + " was skipped (" +
                                         s.value("error", "") + "): it has no logs");
      if (state != "waiting" && !s.value("job", "").empty()) return s.value("job", "");
      if (pipeline_finished(doc))
        throw Error(Errc::not_found, "step " + step + " of " + job +
                                         " never started (the pipeline " + doc.value("state", "") +
                                         ")");
      if (!follow)
        throw Error(Errc::not_found, "step " + step + " of " + job +
                                         " has not started yet; `kinetic logs " + job + " --step " +
                                         step + " -f` waits for it");
      ::poll(nullptr, 0, 100);  // the record is rewritten when the step starts
      doc = require_pipeline(*records, job);
    }
  }
};

}  // namespace

void add_logs(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<LogsOptions>();
  CLI::App* c = root.add_subcommand(
      "logs", "Print a job's (or a pipeline step's) logs, following them with -f");
  c->add_option("job", o->job, "Job id, or pipeline id with --step (see `kinetic status`)")
      ->required();
  c->add_option("--step", o->step, "The pipeline's step whose job's logs to print");
  c->add_flag("-f,--follow", o->follow,
              "Keep streaming until the job ends (a step not started yet: wait for it)");
  c->add_option("--tail", o->tail,
                "Only the last N lines of the log so far (with -f, then what comes after)");
  c->add_option("--since", o->since,
                "Only what the job wrote since a time: a duration back from now (10m, 2h, 1d) "
                "or an RFC 3339 UTC time (2026-11-27T09:30:00Z)");
  c->add_flag("--all-hosts", o->all_hosts,
              "Every host of a multi-host slice, each line prefixed [host N] (default: host 0)");
  c->footer(
      "Examples:\n"
      "  kinetic logs job-1a2b3c4d\n"
      "  kinetic logs -f job-1a2b3c4d\n"
      "  kinetic logs --tail 20 -f job-1a2b3c4d\n"
      "  kinetic logs --since 1h job-1a2b3c4d\n"
      "  kinetic logs --all-hosts job-1a2b3c4d   # a v5litepod-16's four hosts\n"
      "  kinetic logs pipe-1a2b3c4d --step train -f");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
