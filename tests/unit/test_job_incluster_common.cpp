// The code the in-cluster scripts share (lib/job/incluster_common.py): each embedded script
// starts with it, and kinetic's exit codes are the golden's (tests/golden/exit_codes.json), which
// holds the Python copy to the same table (tests/integration/test_incluster_common.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/gke/auto_down.h"
#include "backend/gke/pipeline_runner_job.h"
#include "core/error.h"
#include "job/bootstrap.h"
#include "job/incluster_common.h"
#include "job/manifest.h"
#include "run/pipeline.h"

namespace kinetic {
namespace {

nlohmann::json exit_codes_golden() {
  std::ifstream f(std::string(KINETIC_GOLDEN_DIR) + "/exit_codes.json");
  return nlohmann::json::parse(f);
}

TEST(InclusterCommon, EveryScriptCarriesItAheadOfItsOwnCode) {
  const std::string_view common = incluster_common_source();
  ASSERT_NE(common.find("class Storage:"), std::string_view::npos);
  ASSERT_NE(common.find("class Kube:"), std::string_view::npos);
  for (std::string_view script :
       {bootstrap_source(), gke::auto_down_source(), gke::pipeline_runner_source()}) {
    EXPECT_TRUE(script.starts_with(common)) << script.substr(0, 200);
    EXPECT_GT(script.size(), common.size());
  }
}

TEST(InclusterCommon, KineticsExitCodesAreTheGoldensTable) {
  const std::map<std::string, int> cpp = {{"ok", exit_codes::ok},
                                          {"failed", exit_codes::failed},
                                          {"usage", exit_codes::usage},
                                          {"timeout", exit_codes::timeout},
                                          {"kinetic", exit_codes::kinetic},
                                          {"not_run", exit_codes::not_run},
                                          {"not_found", exit_codes::not_found},
                                          {"interrupted", exit_codes::interrupted},
                                          {"run_over", kRunOverExitCode},
                                          {"stopped", kStoppedExitCode}};
  const auto golden = exit_codes_golden()["codes"].get<std::map<std::string, int>>();
  EXPECT_EQ(golden, cpp)
      << "a code changed in core/error.h or job/manifest.h: change tests/golden/exit_codes.json "
         "and lib/job/incluster_common.py with it";
}

TEST(InclusterCommon, AStepsEndStandsForTheGoldensCode) {
  const nlohmann::json golden = exit_codes_golden();
  ASSERT_FALSE(golden["steps"].empty());
  for (const auto& c : golden["steps"]) {
    JobStatus st;
    st.state = c["state"].get<std::string>();
    if (!c["exit_code"].is_null()) st.exit_code = c["exit_code"].get<int>();
    EXPECT_EQ(exit_code_of(st), c["code"].get<int>()) << c.dump();
  }
}

}  // namespace
}  // namespace kinetic
