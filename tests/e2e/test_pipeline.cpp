// `kinetic pipeline run` on the local backend, as a user runs it (docs/pipelines.md): outputs
// reaching the steps that need them, a second run reusing every step, a change rerunning one
// step and its dependents, a failure stopping its dependents and a second run resuming.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "core/schema.h"
#include "pipeline_doc.h"
#include "schema_check.h"

namespace kinetic::test {
namespace {

// Three steps with a fan-out: left and right each need prep alone.
const char* kFanOut =
    "steps:\n"
    "  prep: {file: prep.sh}\n"
    "  left: {file: side.sh, args: [left], needs: [prep]}\n"
    "  right: {file: side.sh, args: [right], needs: [prep]}\n";

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sb.write("proj/prep.sh", "echo 'seed 42' > \"$KINETIC_OUTPUT_DIR/data.txt\"\necho prep done\n");
    // What a step finds of what it needs, and a copy of it in its own outputs.
    sb.write("proj/side.sh",
             "echo \"$1 saw $(cat \"$KINETIC_INPUT_DIR/prep/data.txt\") in"
             " $(ls \"$KINETIC_INPUT_DIR/prep\")\"\n"
             "cp \"$KINETIC_INPUT_DIR/prep/data.txt\" \"$KINETIC_OUTPUT_DIR/$1.txt\"\n");
  }

  // `pipeline run ARGS -o json` in the project: the result and its PipelineRun document.
  std::pair<CliResult, nlohmann::json> run(std::vector<std::string> args = {},
                                           const std::map<std::string, std::string>& env = {}) {
    args.insert(args.begin(), {"pipeline", "run"});
    args.insert(args.end(), {"-o", "json"});
    CliResult r = sb.run(args, proj, env);
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
    return {r, doc};
  }

  Sandbox sb;
  fs::path proj = sb.project("proj");
};

