// The CI contract (issue #34): what a script sees is final, consistent and survives pipes.
// `kinetic wait`, SIGPIPE, and the shell idioms CI scripts use, on the local backend here and on
// gke (against the fake cloud) in test_gke_ci_contract.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ci_idioms.h"
#include "cli_harness.h"

namespace kinetic::test {
namespace {

class CiContractTest : public ::testing::Test {
 protected:
  Sandbox sb;
  fs::path proj = sb.project("proj");

  void SetUp() override { write_ci_jobs(sb, "proj"); }

  std::string detach(const std::string& file) {
    auto r = sb.run({"run", file, "--detach"}, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return first_line(r.out);
  }
  // Lets a detached gate.py job end (it waits for `go` in its work directory).
  void open_gate(const std::string& id) { sb.write("state/jobs/" + id + "/work/go", ""); }
};

TEST_F(CiContractTest, WaitBlocksUntilTheJobEndsAndExitsWithItsCode) {
  const std::string id = detach("gate.py");
  // Its own --timeout: 124, the job untouched.
  auto early = sb.run({"wait", id, "--timeout", "1s"}, proj);
  EXPECT_EQ(early.exit_code, 124) << early.err;
  EXPECT_NE(early.err.find("--timeout 1s passed with " + id + " still running; it goes on"),
            std::string::npos)
      << early.err;
  auto still = sb.run({"status", id, "-o", "json"}, proj);
  EXPECT_EQ(nlohmann::json::parse(still.out)["state"], "running");

  const fs::path out = sb.root() / "wait.out", err = sb.root() / "wait.err";
  const int waiter = sb.spawn({"wait", id}, proj, out, err);
  EXPECT_TRUE(process_alive(waiter));
  open_gate(id);
  EXPECT_EQ(Sandbox::wait(waiter), 7) << slurp(err);
  EXPECT_EQ(slurp(out).rfind(id + " failed (exit 7) after ", 0), 0u) << slurp(out);

  // Once ended: at once, and as a document.
  auto doc = sb.run({"wait", id, "-o", "json"}, proj);
  EXPECT_EQ(doc.exit_code, 7);
  const auto result = nlohmann::json::parse(doc.out);
  EXPECT_EQ(result["kind"], "WaitResult");
  EXPECT_EQ(result["exit_code"], 7);
  EXPECT_EQ(result["timed_out"], false);
  ASSERT_EQ(result["jobs"].size(), 1u);
  EXPECT_EQ(result["jobs"][0]["state"], "failed");
  EXPECT_EQ(result["waiting"].size(), 0u);
}

TEST_F(CiContractTest, WaitForSeveralExitsWithTheFirstFailureInTheOrderGiven) {
  const std::string ok = detach("ok.py"), three = detach("fail3.py"), four = detach("many.py");
  auto all = sb.run({"wait", ok, three, four}, proj);
  EXPECT_EQ(all.exit_code, 3) << all.err;
  EXPECT_EQ(line_count(all.out), 3u) << all.out;
  EXPECT_EQ(sb.run({"wait", four, three}, proj).exit_code, 4);
  EXPECT_EQ(sb.run({"wait", ok, "-o", "name"}, proj).out, ok + "\n");
  // --for succeeded stops at the first that ends otherwise, without waiting for the rest.
  const std::string gate = detach("gate.py");
  auto first_failure = sb.run({"wait", gate, three, "--for", "succeeded"}, proj);
  EXPECT_EQ(first_failure.exit_code, 3) << first_failure.err;
  open_gate(gate);
  EXPECT_EQ(sb.run({"wait", gate}, proj).exit_code, 7);
  // Bad input: one line, a documented code.
  auto unknown = sb.run({"wait", "job-00000000"}, proj);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(line_count(unknown.err), 1u) << unknown.err;
  auto bad_for = sb.run({"wait", ok, "--for", "done"}, proj);
  EXPECT_EQ(bad_for.exit_code, 2);
  EXPECT_NE(bad_for.err.find("--for done: wait for `ended`"), std::string::npos) << bad_for.err;
}

TEST_F(CiContractTest, WaitForAPipeline) {
  sb.write("proj/kinetic.yaml",
           "steps:\n"
           "  first: {file: ok.py}\n"
           "  second: {file: fail3.py, needs: [first]}\n");
  auto started = sb.run({"pipeline", "run", "--detach"}, proj);
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string pipe = first_line(started.out);
  auto waited = sb.run({"wait", pipe}, proj);
  EXPECT_EQ(waited.exit_code, 3) << waited.err;
  EXPECT_EQ(waited.out.rfind("pipeline " + pipe + " failed (exit 3)", 0), 0u) << waited.out;
}

// `kinetic run … | head -1`: the reader goes away after one line; kinetic neither dies of
// SIGPIPE nor stops following: the job's outputs are collected and its exit code is kinetic's.
TEST_F(CiContractTest, AClosedStdoutEndsTheOutputNotTheRun) {
  auto r =
      sb.shell("kinetic run many.py 2>run.err | head -1; echo \"kinetic=${PIPESTATUS[0]}\"", proj);
  EXPECT_EQ(r.out, "1\nkinetic=4\n") << slurp(proj / "run.err");
  const std::string id = job_id_in(slurp(proj / "run.err"));
  ASSERT_FALSE(id.empty()) << slurp(proj / "run.err");
  EXPECT_EQ(slurp(proj / "kinetic-out" / id / "result.txt"), "written\n");
  auto st = nlohmann::json::parse(slurp(proj / "kinetic-out" / id / "status.json"));
  EXPECT_EQ(st["exit_code"], 4);
  EXPECT_FALSE(fs::exists(sb.state() / "jobs" / id / "work")) << "the run cleaned up";
}

TEST_F(CiContractTest, TheIdiomsOfCiScriptsHold) {
  for (const auto& idiom : ci_idioms(/*gke=*/false)) {
    SCOPED_TRACE(idiom.name);
    auto r = sb.shell(idiom.script, proj);
    check_idiom(idiom, r, proj);
  }
}

}  // namespace
}  // namespace kinetic::test
