// kinetic status [JOB]: where jobs stand, as a table or -o json|yaml|name.
#include "app.h"
#include "core/duration.h"
#include "core/error.h"
#include "job_lookup.h"

namespace kinetic::cli {

namespace {

struct StatusOptions {
  std::string job;
};

std::string exit_text(const JobStatus& s) {
  return s.exit_code ? std::to_string(*s.exit_code) : "-";
}

std::string duration_text(const JobStatus& s) {
  if (!s.terminal()) {
    std::string age = age_of(s.started.empty() ? s.created : s.started);
    return age.empty() ? "-" : age;
  }
  return format_duration(s.duration_seconds);
}

int run_status(const StatusOptions& o, Factory& f) {
  const auto format = f.format({OutputFormat::table, OutputFormat::wide, OutputFormat::json,
                                OutputFormat::yaml, OutputFormat::name});
  Backend& b = f.backend("status");
  const Settings& s = f.settings();
  std::vector<JobStatus> jobs;
  if (!o.job.empty()) {
    jobs.push_back(require_job(b, o.job));
  } else {
    jobs = b.list();
  }
  IOStreams& io = f.io();
  switch (format) {
    case OutputFormat::json:
    case OutputFormat::yaml: {
      nlohmann::ordered_json doc;
      if (!o.job.empty()) {
        doc = nlohmann::ordered_json::parse(to_json(jobs.front()).dump());
      } else {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const auto& j : jobs) list.push_back(nlohmann::ordered_json::parse(to_json(j).dump()));
        doc = {{"context", s.context.value}, {"backend", s.backend}, {"jobs", list}};
      }
      print_document(io.out, format, doc);
      return 0;
    }
    case OutputFormat::name:
      for (const auto& j : jobs) std::fprintf(io.out, "%s\n", j.id.c_str());
      return 0;
    default:
      break;
  }
  const bool wide = format == OutputFormat::wide;
  std::vector<std::string> headers = {"JOB", "STATE",    "EXIT", "ACCELERATOR",
                                      "AGE", "DURATION", "FILE"};
  if (wide) {
    headers.push_back("OUTPUT");
    headers.push_back("ERROR");
  }
  Table t(headers);
  for (const auto& j : jobs) {
    std::vector<std::string> row = {
        j.id, j.state, exit_text(j), j.accelerator, age_of(j.created), duration_text(j), j.file};
    if (wide) {
      row.push_back(j.output_dir);
      row.push_back(j.error.empty() ? "-" : j.error);
    }
    t.add_row(row);
  }
  if (o.job.empty())
    io.info("context " + s.context.value + " (backend " + s.backend +
            "): " + std::to_string(jobs.size()) + (jobs.size() == 1 ? " job" : " jobs"));
  if (!t.empty() || !o.job.empty()) {
    std::string text = t.render(io.out_tty);
    std::fwrite(text.data(), 1, text.size(), io.out);
  }
  return 0;
}

}  // namespace

void add_status(CLI::App& root, Factory& f, Action& action) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* c = root.add_subcommand("status", "Show running and recent jobs");
  c->add_option("job", o->job, "Show only this job");
  c->footer(
      "Examples:\n"
      "  kinetic status\n"
      "  kinetic status job-1a2b3c4d -o json\n"
      "  kinetic status -o name            # job ids, one per line");
  c->callback([o, &f, &action] { action = [o, &f] { return run_status(*o, f); }; });
}

}  // namespace kinetic::cli
