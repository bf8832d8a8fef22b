// kinetic pipeline run [-f FILE] [--only STEP] [--from STEP] [--force STEP]: a pipeline file's
// steps as jobs, in dependency order, reusing the steps whose inputs are unchanged
// (lib/pipeline/pipeline_runner.h, docs/pipelines.md).
#include "app.h"
#include "config/paths.h"
#include "core/error.h"
#include "job_lookup.h"
#include "pipeline/pipeline_runner.h"

namespace kinetic::cli {

namespace {

struct PipelineRunOptions : CommandOptions {
  PipelineRequest req;

  void complete(Factory& f) override {
    req.format = f.format({OutputFormat::table, OutputFormat::json, OutputFormat::yaml});
  }

  void validate() const override {
    if (req.max_parallel < 1 || req.max_parallel > 64)
      throw Error(Errc::usage, "--max-parallel must be between 1 and 64, e.g. --max-parallel 2");
    if (req.file.empty()) throw Error(Errc::usage, "-f needs a file, e.g. -f kinetic.yaml");
    if (!req.only.empty() && !req.from.empty())
      throw Error(Errc::usage, "--only and --from choose steps two ways; pass one of them");
  }

  int run(Factory& f) override {
    // Said before a gke backend would look up credentials or a cluster.
    require_pipeline_backend(f.settings().backend);
    Backend& backend = f.backend("pipeline run");
    RunEnvironment env{f.settings(), f.env(),           f.io(),   f.state_dir(),
                       f.cwd(),      home_dir(f.env()), &backend, nullptr};
    auto records = pipeline_records(backend);
    return run_pipeline_file(req, env, *records);
  }
};

}  // namespace

void add_pipeline(CLI::App& root, Factory&, Action& action) {
  CLI::App* c = root.add_subcommand(
      "pipeline", "Run a pipeline: named steps (jobs) whose outputs feed the steps that need them");
  c->require_subcommand(1, 1);
  c->footer(
      "A pipeline file (kinetic.yaml) maps each step's name to the fields of `kinetic run` "
      "(file, args, accelerator, spot, env, capture-env, timeout, retries) and the steps it "
      "needs, e.g. `steps: {prep: {file: prep.py}, train: {file: train.py, needs: [prep]}}`; "
      "see docs/pipelines.md.\n\n"
      "Examples:\n"
      "  kinetic pipeline run\n"
      "  kinetic pipeline run -f examples/pipeline/kinetic.yaml");
  auto o = std::make_shared<PipelineRunOptions>();
  CLI::App* run = c->add_subcommand(
      "run", "Run the steps in dependency order, reusing those whose inputs are unchanged");
  run->add_option("-f,--file", o->req.file, "The pipeline file (default kinetic.yaml)");
  run->add_option("--only", o->req.only,
                  "Run this step alone, its inputs from the last run (repeatable)");
  run->add_option("--from", o->req.from,
                  "Run this step and every step that needs it, the others' outputs from the "
                  "last run");
  run->add_option("--force", o->req.force,
                  "Run this step even if its outputs are cached (repeatable)");
  run->add_option("--max-parallel", o->req.max_parallel,
                  "Run at most N steps at the same time (default 4)");
  run->add_flag("--detach", o->req.detach,
                "Check and plan every step, then run them in the background (on gke: a runner "
                "Job in the cluster, with the laptop closed) and print the pipeline's id");
  run->footer(
      "Each step's outputs are the inputs of the steps that need it, in "
      "KINETIC_INPUT_DIR/STEP/; all of them land in ./kinetic-out/PIPELINE-ID/STEP/. A step "
      "whose key (the project folder's hash, the image, its file, args, accelerator, the env "
      "written in the file and the keys of the steps it needs) is unchanged is reused, so a "
      "second run resumes from a failure.\n\n"
      "Examples:\n"
      "  kinetic pipeline run\n"
      "  kinetic pipeline run -f examples/pipeline/kinetic.yaml -o json\n"
      "  kinetic pipeline run --from train          # prep's outputs from the last run\n"
      "  kinetic pipeline run --force evaluate\n"
      "  kinetic pipeline run --detach           # then: kinetic status PIPELINE-ID\n"
      "\nExit code: 0 when every step succeeded or was reused, else the first failed step's "
      "(as `kinetic run`'s); 2 for a malformed pipeline file. With --detach: 0 once the steps "
      "run in the background (`kinetic status`, `logs --step`, `cancel` take the pipeline's "
      "id).");
  on_parse(run, action, o);
}

}  // namespace kinetic::cli
