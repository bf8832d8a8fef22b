// The run pipeline's journey (lib/run/pipeline.h) against an in-memory Backend: each step in
// order, the job's exit code passed through, and a step that fails stopping the journey there
// with its error and nothing left in the state directory's tmp/ (issue #11 point 2).
#include "job/budget.h"
#include "job/catalog.h"
#include "run/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/duration.h"
#include "core/error.h"
#include "core/fs.h"
#include "run/serve.h"
#include "unit/memory_streams.h"
#include "unit/recording_sink.h"

namespace kinetic {
namespace {

// A Backend that keeps everything in memory, records each call, and throws at FAIL_AT.
class FakeBackend : public Backend {
 public:
  std::vector<std::string> calls;
  std::string fail_at;  // a step name below: it throws Error(fail_code)
  Errc fail_code = Errc::api;
  JobStatus outcome;                          // what collect reports
  std::map<std::string, std::string> staged;  // sha256 -> uri
  std::vector<Compression> compressions;      // of each archive staged, in order
  std::optional<JobSpec> submitted;
  std::optional<ImageRecipe> recipe;  // what prepare_image was asked to build
  std::map<std::string, std::string> secrets;
  std::string streamed = "hello from the job\n";

  bool copies = false;  // copies_data_dirs(): a local --data directory is staged as a context
  bool serves = false;  // runs_servers(): `kinetic serve` runs on it

  std::string name() const override { return "fake"; }
  BackendCapabilities capabilities() const override {
    return {.gzip_for_prebuilt_images = true, .copies_data_dirs = copies, .runs_servers = serves};
  }
  std::string prepare_image(const ImageRecipe& recipe) override {
    step("prepare_image");
    this->recipe = recipe;
    return "registry.example/" + recipe.tag;
  }
  std::string stage_context(const fs::path& archive, const std::string& sha256,
                            Compression compression, bool* uploaded) override {
    step("stage_context");
    EXPECT_TRUE(fs::exists(archive)) << "the archive is gone before it was staged";
    EXPECT_EQ(archive.string().ends_with(archive_extension(compression)), true) << archive;
    compressions.push_back(compression);
    *uploaded = true;
    return staged[sha256] = "mem://contexts/" + sha256;
  }
  std::optional<std::string> staged_context(const std::string& sha256, Compression) override {
    auto it = staged.find(sha256);
    if (it == staged.end()) return std::nullopt;
    return it->second;
  }
  void submit(const JobSpec& spec, const std::map<std::string, std::string>& values) override {
    step("submit");
    submitted = spec;
    secrets = values;
  }
  void stream_logs(const std::string&, const LogRequest&, LogSink& sink,
                   const Interrupt*) override {
    step("stream_logs");
    sink.write(LogStream::out, streamed);
  }
  JobStatus collect(const JobSpec& spec) override {
    step("collect");
    JobStatus st = outcome;
    st.id = spec.id;
    return st;
  }
  void clean(const JobSpec&) override { step("clean"); }
  JobStatus cancel(const std::string&) override { return {}; }
  void request_cancel(const std::string&) override { calls.push_back("request_cancel"); }
  std::optional<JobStatus> get(const std::string&) override { return std::nullopt; }
  std::optional<JobSpec> get_spec(const std::string&) override { return std::nullopt; }
  std::vector<JobStatus> list() override { return {}; }
  std::vector<CleanupItem> cleanup(const CleanupPolicy&, bool) override { return {}; }
  int exec(const ExecRequest&) override { return 0; }

 private:
  void step(const std::string& name) {
    calls.push_back(name);
    if (name == fail_at) throw Error(fail_code, name + " failed (injected)");
  }
};

class Pipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    project = root.path() / "proj";
    make_dirs(project);
    atomic_write(project / "train.py", "print('hi')\n");
    atomic_write(project / "requirements.txt", "numpy==1.26.4\n");
    settings.context.value = "test";
    settings.backend = "fake";
    backend.outcome.state = kSucceeded;
    backend.outcome.exit_code = 0;
    request.file = "train.py";
  }

  int run() {
    RunEnvironment env{settings, vars,        io.io,   root.path() / "state",
                       project,  root.path(), &backend};
    env.now = clock;
    return run_pipeline(request, env);
  }

