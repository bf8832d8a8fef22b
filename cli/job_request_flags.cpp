#include "job_request_flags.h"

#include "job/budget.h"
#include "job/data_mount.h"
#include "job/spec.h"

namespace kinetic::cli {

void JobRequestFlags::complete(RunRequest& req) const {
  if (!max_cost.empty()) req.max_cost_usd = parse_usd(max_cost, "--max-cost");
  req.data.clear();
  for (const auto& value : data) req.data.push_back(parse_data_flag(value));
  req.labels.clear();
  for (const auto& value : labels) req.labels.push_back(parse_label(value, "--label"));
}

}  // namespace kinetic::cli

namespace kinetic::cli {

void add_job_request_options(CLI::App* c, RunRequest& req, JobRequestFlags& flags,
                             const std::string& noun) {
  c->add_option("-a,--accelerator", req.accelerator,
                "Accelerator, e.g. v5litepod-1, v6e-8, l4, a100x8 (default cpu; see `kinetic "
                "accelerators`)");
  c->add_flag("--spot", req.spot, "Run on Spot capacity (same as the :spot suffix)");
  c->add_option("--requirements", req.requirements,
                "requirements.txt or pyproject.toml (default: found next to FILE)");
  c->add_option(
      "--image", req.image,
      "Run in this prebuilt image (used as is; it needs python3) instead of building one");
  c->add_option(
      "--label", flags.labels,
      "Mark the " + noun + " KEY=VALUE (repeatable); `kinetic status -l KEY=VALUE` selects by it");
  c->add_option("--python", req.python,
                "Python version of the built image, e.g. 3.12 (default: requires-python, else "
                "the accelerator's default)");
  c->add_option("--context-dir", req.context_dir,
                "Directory shipped with the " + noun +
                    " (default: nearest ancestor of FILE with .git, requirements.txt or "
                    "pyproject.toml)");
  c->add_option("-e,--env", req.env,
                "Set K from your environment (preferred: the value never shows in `ps`), or K=V "
                "(repeatable; sent as a secret, cleared from kinetic's own arguments)");
  c->add_option("--capture-env", req.capture_env,
                "Pass your variables matching GLOB, e.g. 'KAGGLE_*' (repeatable; never host "
                "variables such as PATH, nor CLOUDSDK_*, STORAGE_EMULATOR_HOST, GCE_METADATA_*, "
                "GOOGLE_APPLICATION_CREDENTIALS, proxy (*_PROXY) and CA bundle variables or "
                "PYTHONHOME unless named exactly)");
  c->add_option("--data", flags.data,
                "SRC:DST[:ro|:rw]: show a local directory or gs://BUCKET[/PATH] to the " + noun +
                    " at DST, relative to its working directory or absolute (repeatable; "
                    "read-only unless :rw, which gs:// alone takes; see README \"Data\")");
  c->add_flag("--grant", req.grant,
              "Grant the " + noun +
                  "'s pods read access (read-write with :rw) to the --data gs:// buckets that "
                  "are not the jobs bucket (default: say how)");
}

}  // namespace kinetic::cli
