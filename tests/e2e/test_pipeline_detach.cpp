// `kinetic pipeline run --detach` on the local backend and the commands that observe it
// (docs/pipelines.md "Detached and observable"): a pipeline that finishes with no CLI attached,
// `status`, `logs --step` and `cancel` by its id, a runner killed outright read as lost, and the
// mistakes each of them refuses. Races are ordered with files the steps write or wait on.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "pipeline_doc.h"
#include "schema_check.h"

namespace kinetic::test {
namespace {

// Three steps with a fan-out: left and right each need prep alone.
const char* kDetachFanOut =
    "steps:\n"
    "  prep: {file: prep.sh}\n"
    "  left: {file: side.sh, args: [left], needs: [prep]}\n"
    "  right: {file: side.sh, args: [right], needs: [prep]}\n";

class PipelineDetachTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sb.write("proj/prep.sh", "echo 'seed 42' > \"$KINETIC_OUTPUT_DIR/data.txt\"\necho prep done\n");
    sb.write("proj/side.sh",
             "echo \"$1 saw $(cat \"$KINETIC_INPUT_DIR/prep/data.txt\")\"\n"
             "cp \"$KINETIC_INPUT_DIR/prep/data.txt\" \"$KINETIC_OUTPUT_DIR/$1.txt\"\n");
    // Blocks until cancelled, once it has said where its processes are and that it is ready.
    sb.write("proj/wait.sh",
             "echo $$ > \"$1/step.pid\"\n"
             "sleep 1000 & echo $! > \"$1/child.pid\"\n"
             "touch \"$1/ready\"\n"
             "wait\n");
    fs::create_directories(gate);
  }