  // A pipeline step's way through the journey: prepare_job, then run_prepared into SINK.
  JobStatus run_step(test::RecordingSink& sink) {
    RunEnvironment env{settings, vars,        io.io,   root.path() / "state",
                       project,  root.path(), &backend};
    PreparedJob job = prepare_job(request, env);
    return run_prepared(job, env, sink, nullptr);
  }

  // The error ATTEMPT throws; a recorded failure (and an internal error) when it returns.
  template <class Attempt>
  static Error error_of(Attempt attempt) {
    try {
      attempt();
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "no error";
    return Error(Errc::internal, "no error");
  }
  Error step_failure() {
    return error_of([this] {
      test::RecordingSink sink;
      run_step(sink);
    });
  }
  Error failure() {
    return error_of([this] { run(); });
  }

  // What is left under the state directory's tmp/ (where packing happens).
  std::vector<std::string> leftovers() const {
    std::vector<std::string> left;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root.path() / "state" / "tmp", ec))
      left.push_back(e.path().filename().string());
    return left;
  }

  TempDir root{fs::temp_directory_path(), "kinetic-pipeline-test-"};
  fs::path project;
  Settings settings;
  Env vars = Env::from_map({{"SECRET_TOKEN", "s3cr3t"}});
  test::CapturedIO io;  // the pipeline's stdout and stderr
  FakeBackend backend;
  RunRequest request;
  double (*clock)() = now_unix;
};

TEST_F(Pipeline, EachStepInOrderAndTheJobsOutputAndCode) {
  backend.outcome.state = kFailed;
  backend.outcome.exit_code = 3;
  request.env = {"SECRET_TOKEN"};
  EXPECT_EQ(run(), 3);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"prepare_image", "stage_context", "submit",
                                                     "stream_logs", "collect", "clean"}));
  EXPECT_EQ(io.out(), "hello from the job\n");
  ASSERT_TRUE(backend.submitted);
  const JobSpec& spec = *backend.submitted;
  EXPECT_EQ(spec.file, "train.py");
  EXPECT_EQ(spec.image.rfind("registry.example/", 0), 0u) << spec.image;
  EXPECT_EQ(spec.context_uri, "mem://contexts/" + spec.context_sha256);
  // A secret travels by name in the spec and by value only to submit.
  EXPECT_EQ(spec.secret_env, std::vector<std::string>{"SECRET_TOKEN"});
  EXPECT_EQ(backend.secrets.at("SECRET_TOKEN"), "s3cr3t");
  EXPECT_EQ(io.err().find("s3cr3t"), std::string::npos);
  EXPECT_TRUE(leftovers().empty());
}

TEST_F(Pipeline, ABudgetBecomesTheDeadlineWhenItIsSoonerThanTheTimeout) {
  request.accelerator = "v5litepod-1";
  const double price = resolve_accelerator("v5litepod-1").price_per_hour;
  request.max_cost_usd = price;  // one hour's worth
  request.timeout_seconds = 7200;
  ASSERT_EQ(run(), 0);
  ASSERT_TRUE(backend.submitted);
  EXPECT_EQ(backend.submitted->max_cost_usd, price);
  EXPECT_EQ(backend.submitted->budget_seconds, 3600);
  EXPECT_EQ(backend.submitted->timeout_seconds, 3600);
  EXPECT_NE(io.err().find("kinetic: budget " + format_usd(price) + " buys 1h00m of v5litepod-1"),
            std::string::npos)
      << io.err();
  // A sooner --timeout stays the deadline; the budget is still recorded.
  request.timeout_seconds = 60;
  ASSERT_EQ(run(), 0);
  EXPECT_EQ(backend.submitted->timeout_seconds, 60);
  EXPECT_EQ(backend.submitted->budget_seconds, 3600);
}

TEST_F(Pipeline, TheLocalBackendSaysItDoesNotUseABudget) {
  settings.backend = "local";
  request.max_cost_usd = 5;
  ASSERT_EQ(run(), 0);
  ASSERT_TRUE(backend.submitted);
  EXPECT_FALSE(backend.submitted->max_cost_usd);
  EXPECT_FALSE(backend.submitted->timeout_seconds);
  EXPECT_NE(io.err().find("local backend: --max-cost is not used"), std::string::npos) << io.err();
}

