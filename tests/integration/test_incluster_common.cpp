// The code the in-cluster scripts share (lib/job/incluster_common.py), run with python3: its exit
// codes are the golden's (tests/golden/exit_codes.json, which also pins core/error.h's:
// tests/unit/test_job_incluster_common.cpp), so are a pipeline step's codes in the runner, its
// back-off curve is core/backoff.h's, and no script redefines a name it shares.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/gke/pipeline_runner_job.h"
#include "core/backoff.h"
#include "core/fs.h"
#include "integration/command_output.h"
#include "job/incluster_common.h"

namespace kinetic {
namespace {

using nlohmann::json;

// Loads SOURCE as a module (not as __main__: no script's main runs) and returns what EXPR
// evaluates to in it, as JSON; the golden's contents are bound to `golden`.
json evaluate(std::string_view source, const std::string& expr) {
  const fs::path dir =
      fs::temp_directory_path() / ("kinetic-incluster-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "source.py") << source;
  std::ofstream(dir / "expr.py") << expr;
  std::ofstream(dir / "driver.py") << "import json, sys\n"
                                      "m = {'__name__': 'incluster'}\n"
                                      "exec(open(sys.argv[1]).read(), m)\n"
                                      "m['golden'] = json.load(open(sys.argv[2]))\n"
                                      "print(json.dumps(eval(open(sys.argv[3]).read(), m)))\n";
  const std::string cmd = "python3 " + (dir / "driver.py").string() + " " +
                          (dir / "source.py").string() +
                          " " KINETIC_SOURCE_DIR "/tests/golden/exit_codes.json " +
                          (dir / "expr.py").string() + " 2>&1";
  const auto run = test::command_output(cmd);
  fs::remove_all(dir);
  EXPECT_EQ(run.status, 0) << run.out;
  return run.status == 0 ? json::parse(run.out) : json();
}

TEST(InclusterCommonScript, ItsExitCodesAreTheGoldensTable) {
  const json codes = evaluate(incluster_common_source(),
                              "{k[len('EXIT_'):].lower(): v for k, v in globals().items() "
                              "if k.startswith('EXIT_')}");
  const json golden = evaluate("", "golden['codes']");
  EXPECT_EQ(codes, golden) << "change lib/job/incluster_common.py, core/error.h and "
                              "tests/golden/exit_codes.json together";
}

TEST(InclusterCommonScript, TheRunnersStepCodesAreTheGoldens) {
  const json got = evaluate(gke::pipeline_runner_source(),
                            "[exit_code_for(c['state'], c['exit_code']) for c in golden['steps']]");
  const json want = evaluate("", "[c['code'] for c in golden['steps']]");
  EXPECT_EQ(got, want);
}

TEST(InclusterCommonScript, ItsBackOffIsCoreBackoffsDefaultCurve) {
  const BackoffCurve curve;
  json want = json::array();
  for (int retry = 0; retry <= 12; ++retry)
    want.push_back(static_cast<double>(curve.delay(retry).count()) / 1000);
  EXPECT_EQ(evaluate(incluster_common_source(), "[backoff_seconds(n) for n in range(13)]"), want);
}

// Its requests against a scripted server on loopback: what is tried again and how long it waits,
// a lasting 401 raised, 404 and 412 as data, an error's message (check_incluster_requests.py).
TEST(InclusterCommonScript, RequestsRetryAlongTheCurveAndSayWhatFailed) {
  const fs::path source =
      fs::temp_directory_path() / ("kinetic-incluster-" + std::to_string(::getpid()) + ".py");
  std::ofstream(source) << incluster_common_source();
  const auto run = test::command_output("python3 " KINETIC_SOURCE_DIR
                                        "/tests/integration/check_incluster_requests.py " +
                                        source.string() + " 2>&1");
  fs::remove(source);
  EXPECT_EQ(run.status, 0) << run.out;
}

// A name a script defined again would replace the shared one, for the shared code too
// (check_incluster_names.py).
TEST(InclusterCommonScript, NoScriptRedefinesASharedName) {
  const auto run = test::command_output(
      "python3 " KINETIC_SOURCE_DIR
      "/tests/integration/check_incluster_names.py " KINETIC_SOURCE_DIR " 2>&1");
  EXPECT_EQ(run.status, 0) << run.out;
}

}  // namespace
}  // namespace kinetic