  // The document `status ID -o json` prints.
  nlohmann::json status(const std::string& id) {
    CliResult r = sb.run({"status", id, "-o", "json"}, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
    return doc;
  }
  // Waits for pipeline ID to end (a bound against hangs); its final document.
  nlohmann::json finished(const std::string& id) {
    nlohmann::json doc;
    EXPECT_TRUE(eventually(
        [&] {
          doc = status(id);
          return doc.is_object() && doc.value("state", "") != "running";
        },
        60))
        << doc.dump(2);
    return doc;
  }
  // `pipeline run --detach` of PIPELINE (written as kinetic.yaml): the id it printed.
  std::string detach(const std::string& pipeline) {
    sb.write("proj/kinetic.yaml", pipeline);
    CliResult r = sb.run({"pipeline", "run", "--detach"}, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.size(), 14u) << r.out;  // "pipe-1a2b3c4d\n", and nothing else
    return first_line(r.out);
  }
  // A pipeline whose step `wait` blocks (its files in the sandbox's gate/ folder).
  std::string blocked() {
    return "steps:\n"
           "  prep: {file: prep.sh}\n"
           "  wait: {file: wait.sh, args: [\"" +
           gate.string() +
           "\"], needs: [prep]}\n"
           "  after: {file: side.sh, args: [after], needs: [wait]}\n";
  }
  int pid_in(const std::string& file) { return std::stoi(slurp(gate / file)); }

  Sandbox sb;
  fs::path proj = sb.project("proj");
  fs::path gate = sb.root() / "gate";
};

TEST_F(PipelineDetachTest, ADetachedFanOutFinishesWithNoCliAttached) {
  sb.write("proj/kinetic.yaml", kDetachFanOut);
  CliResult r = sb.run({"pipeline", "run", "--detach"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = first_line(r.out);
  ASSERT_EQ(r.out, id + "\n");
  ASSERT_EQ(id.rfind("pipe-", 0), 0u) << id;
  // The steps' output went to the runner's log, not to this terminal.
  EXPECT_EQ(r.err.find("left saw"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kinetic status " + id), std::string::npos) << r.err;

  const auto doc = finished(id);
  expect_schema("PipelineRun", doc);
  EXPECT_EQ(doc["state"], "succeeded") << doc.dump(2);
  EXPECT_EQ(doc["exit_code"], 0);
  EXPECT_EQ(doc["detached"], true);
  for (const char* name : {"prep", "left", "right"}) {
    const auto s = step_of(doc, name);
    EXPECT_EQ(s["state"], "succeeded") << name;
    EXPECT_EQ(s["job"].get<std::string>().rfind("job-", 0), 0u) << name;
    EXPECT_NE(s["started"], "") << name;
    EXPECT_NE(s["finished"], "") << name;
  }
  EXPECT_EQ(slurp(proj / "kinetic-out" / id / "right" / "right.txt"), "seed 42\n");
  EXPECT_EQ(nlohmann::json::parse(slurp(proj / "kinetic-out" / id / "pipeline.json"))["state"],
            "succeeded");

  // A step's logs are its job's.
  auto logs = sb.run({"logs", id, "--step", "left"}, proj);
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "left saw seed 42\n");
  // The table of its steps, and the pipeline listed below the jobs.
  auto table = sb.run({"status", id}, proj);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("STEP\tSTATE\tREUSED\tDURATION\tEXIT\tJOB\tCOST\n"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("right\tsucceeded\tno\t"), std::string::npos) << table.out;
  auto all = sb.run({"status"}, proj);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find(id + "\tsucceeded\t3/3\t"), std::string::npos) << all.out;
  auto list = nlohmann::json::parse(sb.run({"status", "-o", "json"}, proj).out);
  ASSERT_EQ(list["pipelines"].size(), 1u);
  EXPECT_EQ(list["pipelines"][0]["id"], id);

  // Detached again, -o json: the record as it starts (every step reused, so none waits).
  auto again = sb.run({"pipeline", "run", "--detach", "-o", "json"}, proj);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto first = nlohmann::json::parse(again.out);
  EXPECT_EQ(first["kind"], "PipelineRun");
  EXPECT_EQ(first["state"], "running");
  EXPECT_TRUE(first["exit_code"].is_null());
  EXPECT_EQ(step_of(first, "left")["state"], "reused");
  EXPECT_EQ(finished(first["id"])["state"], "succeeded");
}

TEST_F(PipelineDetachTest, TheFirstRecordHasItsWaitingSteps) {
  const std::string id = detach(blocked());
  // The record is there as soon as the command returns: prep may run, after waits.
  const auto doc = status(id);
  EXPECT_EQ(doc["state"], "running");
  EXPECT_EQ(step_of(doc, "after")["state"], "waiting");
  EXPECT_EQ(step_of(doc, "after")["job"], "");
  ASSERT_TRUE(eventually([&] { return fs::exists(gate / "ready"); }));
  EXPECT_EQ(step_of(status(id), "wait")["state"], "running");
  EXPECT_NE(step_of(status(id), "wait")["job"], "");
  ASSERT_EQ(sb.run({"cancel", id}, proj).exit_code, 0);
}

TEST_F(PipelineDetachTest, CancelStopsTheBlockedStepAndLeavesNoProcess) {
  const std::string id = detach(blocked());
  ASSERT_TRUE(eventually([&] { return fs::exists(gate / "ready"); }));
  const int runner = status(id)["runner"]["pid"];
  const std::string job = step_of(status(id), "wait")["job"];

  auto r = sb.run({"cancel", id}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(id + ": step wait (" + job + ") cancelled\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(id + " cancelled (1 step stopped, 1 skipped)"), std::string::npos) << r.err;

  const auto doc = status(id);
  EXPECT_EQ(doc["state"], "cancelled");
  EXPECT_EQ(doc["exit_code"], 130);
  EXPECT_EQ(step_of(doc, "prep")["state"], "succeeded");
  EXPECT_EQ(step_of(doc, "wait")["state"], "cancelled");
  EXPECT_EQ(step_of(doc, "after")["state"], "skipped");
  EXPECT_EQ(step_of(doc, "after")["error"], "the pipeline was interrupted");
  for (int pid : {pid_in("step.pid"), pid_in("child.pid"), runner})
    EXPECT_TRUE(eventually([&] { return !process_alive(pid); }, 20)) << pid;
  // Cancelled already: said, nothing else done.
  auto twice = sb.run({"cancel", id}, proj);
  EXPECT_EQ(twice.exit_code, 0);
  EXPECT_EQ(twice.err, id + " already cancelled\n");
}

TEST_F(PipelineDetachTest, ARunnerKilledOutrightIsLostAndCancelFinishesIt) {
  const std::string id = detach(blocked());
  ASSERT_TRUE(eventually([&] { return fs::exists(gate / "ready"); }));
  const int runner = status(id)["runner"]["pid"];
  ASSERT_EQ(::kill(runner, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return !process_alive(runner); }));

  auto doc = status(id);
  EXPECT_EQ(doc["state"], "lost") << doc.dump(2);
  EXPECT_EQ(doc["exit_code"], 125);
  auto table = sb.run({"status", id}, proj);
  EXPECT_NE(table.err.find("warning: the pipeline's runner stopped unexpectedly"),
            std::string::npos)
      << table.err;

  // Its step's job still runs: cancel stops it, and finishes the record.
  auto r = sb.run({"cancel", id}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(": step wait (job-"), std::string::npos) << r.err;
  doc = status(id);
  EXPECT_EQ(doc["state"], "cancelled");
  EXPECT_EQ(doc["exit_code"], 130);
  EXPECT_EQ(step_of(doc, "wait")["state"], "cancelled");
  EXPECT_EQ(step_of(doc, "after")["state"], "skipped");
  for (int pid : {pid_in("step.pid"), pid_in("child.pid")})
    EXPECT_TRUE(eventually([&] { return !process_alive(pid); }, 20)) << pid;
}

TEST_F(PipelineDetachTest, LogsFollowWaitsForAStepToStart) {
  // prep waits for the test's go file; `logs -f` of left, asked before, waits for left to run.
  sb.write("proj/gated.sh",
           "while [ ! -e \"$1/go\" ]; do sleep 0.05; done\n"
           "echo 'seed 42' > \"$KINETIC_OUTPUT_DIR/data.txt\"\n");
  const std::string id = detach(
      "steps:\n"
      "  prep: {file: gated.sh, args: [\"" +
      gate.string() +
      "\"]}\n"
      "  left: {file: side.sh, args: [left], needs: [prep]}\n");
  auto early = sb.run({"logs", id, "--step", "left"}, proj);
  EXPECT_EQ(early.exit_code, 1);
  EXPECT_EQ(early.err, "error: step left of " + id + " has not started yet; `kinetic logs " + id +
                           " --step left -f` waits for it\n");
  const fs::path out = sb.root() / "logs.out", err = sb.root() / "logs.err";
  const int pid = sb.spawn({"logs", id, "--step", "left", "-f"}, proj, out, err);
  sb.write("gate/go", "");
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  EXPECT_EQ(slurp(out), "left saw seed 42\n");
  EXPECT_EQ(finished(id)["state"], "succeeded");
}

TEST_F(PipelineDetachTest, MistakesAreOneLine) {
  for (const auto& cmd :
       std::vector<std::vector<std::string>>{{"status", "pipe-0badc0de"},
                                             {"logs", "pipe-0badc0de", "--step", "prep"},
                                             {"cancel", "pipe-0badc0de"}}) {
    auto r = sb.run(cmd, proj);
    EXPECT_EQ(r.exit_code, 1) << cmd[0];
    EXPECT_EQ(r.err,
              "error: no pipeline 'pipe-0badc0de' (run `kinetic status` to list pipelines)\n")
        << cmd[0];
  }
  auto r = sb.run({"logs", "job-1a2b3c4d", "--step", "prep"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: --step names a step of a pipeline; job-1a2b3c4d is a job: `kinetic logs "
            "job-1a2b3c4d`\n");
  r = sb.run({"status", "pipe-xyz"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: 'pipe-xyz' is not a pipeline id; ids look like pipe-1a2b3c4d; run `kinetic "
            "status` to list pipelines\n");

  // A pipeline that ran in the foreground has a record too.
  sb.write("proj/kinetic.yaml", kDetachFanOut);
  auto ran = sb.run({"pipeline", "run", "-o", "json"}, proj);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  const std::string id = nlohmann::json::parse(ran.out)["id"];
  EXPECT_EQ(status(id)["detached"], false);
  r = sb.run({"logs", id}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + id +
                       " has steps prep, left, right: pass one with --step, e.g. `kinetic logs " +
                       id + " --step prep`\n");
  r = sb.run({"logs", id, "--step", "lfet"}, proj);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: no step 'lfet' in " + id +
                       "; did you mean left? (its steps: prep, left, right)\n");
}

}  // namespace
}  // namespace kinetic::test