TEST_F(Pipeline, AnUnchangedTreeIsNeitherPackedNorStagedAgain) {
  // A tree changed in the last seconds is never remembered (pack_cache.h): an hour passes.
  clock = [] { return now_unix() + 3600; };
  ASSERT_EQ(run(), 0);
  backend.calls.clear();
  ASSERT_EQ(run(), 0);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"prepare_image", "submit", "stream_logs",
                                                     "collect", "clean"}));
}

TEST_F(Pipeline, AStepThatFailsEndsTheJourneyThereAndLeavesNothingInTmp) {
  const std::vector<std::string> steps = {"prepare_image", "stage_context", "submit"};
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE(steps[i]);
    FakeBackend fresh;
    fresh.outcome.state = kSucceeded;
    fresh.fail_at = steps[i];
    backend = fresh;
    const Error e = failure();
    EXPECT_EQ(e.code(), Errc::api);
    EXPECT_EQ(exit_code_for(e.code(), /*is_run_command=*/true), exit_codes::kinetic);
    // The steps up to the failing one ran, none after it.
    EXPECT_EQ(backend.calls, std::vector<std::string>(steps.begin(), steps.begin() + i + 1));
    EXPECT_TRUE(leftovers().empty()) << leftovers().front();
  }
}

// After submit the job exists, so what a failure leaves depends on whether the job has ended.
TEST_F(Pipeline, ACutStreamLeavesTheJobAloneAndSaysHowToGetBackToIt) {
  backend.fail_at = "stream_logs";
  const Error e = failure();
  ASSERT_TRUE(backend.submitted);
  const std::string id = backend.submitted->id;
  EXPECT_EQ(e.code(), Errc::api);
  EXPECT_NE(std::string(e.what()).find("stream_logs failed (injected)"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("`kinetic logs -f " + id + "`"), std::string::npos)
      << e.what();
  // The job may still be running: neither collected nor cleaned.
  EXPECT_EQ(backend.calls,
            (std::vector<std::string>{"prepare_image", "stage_context", "submit", "stream_logs"}));
}

TEST_F(Pipeline, AJobThatCouldNotStartIsReportedAsTheBackendSaidIt) {
  // The backend stopped it (an unschedulable pod, an image that cannot be pulled): there is
  // nothing to follow or cancel.
  backend.fail_at = "stream_logs";
  backend.fail_code = Errc::job_start;
  const Error e = failure();
  EXPECT_EQ(e.code(), Errc::job_start);
  EXPECT_EQ(std::string(e.what()), "stream_logs failed (injected)");
}

TEST_F(Pipeline, AFailedCollectStillCleansTheEndedJobAndReportsTheCollectError) {
  backend.fail_at = "collect";
  const Error e = failure();
  EXPECT_EQ(e.code(), Errc::api);
  EXPECT_NE(std::string(e.what()).find("collect failed"), std::string::npos) << e.what();
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"prepare_image", "stage_context", "submit",
                                                     "stream_logs", "collect", "clean"}));
}

TEST_F(Pipeline, AFailedCleanIsAWarningAndTheJobsExitCodeStands) {
  backend.fail_at = "clean";
  backend.outcome.state = kFailed;
  backend.outcome.exit_code = 7;
  EXPECT_EQ(run(), 7);
  ASSERT_TRUE(backend.submitted);
  const std::string id = backend.submitted->id;
  EXPECT_NE(io.err().find("could not clean up " + id + " (clean failed (injected))"),
            std::string::npos)
      << io.err();
  EXPECT_NE(io.err().find("`kinetic cleanup`"), std::string::npos);
  // The summary line still follows: the run's outcome is the job's.
  EXPECT_NE(io.err().find("kinetic: " + id + " failed"), std::string::npos) << io.err();
}

TEST_F(Pipeline, ADetachedRunStopsAfterSubmitAndPrintsTheId) {
  request.detach = true;
  EXPECT_EQ(run(), 0);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"prepare_image", "stage_context", "submit"}));
  ASSERT_TRUE(backend.submitted);
  EXPECT_EQ(io.out(), backend.submitted->id + "\n");
}

