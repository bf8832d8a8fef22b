// kinetic cancel JOB|PIPELINE...: stop jobs, or a pipeline's running steps, and clean up after
// them.
#include <poll.h>

#include "app.h"
#include "core/duration.h"
#include "core/error.h"
#include "job/spec.h"
#include "job_lookup.h"

namespace kinetic::cli {

namespace {

// The steps of DOC in STATE, as "name (job)".
std::vector<std::pair<std::string, std::string>> steps_in(const PipelineDocument& doc,
                                                          const std::string& state) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : doc["steps"])
    if (s.value("state", "") == state) out.emplace_back(s.value("name", ""), s.value("job", ""));
  return out;
}

struct CancelOptions : CommandOptions {
  std::vector<std::string> jobs;

  void validate() const override {
    for (const auto& id : jobs) require_job_or_pipeline_id(id);
  }

  int run(Factory& f) override {
    Backend& b = f.backend("cancel");
    std::unique_ptr<PipelineRecords> records;
    for (const auto& id : jobs) {  // all known before any is touched
      if (!looks_like_pipeline_id(id)) {
        require_job(b, id);
        continue;
      }
      if (!records) records = pipeline_records(f.backend("pipeline"));
      require_pipeline(*records, id);
    }
    for (const auto& id : jobs) {
      if (looks_like_pipeline_id(id)) {
        cancel_pipeline(f, b, *records, id);
        continue;
      }
      JobStatus before = *b.get(id);
      if (is_held(before, rfc3339(now_unix()))) {
        // A job that failed and is held for `exec` (--hold-on-failure): its verdict stands.
        b.cancel(id);
        f.io().info(id + " " + before.state + "; its hold (--hold-on-failure) is released");
        continue;
      }
      if (before.terminal()) {
        f.io().info(id + " already " + before.state);
        continue;
      }
      JobStatus after = b.cancel(id);
      f.io().info(id + " " + after.state);
    }
    return 0;
  }

  // Marks the pipeline cancelled and wakes its runner, which starts no more steps and cancels the
  // running ones as Ctrl-C does; when the runner is gone, cancels them here and finishes the
  // record.
  static void cancel_pipeline(Factory& f, Backend& b, PipelineRecords& records,
                              const std::string& id) {
    const PipelineDocument before = require_pipeline(records, id);
    const std::string state = before.value("state", "");
    if (pipeline_finished(before) && state != "lost") {
      f.io().info(id + " already " + state);
      return;
    }
    const auto running = steps_in(before, "running");
    records.request_cancel(id);
    PipelineDocument after = before;
    if (state == "running" && records.wake_runner(before)) {
      // Each running step's job gets its grace period (SIGTERM, then SIGKILL).
      for (int i = 0; i < 1200; ++i) {
        after = require_pipeline(records, id);
        if (pipeline_finished(after)) break;
        ::poll(nullptr, 0, 50);
      }
      if (!pipeline_finished(after))
        throw Error(Errc::internal, id +
                                        ": its runner was asked to cancel it and has not "
                                        "finished yet; see `kinetic status " +
                                        id + "`");
    } else {
      after = require_pipeline(records, id);
    }
    if (after.value("state", "") == "lost") after = finish_lost(f, b, records, after);
    for (const auto& [name, job] : running) {
      std::string ended;
      for (const auto& s : after["steps"])
        if (s.value("name", "") == name) ended = s.value("state", "");
      f.io().info(id + ": step " + name + " (" + job + ") " + ended);
    }
    f.io().info(id + " " + after.value("state", "") + " (" + std::to_string(running.size()) +
                (running.size() == 1 ? " step" : " steps") + " stopped, " +
                std::to_string(steps_in(after, "skipped").size()) + " skipped)");
  }

  // A pipeline whose runner died: its running steps' jobs cancelled here, its waiting steps
  // skipped, and the record finished as the runner would have.
  static PipelineDocument finish_lost(Factory& f, Backend& b, PipelineRecords& records,
                                      PipelineDocument doc) {
    const std::string now = rfc3339(now_unix());
    for (auto& s : doc["steps"]) {
      const std::string state = s.value("state", "");
      if (state == "waiting") {
        s["state"] = "skipped";
        s["error"] = "the pipeline was cancelled";
        s["finished"] = now;
      } else if (state == "running" && !s.value("job", "").empty()) {
        const std::string job = s.value("job", "");
        try {
          const JobStatus st = b.get(job) ? b.cancel(job) : JobStatus{};
          s["state"] = st.state == kSucceeded   ? "succeeded"
                       : st.state == kCancelled ? "cancelled"
                                                : "failed";
          s["exit_code"] =
              st.exit_code ? nlohmann::ordered_json(*st.exit_code) : nlohmann::ordered_json();
          s["error"] = st.error;
          s["duration_seconds"] = st.duration_seconds;
        } catch (const Error& e) {
          s["state"] = "failed";
          s["error"] = e.what();
        }
        s["finished"] = now;
      }
    }
    doc["state"] = "cancelled";
    doc["exit_code"] = exit_codes::interrupted;
    doc["finished"] = now;
    doc["error"] =
        "its runner stopped unexpectedly (killed, or the machine restarted); cancelled by "
        "`kinetic cancel`";
    const std::string id = doc.value("id", "");
    records.save(id, doc);
    const fs::path out = doc.value("output_dir", "");
    std::error_code ec;
    if (!out.empty() && fs::is_directory(out, ec)) {
      try {
        atomic_write(out / "pipeline.json", doc.dump(2) + "\n", 0644);
      } catch (const Error& e) {
        f.io().warn("kinetic: " + std::string(e.what()));
      }
    }
    return doc;
  }
};

}  // namespace

void add_cancel(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<CancelOptions>();
  CLI::App* c = root.add_subcommand(
      "cancel", "Stop running jobs (or a pipeline's running steps) and clean up after them");
  c->add_option("jobs", o->jobs, "Job ids, or pipeline ids")->required();
  c->footer(
      "A pipeline starts no more steps and its running steps' jobs are cancelled, as Ctrl-C "
      "does to `kinetic pipeline run`.\n\n"
      "Examples:\n  kinetic cancel job-1a2b3c4d\n  kinetic cancel pipe-1a2b3c4d\n"
      "  kinetic cancel $(kinetic status -o name)");
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
