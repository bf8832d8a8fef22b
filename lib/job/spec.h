// A job as submitted: what runs, where, with what. Serialized as the job's spec object; it never
// holds secret values (only the names of the variables that come from the job's Secret).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/duration.h"  // rfc3339, now_unix: declared there, used with specs
#include "job/data_mount.h"
#include "job/debug_spec.h"

namespace kinetic {

// How a job file is started (decided by its extension); `function` is a pickled Python call
// (`run --function`, docs/python.md) started by the embedded function runner.
enum class JobKind { python, shell, cpp, executable, function };
std::string_view job_kind_name(JobKind k);
JobKind job_kind_for(const std::string& file_name);

// A function job's call (`run --function CALL`, docs/python.md): the call file the Python package
// wrote, staged with the job's record (gke: gs://BUCKET/jobs/ID/function.pkl beside the runner's
// source, function_runner.py; local: STATE/jobs/ID/function.pkl), each checked in the job
// against its sha256 here, as the context is.
struct FunctionCall {
  std::string name;           // the function's module.qualname, from the call's header
  std::string sha256;         // of the call file
  long long bytes = 0;        // its size
  std::string runner_sha256;  // of the function runner's source the job runs it with
  // Where the call file is on this machine until submit stages it: not part of the record.
  std::string local_path;
};

// The label every server carries, its value the port: `serve ls` (and on gke auto-down) finds
// servers among the jobs from their status alone, without reading each one's spec.
inline constexpr std::string_view kServeLabel = "kinetic.dev/serve";
// The variable that tells the server which port to listen on (--port).
inline constexpr std::string_view kServePortVariable = "KINETIC_SERVE_PORT";

// `kinetic serve` (docs/serving.md): the job is a long-running server, ready once PORT accepts a
// connection. IDLE_STOP_SECONDS (0: never) stops it after that long without a connection to PORT.
struct ServeSpec {
  int port = 0;
  long idle_stop_seconds = 0;
};

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
  // What the deadline counts from (--timeout-from, docs/capacity.md): empty, the submit (a wait
  // for capacity counts); "start", the job's first start on a node (the bootstrap keeps it, and
  // the Job has no activeDeadlineSeconds). Absent from spec.json when empty.
  std::string timeout_from;
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
  // `run --priority`: low, normal or high, the job's turn in a Kueue queue (backend/gke/kueue.h);
  // empty: normal. Absent from spec.json when empty.
  std::string priority;
  // Multislice (`run --slices N`, docs/multihost.md): N slices of the accelerator, one JobSet
  // replica each. Absent from spec.json when 1.
  int slices = 1;
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
  // A function job's call (kind == function); absent from spec.json otherwise.
  std::optional<FunctionCall> function;
  // --label K=V: the user's own marks on the job (`status -l K=V` selects by them; the Python
  // API's batches are a label). Absent from spec.json when there are none.
  std::vector<std::pair<std::string, std::string>> labels;
  // `run --debug`: the job starts under debugpy (job/debug_spec.h); absent from spec.json
  // otherwise.
  std::optional<DebugSpec> debug;
  // A server's (`kinetic serve`); absent from spec.json for every other job.
  std::optional<ServeSpec> serve;
  std::string created;  // RFC 3339 UTC
};

nlohmann::json to_json(const JobSpec& spec);
// spec.json's bytes as uploaded: the pod checks them against their sha256, which travels in the
// Job's environment (KINETIC_SPEC_SHA256).
std::string spec_document(const JobSpec& spec);
JobSpec job_spec_from_json(const nlohmann::json& j);

// One --label value, K=V: K is 1-63 characters of [A-Za-z0-9._/-] starting with a letter or digit,
// V up to 256 characters of UTF-8 without control characters. FLAG names the option in errors.
// Throws Error(Errc::usage) naming the value and the rule it breaks.
std::pair<std::string, std::string> parse_label(std::string_view value, std::string_view flag);

// Labels as a JSON object (spec.json, status.json, the Job's annotation), and back (entries
// that are not text are dropped).
nlohmann::json labels_json(const std::vector<std::pair<std::string, std::string>>& labels);
std::vector<std::pair<std::string, std::string>> labels_from_json(const nlohmann::json& j);

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