TEST_F(Pipeline, TheJobsStateGivesTheExitCode) {
  const std::vector<std::pair<std::string, int>> cases = {
      {std::string(kTimedOut), exit_codes::timeout},
      {std::string(kCancelled), exit_codes::interrupted},
      {std::string(kLost), exit_codes::kinetic},
  };
  for (const auto& [state, code] : cases) {
    backend.outcome.state = state;
    backend.outcome.exit_code.reset();
    EXPECT_EQ(run(), code) << state;
  }
  // A failed job that reported 0, or no code, still failed.
  backend.outcome.state = kFailed;
  backend.outcome.exit_code = 0;
  EXPECT_EQ(run(), exit_codes::kinetic);
}

TEST_F(Pipeline, ADryRunAsksThePreviewAndTouchesNoBackend) {
  class Preview : public SubmissionPreview {
   public:
    bool gzip_for_prebuilt_images() const override { return true; }
    std::string image(const ImageRecipe* recipe, const std::string&) const override {
      return recipe ? "preview/" + recipe->tag : "";
    }
    std::string context_uri(const std::string& sha, Compression c) const override {
      return "mem://" + sha + std::string(archive_extension(c));
    }
    std::vector<nlohmann::ordered_json> manifests(const JobSpec& spec) const override {
      return {{{"kind", "Job"}, {"image", spec.image}, {"context", spec.context_uri}}};
    }
  } preview;
  request.dry_run = true;
  request.format = OutputFormat::json;
  RunEnvironment env{settings, vars,        io.io,   root.path() / "state",
                     project,  root.path(), nullptr, &preview};
  EXPECT_EQ(run_pipeline(request, env), 0);
  auto list = nlohmann::json::parse(io.out());
  EXPECT_EQ(list["kind"], "List");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["image"].get<std::string>().rfind("preview/", 0), 0u);
  EXPECT_EQ(list["items"][0]["context"].get<std::string>().rfind("mem://", 0), 0u);
  EXPECT_TRUE(list["items"][0]["context"].get<std::string>().ends_with(".tar.zst"));
  EXPECT_TRUE(backend.calls.empty());
  EXPECT_TRUE(leftovers().empty());
}

// --data DIR on a backend that copies it (gke): packed and staged like a context, before submit,
// and the spec says where; an unchanged directory is neither packed nor staged again.
TEST_F(Pipeline, ACopiedDataDirectoryIsStagedOnceAndTheSpecSaysWhere) {
  make_dirs(root.path() / "set");
  atomic_write(root.path() / "set" / "a.txt", "alpha\n");
  backend.copies = true;
  request.data = {parse_data_flag("../set:in")};
  clock = [] { return now_unix() + 3600; };  // both trees settled: the pack cache keeps them
  ASSERT_EQ(run(), 0);
  EXPECT_EQ(std::count(backend.calls.begin(), backend.calls.end(), "stage_context"), 2);
  ASSERT_TRUE(backend.submitted.has_value());
  ASSERT_EQ(backend.submitted->data.size(), 1u);
  const DataMount staged = backend.submitted->data[0];
  EXPECT_EQ(staged.source, (root.path() / "set").string());
  EXPECT_EQ(staged.target, "in");
  EXPECT_EQ(staged.staged_uri, "mem://contexts/" + staged.staged_sha256);
  EXPECT_EQ(staged.staged_sha256.size(), 64u);
  EXPECT_TRUE(leftovers().empty());

  backend.calls.clear();
  ASSERT_EQ(run(), 0);
  EXPECT_EQ(std::count(backend.calls.begin(), backend.calls.end(), "stage_context"), 0);
  EXPECT_EQ(backend.submitted->data[0].staged_uri, staged.staged_uri);
}

// Kinetic's own images carry the zstd tool, so the context and the data ship as tar.zst; a
// prebuilt image (--image) may not, so a backend whose runner unpacks in the image gets tar.gz.
TEST_F(Pipeline, ArchivesAreZstdForKineticsImagesAndGzipForAPrebuiltOne) {
  make_dirs(root.path() / "set");
  atomic_write(root.path() / "set" / "a.txt", "alpha\n");
  backend.copies = true;
  request.data = {parse_data_flag("../set:in")};
  ASSERT_EQ(run(), 0);
  EXPECT_EQ(backend.compressions, (std::vector<Compression>{Compression::zstd, Compression::zstd}));

  backend.compressions.clear();
  request.image = "registry.example/mine:1";
  ASSERT_EQ(run(), 0);
  EXPECT_EQ(backend.compressions, (std::vector<Compression>{Compression::gzip, Compression::gzip}));
  EXPECT_EQ(backend.submitted->image, "registry.example/mine:1");
}

