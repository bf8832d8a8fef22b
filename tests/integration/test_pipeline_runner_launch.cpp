// The detached pipeline runner's launch check (lib/backend/gke/pipeline_runner.py launch_problem)
// against the launches a rewritten plan could hold: the embedded runner, as the cluster gets it,
// driven by tests/integration/check_runner_launch.py. The e2e GkePipeline tests show one refusal
// of each kind end to end; this table covers the shapes a pod spec can name an account or a
// Secret in.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "backend/gke/pipeline_runner_job.h"
#include "integration/command_output.h"

namespace kinetic {
namespace {

namespace fs = std::filesystem;

TEST(PipelineRunnerLaunch, EveryAccountAndSecretAPodCanNameIsChecked) {
  const fs::path dir =
      fs::temp_directory_path() / ("kinetic-runner-launch-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "runner.py") << gke::pipeline_runner_source();
  const auto run = test::command_output("python3 " KINETIC_SOURCE_DIR
                                        "/tests/integration/check_runner_launch.py " +
                                        (dir / "runner.py").string() + " 2>&1");
  EXPECT_EQ(run.status, 0) << run.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kinetic
