// Each command validates before it runs (kubectl's Complete/Validate/Run, cli/app.h): input that
// is wrong fails with a usage error naming the flag, and nothing was asked of the backend, no
// credential or cluster was looked up, and nothing was written (no config file, no state).
// The cases are chosen so that a command that checked its input late would fail differently:
// a missing job file, an unknown job, a local context or a missing project would be reported
// instead.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app.h"
#include "core/error.h"
#include "core/fs.h"
#include "unit/cli_sandbox.h"
#include "unit/memory_streams.h"

namespace kinetic::cli {
namespace {

// A backend that records every call and answers none of them.
class RecordingBackend : public Backend {
 public:
  explicit RecordingBackend(std::vector<std::string>& calls) : calls_(calls) {}
  std::string name() const override { return "recording"; }
  std::string stage_context(const fs::path&, const std::string&, Compression, bool*) override {
    return called("stage_context");
  }
  std::optional<std::string> staged_context(const std::string&, Compression) override {
    return called("staged_context");
  }
  void submit(const JobSpec&, const std::map<std::string, std::string>&) override {
    called("submit");
  }
  void stream_logs(const std::string&, const LogRequest&, LogSink&, const Interrupt*) override {
    called("stream_logs");
  }
  JobStatus collect(const JobSpec&) override { return called("collect"), JobStatus{}; }
  void clean(const JobSpec&) override { called("clean"); }
  JobStatus cancel(const std::string&) override { return called("cancel"), JobStatus{}; }
  void request_cancel(const std::string&) override { called("request_cancel"); }
  std::optional<JobStatus> get(const std::string&) override { return called("get"), std::nullopt; }
  std::optional<JobSpec> get_spec(const std::string&) override {
    return called("get_spec"), std::nullopt;
  }
  std::vector<JobStatus> list() override { return called("list"), std::vector<JobStatus>{}; }
  std::vector<CleanupItem> cleanup(const CleanupPolicy&, bool) override {
    return called("cleanup"), std::vector<CleanupItem>{};
  }
  int exec(const ExecRequest&) override { return called("exec"), 0; }

 private:
  std::string called(const char* what) {
    calls_.push_back(what);
    throw Error(Errc::internal, std::string("the backend was called: ") + what);
  }
  std::vector<std::string>& calls_;
};

struct ValidateCase {
  const char* name;
  std::vector<std::string> args;
  int exit_code;
  const char* says;  // a piece of the one-line error
};

class CommandsValidateFirst : public ::testing::TestWithParam<ValidateCase> {};

TEST_P(CommandsValidateFirst, BeforeAnythingIsReadOrChanged) {
  const ValidateCase& c = GetParam();
  if (c.args.front() == "down" && ::isatty(0) == 1)
    GTEST_SKIP() << "down asks for confirmation on a terminal";
  test::CliSandbox sandbox("kinetic-cli-validate-");
  test::CapturedIO captured;
  Factory f(sandbox.env(), captured.io);
  std::vector<std::string> calls;
  f.use_backend(std::make_unique<RecordingBackend>(calls));
  const int code = sandbox.run(f, c.args);

  const std::string err = captured.err();
  EXPECT_EQ(code, c.exit_code) << err;
  EXPECT_NE(err.find(c.says), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_TRUE(calls.empty()) << "the backend was asked for " << calls.front();
  EXPECT_EQ(captured.out(), "");
  // Nothing written: no config file, no state directory, no gcloud config.
  std::vector<std::string> written;
  for (const auto& e : fs::directory_iterator(sandbox.root()))
    written.push_back(e.path().filename().string());
  EXPECT_TRUE(written.empty()) << written.front();
}

const ValidateCase kValidateCases[] = {
    // The job file does not exist: run would say so if it looked before validating.
    {"run_timeout_zero", {"run", "missing.py", "--timeout", "0s"}, 2, "--timeout must be positive"},
    {"run_retries_out_of_range", {"run", "missing.py", "--retries", "101"}, 2, "--retries"},
    {"run_max_preemptions_negative",
     {"run", "missing.py", "--max-preemptions", "-1"},
     2,
     "--max-preemptions"},
    {"run_bad_checkpoint_interval",
     {"run", "missing.py", "--checkpoint-interval", "often"},
     2,
     "--checkpoint-interval"},
    {"run_hold_over_a_day",
     {"run", "missing.py", "--hold-on-failure", "25h"},
     2,
     "--hold-on-failure must be between 1s and 24h"},
    {"run_bad_output_format", {"run", "missing.py", "-o", "name"}, 2, "format 'name'"},
    // No pipeline file: pipeline run would say so if it read it before validating.
    {"pipeline_max_parallel_zero",
     {"pipeline", "run", "--max-parallel", "0"},
     2,
     "--max-parallel must be between 1 and 64"},
    {"pipeline_only_and_from",
     {"pipeline", "run", "--only", "a", "--from", "b"},
     2,
     "--only and --from choose steps two ways"},
    {"pipeline_bad_output_format", {"pipeline", "run", "-o", "name"}, 2, "format 'name'"},
    {"run_data_bad_mode", {"run", "missing.py", "--data", "./d:data:r"}, 2, "did you mean :ro?"},
    {"run_data_same_target_twice",
     {"run", "missing.py", "--data", "./a:data", "--data", "gs://bucket-1:data"},
     2,
     "both mount at data"},
    {"run_grant_without_gcs_data",
     {"run", "missing.py", "--grant", "--data", "./a:data"},
     2,
     "--grant gives the job access to its --data gs:// buckets, and it has none"},
    // An unknown job would be a lookup (not_found) if the id were not checked first.
    {"logs_path_as_job", {"logs", "../../x"}, 2, "../../x"},
    {"status_path_as_job", {"status", "job-1/../x"}, 2, "job-1/../x"},
    {"cancel_one_bad_id_of_two", {"cancel", "job-1a2b3c4d", "x"}, 2, "'x'"},
    {"cleanup_bad_duration", {"cleanup", "--older-than", "a week"}, 2, "--older-than"},
    // The context is local: pool and up would say they need a gke context or a project.
    {"pool_add_min_over_max",
     {"pool", "add", "-a", "v5litepod-4", "--min-nodes", "3", "--max-nodes", "1"},
     2,
     "--min-nodes"},
    {"pool_add_unknown_accelerator", {"pool", "add", "-a", "v5lite-4"}, 2, "v5lite-4"},
    {"up_unknown_accelerator", {"up", "-a", "h100x9"}, 2, "did you mean h100x8"},
    {"down_without_yes_off_a_terminal", {"down"}, 2, "pass --yes"},
    {"config_set_local_backend",
     {"config", "set", "contexts.local.backend", "gke"},
     2,
     "always uses the local backend"},
    {"config_set_malformed_context_key", {"config", "set", "contexts.acme", "x"}, 2, "bad key"},
    {"completion_unknown_shell", {"completion", "powershell"}, 2, "unknown shell"},
};

INSTANTIATE_TEST_SUITE_P(Cli, CommandsValidateFirst, ::testing::ValuesIn(kValidateCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kinetic::cli