// A backend that uses the directory as it is (local) is told about it, and one that cannot read
// gs:// stops the run before submit.
TEST_F(Pipeline, DataABackendDoesNotCopyIsUsedAsItIsAndGcsNeedsABackendThatReadsIt) {
  make_dirs(root.path() / "set");
  request.data = {parse_data_flag("../set:in")};
  ASSERT_EQ(run(), 0);
  EXPECT_EQ(backend.submitted->data[0].staged_uri, "file://" + (root.path() / "set").string());

  backend.calls.clear();
  backend.submitted.reset();
  request.data = {parse_data_flag("gs://bucket-1/x:in")};
  const Error e = failure();
  EXPECT_EQ(e.code(), Errc::unsupported);
  EXPECT_NE(std::string(e.what()).find("the fake backend cannot read gs:// data"),
            std::string::npos)
      << e.what();
  EXPECT_FALSE(backend.submitted.has_value());
}

}  // namespace
}  // namespace kinetic

namespace kinetic {
namespace {

// A pipeline step ends its journey as `run` does (one execute(): submit, stream, collect,
// clean), with the same guarantees: a cut stream leaves the job and says how to get back to it,
// a failed collect still cleans, a failed clean is a warning.
TEST_F(Pipeline, APreparedStepEndsItsJourneyAsARunDoes) {
  backend.outcome.state = kFailed;
  backend.outcome.exit_code = 3;
  test::RecordingSink sink;
  const JobStatus st = run_step(sink);
  EXPECT_EQ(st.state, kFailed);
  EXPECT_EQ(exit_code_of(st), 3);
  EXPECT_EQ(sink.text(), "hello from the job\n");
  EXPECT_EQ(io.out(), "") << "a step's output goes to its sink, not to stdout";
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"stage_context", "prepare_image", "submit",
                                                     "stream_logs", "collect", "clean"}));
}

TEST_F(Pipeline, APreparedStepWhoseStreamIsCutIsLeftAloneAndSaysHowToGetBackToIt) {
  backend.fail_at = "stream_logs";
  const Error e = step_failure();
  ASSERT_TRUE(backend.submitted);
  const std::string id = backend.submitted->id;
  EXPECT_EQ(e.code(), Errc::api);
  EXPECT_NE(std::string(e.what()).find("`kinetic logs -f " + id + "`"), std::string::npos)
      << e.what();
  EXPECT_EQ(backend.calls.back(), "stream_logs") << "neither collected nor cleaned";
  backend.calls.clear();
  backend.fail_code = Errc::job_start;
  EXPECT_EQ(std::string(step_failure().what()), "stream_logs failed (injected)");
}

TEST_F(Pipeline, APreparedStepWhoseCollectFailsIsStillCleaned) {
  backend.fail_at = "collect";
  EXPECT_NE(std::string(step_failure().what()).find("collect failed"), std::string::npos);
  EXPECT_EQ(backend.calls.back(), "clean");
}

TEST_F(Pipeline, APreparedStepWhoseCleanFailsWarnsAndKeepsItsVerdict) {
  backend.fail_at = "clean";
  backend.outcome.state = kSucceeded;
  test::RecordingSink sink;
  EXPECT_EQ(run_step(sink).state, kSucceeded);
  EXPECT_NE(io.err().find("could not clean up " + backend.submitted->id), std::string::npos)
      << io.err();
}

TEST_F(Pipeline, AServerIsRefusedBeforeAnythingWhereTheBackendRunsNone) {
  ServeRequest serve{.run = request, .port = 8000};
  RunEnvironment env{settings, vars, io.io, root.path() / "state", project, root.path(), &backend};
  const Error e = error_of([&] { start_server(serve, env); });
  EXPECT_EQ(e.code(), Errc::unsupported);
  EXPECT_EQ(std::string(e.what()),
            "kinetic serve does not run on the fake backend yet; use a local context, or "
            "`kinetic run --detach` and `kinetic port-forward` meanwhile");
  EXPECT_TRUE(backend.calls.empty());
}

