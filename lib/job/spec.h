// A job as submitted: what runs, where, with what. Serialized as the job's spec object; it never
// holds secret values (only the names of the variables that come from the job's Secret).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/duration.h"  // rfc3339, now_unix: declared there, used with specs
#include "job/data_mount.h"

namespace kinetic {

// How a job file is started (decided by its extension).
enum class JobKind { python, shell, cpp, executable };
std::string_view job_kind_name(JobKind k);
JobKind job_kind_for(const std::string& file_name);

struct JobSpec {
  std::string id;    // "job-1a2b3c4d"
  std::string file;  // job file, relative to the context root ('/'-separated)
  JobKind kind = JobKind::python;
  std::vector<std::string> args;  // after `--`
  std::string workdir;            // working directory relative to the context root ("" = root)
  std::string accelerator;        // canonical catalog name, ":spot" suffixed when spot
  std::string backend;            // "local" or "gke"
  std::string context_sha256;
  std::string context_uri;  // where the staged context lives
  std::string image;        // image reference (gke) or environment tag (local)
  std::vector<std::pair<std::string, std::string>> env;  // plain variables
  std::vector<std::string> secret_env;                   // names only
  // --data: what appears where in the job, and where each was staged (job/data_mount.h).
  std::vector<DataMount> data;
  // The Job's deadline: --timeout, or what --max-cost buys when that is sooner.
  std::optional<long> timeout_seconds;
  // --max-cost (USD) and the deadline it bought (job/budget.h); unset without one.
  std::optional<double> max_cost_usd;
  std::optional<long> budget_seconds;
  // The slice's price per hour (USD) the run was priced at, 0 when unpriced (local): what a
  // --notify summary costs the job at, wherever it is sent from.
  double price_per_hour = 0;
  // --hold-on-failure: a run that fails for good keeps its pod (locally, its environment) this
  // many seconds for `kinetic exec`, then ends and is cleaned up as usual. 0: not held.
  long hold_on_failure_seconds = 0;
  int retries = 0;
  // The run record (docs/run-record.md): preemptions tolerated before the run is given up;
  // how often the bootstrap saves changed checkpoints and uploads the log.
  int max_preemptions = 10;
  double checkpoint_sync_seconds = 10;
  double log_upload_seconds = 5;
  // A foreground run: the pod stops the job when no kinetic process has refreshed the job's
  // follower object for this long (the CLI was killed). 0: detached, it runs on its own.
  double follower_timeout_seconds = 0;
  bool keep = false;
  bool detached = false;
  std::string output_dir;  // where outputs are delivered (absolute path)
  // A pipeline step's inputs (docs/pipelines.md): the name of each step it needs and where that
  // step's outputs are (a directory on local). The job finds them at KINETIC_INPUT_DIR/NAME/.
  // Empty for a plain `run`, and then absent from spec.json.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string created;  // RFC 3339 UTC
};

nlohmann::json to_json(const JobSpec& spec);
// spec.json's bytes as uploaded: the pod checks them against their sha256, which travels in the
// Job's environment (KINETIC_SPEC_SHA256).
std::string spec_document(const JobSpec& spec);
JobSpec job_spec_from_json(const nlohmann::json& j);

// A fresh job id: "job-" + 8 random lowercase hex digits.
std::string new_job_id();
// True for strings shaped like a job id.
bool looks_like_job_id(const std::string& s);
// True for PREFIX followed by 8 lowercase hex digits: a job's id ("job-") or a pipeline's
// ("pipe-").
bool looks_like_id(std::string_view s, std::string_view prefix);
// A job id the user typed, checked before it reaches a path, an object name or a URL:
// Error(Errc::usage) naming it (and "did you mean job-ID?" for a bare ID) otherwise.
void require_job_id(const std::string& id);

}  // namespace kinetic
