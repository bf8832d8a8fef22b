// The verdict of a stopped job (backend/stopped_verdict.h) against the cases in
// tests/golden/stopped_verdicts.json, which the GKE bootstrap's copy (stopped_verdict() in
// lib/job/bootstrap.py) is held to as well (tests/integration/test_bootstrap.cpp), and the two
// runners' records too (RunTest and JobsTest in tests/e2e, BootstrapTest).
#include <gtest/gtest.h>

#include "backend/backend.h"
#include "backend/stopped_verdict.h"
#include "integration/stopped_verdict_case.h"
#include "run/pipeline.h"

namespace kinetic {
namespace {

JobSpec spec_of(const nlohmann::json& j) {
  JobSpec spec;
  if (j.contains("timeout_seconds")) spec.timeout_seconds = j["timeout_seconds"].get<long>();
  if (j.contains("budget_seconds")) spec.budget_seconds = j["budget_seconds"].get<long>();
  if (j.contains("max_cost_usd")) spec.max_cost_usd = j["max_cost_usd"].get<double>();
  spec.accelerator = j.value("accelerator", "");
  return spec;
}

TEST(StoppedVerdict, EveryCaseOfTheSupervisorAndTheGkeBackend) {
  const auto all = test::golden_stopped_cases();
  ASSERT_GE(all.size(), 5u);
  for (const auto& c : all) {
    if (c.value("only", "") == "bootstrap") continue;  // a stop only a pod meets
    const std::string stop = c["stop"];
    const StoppedVerdict v =
        stop == "deadline" ? deadline_verdict(spec_of(c["spec"])) : cancelled_verdict();
    EXPECT_EQ(v.state, c["verdict"]["state"]) << c["name"];
    EXPECT_EQ(v.exit_code, c["verdict"]["exit_code"]) << c["name"];
    EXPECT_EQ(v.error, c["verdict"]["error"]) << c["name"];
  }
}

// The record's exit code of a stopped job is the one `kinetic wait` and `run` exit with for it
// (the exit-code table, tests/golden/exit_codes.json): a script reading status.json and one
// reading kinetic's exit status see the same number, on either backend.
TEST(StoppedVerdict, TheRecordsExitCodeIsTheOneWaitAndRunExitWith) {
  for (const auto& c : test::golden_stopped_cases()) {
    JobStatus st;
    st.state = c["verdict"]["state"];
    st.exit_code = c["verdict"]["exit_code"].get<int>();
    EXPECT_EQ(exit_code_of(st), *st.exit_code) << c["name"];
  }
}

// The run's last line says a stop once: "cancelled in 3.0s", not "cancelled in 3.0s: cancelled".
TEST(StoppedVerdict, TheRunsLastLineSaysItOnce) {
  JobStatus st;
  st.duration_seconds = 3;
  st.attempts = 1;
  const StoppedVerdict cancel = cancelled_verdict();
  st.state = cancel.state;
  st.exit_code = cancel.exit_code;
  st.error = cancel.error;
  EXPECT_EQ(verdict_line(st, "job-1"), "job-1 cancelled in 3.0s");
  JobSpec spec;
  spec.timeout_seconds = 3;
  const StoppedVerdict deadline = deadline_verdict(spec);
  st.state = deadline.state;
  st.exit_code = deadline.exit_code;
  st.error = deadline.error;
  EXPECT_EQ(verdict_line(st, "job-1"), "job-1 timeout in 3.0s: timed out after 3s (--timeout)");
}

}  // namespace
}  // namespace kinetic