TEST_F(Pipeline, AServerIsSubmittedDetachedWithItsPortAndNoOutputs) {
  backend.serves = true;
  ServeRequest serve{.run = request, .port = 8000, .idle_stop_seconds = 600};
  RunEnvironment env{settings, vars, io.io, root.path() / "state", project, root.path(), &backend};
  const JobSpec spec = start_server(serve, env);
  EXPECT_EQ(backend.calls, (std::vector<std::string>{"stage_context", "prepare_image", "submit"}));
  ASSERT_TRUE(backend.submitted);
  const JobSpec& s = *backend.submitted;
  EXPECT_EQ(s.id, spec.id);
  ASSERT_TRUE(s.serve);
  EXPECT_EQ(s.serve->port, 8000);
  EXPECT_EQ(s.serve->idle_stop_seconds, 600);
  // Nobody follows it and nothing is delivered: it runs until stopped.
  EXPECT_TRUE(s.detached);
  EXPECT_EQ(s.follower_timeout_seconds, 0);
  EXPECT_EQ(s.output_dir, "");
  EXPECT_NE(std::find(s.env.begin(), s.env.end(),
                      std::pair<std::string, std::string>{"KINETIC_SERVE_PORT", "8000"}),
            s.env.end());
  JobStatus st = initial_status(s);
  EXPECT_TRUE(is_server(st));
  EXPECT_EQ(server_port(st), 8000);
  EXPECT_TRUE(backend.secrets.empty());  // the port is no secret
}

}  // namespace
}  // namespace kinetic

namespace kinetic {
namespace {

TEST_F(Pipeline, ADebugRunRecordsWhereItsDebuggerWaitsAndItsImageGetsDebugpy) {
  request.debug = true;
  request.detach = true;
  request.debug_port = 5679;
  ASSERT_EQ(run(), 0) << io.err();
  ASSERT_TRUE(backend.submitted && backend.submitted->debug);
  const JobSpec& spec = *backend.submitted;
  EXPECT_EQ(spec.debug->port, 5679);
  EXPECT_EQ(spec.debug->wait_seconds, kDebugWaitSeconds);
  EXPECT_EQ(spec.debug->remote_root, "/tmp/kinetic-debug/" + spec.id);
  EXPECT_EQ(spec.debug->local_root, project.string());
  EXPECT_EQ(spec.debug->launcher_sha256, debug_launcher_sha256());
  ASSERT_TRUE(backend.recipe);
  EXPECT_EQ(backend.recipe->requirements,
            (std::vector<std::string>{"debugpy==1.8.22", "numpy==1.26.4"}));
  EXPECT_NE(io.err().find("`kinetic debug " + spec.id + "` forwards a port to it"),
            std::string::npos)
      << io.err();
  // The record keeps it, and a job run without --debug has none.
  EXPECT_EQ(job_spec_from_json(to_json(spec)).debug->remote_root, spec.debug->remote_root);
  request.debug = false;
  ASSERT_EQ(run(), 0);
  EXPECT_FALSE(backend.submitted->debug);
  EXPECT_FALSE(to_json(*backend.submitted).contains("debug"));
}

TEST_F(Pipeline, ADebugRunKeepsTheProjectsOwnDebugpy) {
  atomic_write(project / "requirements.txt", "debugpy==1.8.0\n");
  request.debug = true;
  request.detach = true;
  ASSERT_EQ(run(), 0) << io.err();
  EXPECT_EQ(backend.recipe->requirements, (std::vector<std::string>{"debugpy==1.8.0"}));
}

TEST_F(Pipeline, OnlyAPythonJobRunsUnderTheDebugger) {
  atomic_write(project / "job.sh", "echo hi\n");
  request.file = "job.sh";
  request.debug = true;
  const Error e = failure();
  EXPECT_EQ(e.code(), Errc::usage);
  EXPECT_EQ(std::string(e.what()).rfind("--debug runs a Python job under debugpy, and job.sh is a "
                                        "shell job",
                                        0),
            0u)
      << e.what();
  EXPECT_TRUE(backend.calls.empty());
}

}  // namespace
}  // namespace kinetic