TEST_F(PipelineTest, AFanOutsOutputsReachTheStepsThatNeedThem) {
  sb.write("proj/kinetic.yaml", kFanOut);
  // Without -o: the steps' output on stdout, each line prefixed by its step (left and right may
  // run at once).
  auto r = sb.run({"pipeline", "run"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[prep] prep done\n"), std::string::npos) << r.out;
  // The input is prep's data.txt alone: the status.json kinetic adds is not a step's output.
  EXPECT_NE(r.out.find("[left] left saw seed 42 in data.txt\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[right] right saw seed 42 in data.txt\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("kinetic: step prep (job-"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kinetic: step left succeeded in "), std::string::npos) << r.err;

  auto [json_run, doc] = run({"--force", "prep", "--force", "left", "--force", "right"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  expect_schema("PipelineRun", doc);
  EXPECT_EQ(doc["kind"], "PipelineRun");
  EXPECT_EQ(doc["schema_version"], kSchemaVersion);
  EXPECT_EQ(doc["state"], "succeeded");
  EXPECT_EQ(doc["exit_code"], 0);
  EXPECT_EQ(step_states(doc),
            (std::map<std::string, std::string>{
                {"prep", "succeeded"}, {"left", "succeeded"}, {"right", "succeeded"}}));
  const std::string id = doc["id"];
  EXPECT_EQ(id.rfind("pipe-", 0), 0u) << id;
  const fs::path out = proj / "kinetic-out" / id;
  EXPECT_EQ(slurp(out / "prep" / "data.txt"), "seed 42\n");
  EXPECT_EQ(slurp(out / "left" / "left.txt"), "seed 42\n");
  EXPECT_EQ(slurp(out / "right" / "right.txt"), "seed 42\n");
  EXPECT_EQ(nlohmann::json::parse(slurp(out / "pipeline.json"))["id"], id);
  // With -o json, stdout is the document alone: the steps' output went to stderr.
  EXPECT_NE(json_run.err.find("[left] left saw seed 42"), std::string::npos) << json_run.err;
}

// cleanup prunes finished runs' records by the jobs' rule: --keep-last 1 keeps the latest run.
TEST_F(PipelineTest, CleanupKeepLastKeepsTheLatestRunsRecord) {
  sb.write("proj/kinetic.yaml", kFanOut);
  auto [first, first_doc] = run();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto [second, second_doc] = run({"--force", "prep"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const std::string old_id = first_doc["id"], new_id = second_doc["id"];
  const fs::path runs = sb.state() / "pipelines" / "runs";
  auto pruned = [&](const std::vector<std::string>& args) {
    auto r = sb.run(args, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> ids;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    for (const auto& item : doc["items"])
      if (item["kind"] == "pipeline") ids.insert(item["name"].get<std::string>());
    return ids;
  };
  EXPECT_TRUE(pruned({"cleanup", "--dry-run", "-o", "json"}).empty()) << "both are young";
  EXPECT_EQ(pruned({"cleanup", "--keep-last", "1", "-o", "json"}), (std::set<std::string>{old_id}));
  EXPECT_FALSE(fs::exists(runs / (old_id + ".json")));
  EXPECT_TRUE(fs::exists(runs / (new_id + ".json")));
  EXPECT_NE(sb.run({"status", old_id}, proj).exit_code, 0);
  EXPECT_EQ(sb.run({"status", new_id}, proj).exit_code, 0);
}

TEST_F(PipelineTest, ASecondRunReusesEveryStep) {
  sb.write("proj/kinetic.yaml", kFanOut);
  auto [first, doc1] = run();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto [second, doc2] = run();
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(step_states(doc2), (std::map<std::string, std::string>{
                                   {"prep", "reused"}, {"left", "reused"}, {"right", "reused"}}));
  EXPECT_EQ(second.err.find(") started"), std::string::npos) << "a step ran again:\n" << second.err;
  EXPECT_NE(second.err.find("kinetic: step left reused: outputs of " +
                            step_of(doc1, "left")["job"].get<std::string>()),
            std::string::npos)
      << second.err;
  for (const char* name : {"prep", "left", "right"})
    EXPECT_EQ(step_of(doc2, name)["key"], step_of(doc1, name)["key"]) << name;
  // The reused outputs are in the new run's folder too.
  EXPECT_EQ(slurp(proj / "kinetic-out" / doc2["id"].get<std::string>() / "left" / "left.txt"),
            "seed 42\n");
}

TEST_F(PipelineTest, ChangedArgsRerunThatStepAndItsDependentsOnly) {
  sb.write("proj/train.sh",
           "echo \"$(cat \"$KINETIC_INPUT_DIR/prep/data.txt\") x $1\" > "
           "\"$KINETIC_OUTPUT_DIR/model.txt\"\n");
  sb.write("proj/evaluate.sh",
           "cp \"$KINETIC_INPUT_DIR/train/model.txt\" \"$KINETIC_OUTPUT_DIR/report.txt\"\n");
  const std::string chain =
      "steps:\n"
      "  prep: {file: prep.sh}\n"
      "  train: {file: train.sh, args: [\"EPOCHS\"], needs: [prep]}\n"
      "  evaluate: {file: evaluate.sh, needs: [train]}\n";
  auto with_epochs = [&](const std::string& n) {
    std::string text = chain;
    text.replace(text.find("EPOCHS"), 6, n);
    return text;
  };
  sb.write("proj/kinetic.yaml", with_epochs("3"));
  auto [first, doc1] = run();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // Editing the pipeline file changes train's args, not the project folder's hash: prep stays.
  sb.write("proj/kinetic.yaml", with_epochs("5"));
  auto [second, doc2] = run();
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(step_states(doc2),
            (std::map<std::string, std::string>{
                {"prep", "reused"}, {"train", "succeeded"}, {"evaluate", "succeeded"}}));
  EXPECT_EQ(step_of(doc2, "prep")["key"], step_of(doc1, "prep")["key"]);
  EXPECT_NE(step_of(doc2, "evaluate")["key"], step_of(doc1, "evaluate")["key"]);
  EXPECT_EQ(slurp(proj / "kinetic-out" / doc2["id"].get<std::string>() / "evaluate" / "report.txt"),
            "seed 42 x 5\n");

  // --from train: a changed project folder changes every key, yet prep's latest outputs stand.
  sb.write("proj/notes.txt", "changed\n");
  auto [from, doc3] = run({"--from", "train"});
  ASSERT_EQ(from.exit_code, 0) << from.err;
  EXPECT_EQ(step_states(doc3),
            (std::map<std::string, std::string>{
                {"prep", "reused"}, {"train", "succeeded"}, {"evaluate", "succeeded"}}));

  // --only with a need whose outputs are gone: refused before anything runs.
  fs::remove_all(proj / "kinetic-out");
  auto only = sb.run({"pipeline", "run", "--only", "evaluate"}, proj);
  EXPECT_EQ(only.exit_code, 2);
  EXPECT_EQ(only.err,
            "error: kinetic.yaml:3: step train: evaluate needs its outputs and none are left from "
            "an earlier run; run it too (drop --only or --from)\n");
  EXPECT_FALSE(fs::exists(proj / "kinetic-out"));
}

TEST_F(PipelineTest, AFailureStopsItsDependentsAndASecondRunResumes) {
  // flaky fails while MODE (a secret: the caller's value) says so; other does not need it.
  sb.write("proj/flaky.sh",
           "if [ \"$MODE\" = fail ]; then echo 'ValueError: not yet' >&2; exit 3; fi\n"
           "echo ok > \"$KINETIC_OUTPUT_DIR/flaky.txt\"\n");
  sb.write("proj/final.sh", "cat \"$KINETIC_INPUT_DIR/flaky/flaky.txt\"\n");
  sb.write("proj/kinetic.yaml", std::string(kFanOut) +
                                    "  flaky: {file: flaky.sh, env: [MODE], needs: [prep]}\n"
                                    "  final: {file: final.sh, needs: [flaky]}\n");
  auto [failed, doc1] = run({}, {{"MODE", "fail"}});
  EXPECT_EQ(failed.exit_code, 3) << failed.err;
  EXPECT_EQ(doc1["state"], "failed");
  EXPECT_EQ(doc1["exit_code"], 3);
  EXPECT_EQ(step_states(doc1), (std::map<std::string, std::string>{{"prep", "succeeded"},
                                                                   {"left", "succeeded"},
                                                                   {"right", "succeeded"},
                                                                   {"flaky", "failed"},
                                                                   {"final", "skipped"}}));
  EXPECT_NE(failed.err.find("kinetic: step flaky failed (exit 3): ValueError: not yet"),
            std::string::npos)
      << failed.err;
  EXPECT_NE(failed.err.find("kinetic: step final skipped: needs flaky, which failed"),
            std::string::npos)
      << failed.err;

  auto [resumed, doc2] = run({}, {{"MODE", "ok-7f3a"}});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(step_states(doc2), (std::map<std::string, std::string>{{"prep", "reused"},
                                                                   {"left", "reused"},
                                                                   {"right", "reused"},
                                                                   {"flaky", "succeeded"},
                                                                   {"final", "succeeded"}}));
  // A secret's value is in no record, and in no key: another value reuses everything.
  const std::string flaky_job = step_of(doc2, "flaky")["job"];
  EXPECT_EQ(slurp(sb.state() / "jobs" / flaky_job / "spec.json").find("ok-7f3a"),
            std::string::npos);
  EXPECT_EQ(resumed.out.find("ok-7f3a"), std::string::npos);
  auto [again, doc3] = run({}, {{"MODE", "other-91c2"}});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(step_of(doc3, "flaky")["state"], "reused");
  EXPECT_EQ(step_of(doc3, "flaky")["key"], step_of(doc2, "flaky")["key"]);
  EXPECT_EQ(slurp(fs::path(step_of(doc3, "flaky")["output_dir"].get<std::string>()) / "flaky.txt"),
            "ok\n");
}

TEST_F(PipelineTest, AMalformedFileIsOneLineBeforeAnythingRuns) {
  sb.write("proj/kinetic.yaml",
           "steps:\n"
           "  prep: {file: prep.sh, needs: [right]}\n"
           "  left: {file: side.sh, needs: [prep]}\n"
           "  right: {file: side.sh, needs: [left]}\n");
  auto r = sb.run({"pipeline", "run"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: kinetic.yaml:2: step prep: a cycle (prep needs right needs left "
            "needs prep); remove one of these needs\n");
  EXPECT_FALSE(fs::exists(proj / "kinetic-out"));

  sb.write("proj/other.yaml", "steps:\n  prep: {file: prep.sh, acelerator: v5litepod-1}\n");
  r = sb.run({"pipeline", "run", "-f", "other.yaml"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: other.yaml:2: step prep: unknown field 'acelerator'; did you mean "
            "accelerator?\n");

  sb.write("proj/missing.yaml", "steps:\n  prep: {file: nope.sh}\n");
  r = sb.run({"pipeline", "run", "-f", "missing.yaml"}, proj);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("missing.yaml:2: step prep: job file 'nope.sh' not found"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(proj / "kinetic-out"));

  r = sb.run({"pipeline", "run"}, sb.root());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no pipeline file kinetic.yaml"), std::string::npos) << r.err;
}

TEST_F(PipelineTest, CtrlCCancelsTheRunningStepsAndStartsNoOther) {
  sb.write("proj/wait.sh",
           "sleep 1000 & echo $! > \"$KINETIC_OUTPUT_DIR/../child.pid\"\necho ready\nwait\n");
  sb.write("proj/kinetic.yaml",
           "steps:\n"
           "  prep: {file: prep.sh}\n"
           "  wait: {file: wait.sh, needs: [prep]}\n"
           "  after: {file: side.sh, args: [after], needs: [wait]}\n");
  const fs::path out = sb.root() / "run.out", err = sb.root() / "run.err";
  const int pid = sb.spawn({"pipeline", "run"}, proj, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find("ready") != std::string::npos; }))
      << slurp(err);
  ::kill(pid, SIGINT);
  EXPECT_EQ(Sandbox::wait(pid), 130) << slurp(err);
  const std::string said = slurp(err);
  EXPECT_NE(said.find("kinetic: cancelling the running steps"), std::string::npos) << said;
  EXPECT_NE(said.find("kinetic: step wait cancelled\n"), std::string::npos) << said;
  EXPECT_NE(said.find("kinetic: step after skipped: the pipeline was interrupted\n"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(" cancelled: step wait was cancelled, 1 skipped;"), std::string::npos)
      << said;
  // The job's whole process group was stopped (its record is beside its work directory).
  const std::string job =
      job_id_in(said.substr(std::min(said.size(), said.find("kinetic: step wait ("))));
  ASSERT_FALSE(job.empty()) << said;
  const int child = std::stoi(slurp(sb.state() / "jobs" / job / "child.pid"));
  EXPECT_TRUE(eventually([&] { return !process_alive(child); }, 10));
}

TEST_F(PipelineTest, TheExampleFansOutAndEvaluatesBothModels) {
  const fs::path dir = sb.root() / "example";
  fs::copy(fs::path(KINETIC_SOURCE_DIR) / "examples" / "pipeline", dir,
           fs::copy_options::recursive);
  auto r = sb.run({"pipeline", "run", "-o", "json"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(step_states(doc), (std::map<std::string, std::string>{{"prep", "succeeded"},
                                                                  {"train-small", "succeeded"},
                                                                  {"train-large", "succeeded"},
                                                                  {"evaluate", "succeeded"}}));
  const std::string report =
      slurp(dir / "kinetic-out" / doc["id"].get<std::string>() / "evaluate" / "report.txt");
  EXPECT_NE(report.find("train-small: loss="), std::string::npos) << report;
  EXPECT_NE(report.find("best: train-large\n"), std::string::npos) << report;
}

}  // namespace
}  // namespace kinetic::test
