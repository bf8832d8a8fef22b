// `run --debug`'s launcher (lib/job/debug_launcher.py, as embedded), run with python3 and the
// stand-in for debugpy (tests/e2e/debugpy_standin.py): what it does when nobody attaches (the
// job runs without a debugger once the wait is over, and the slice's other hosts are released),
// the link the job runs through, the job's exit code, and a job whose Python has no debugpy.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "core/fs.h"
#include "integration/command_output.h"
#include "job/debug_spec.h"

namespace kinetic {
namespace {

class DebugLauncher : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(context / "sub");
    std::ofstream(dir / "debug_launcher.py") << debug_launcher_source();
    std::ofstream(context / "job.py")
        << "import os, sys\n"
           "print('ran', __file__, os.getcwd(), sys.argv[1:])\n"
           "debugpy = sys.modules.get('debugpy')\n"
           "print('debugpy listened on', debugpy and debugpy.listened_on)\n"
           "sys.exit(3)\n";
  }
  void TearDown() override { fs::remove_all(dir); }
  // The launcher with WAIT seconds, its release pipe as fd 3 written to the file `released`.
  test::CommandOutput launch(int wait) const {
    return test::command_output(
        "cd " + (context / "sub").string() + " && python3 -u " +
        (dir / "debug_launcher.py").string() + " 0 " + std::to_string(wait) + " " +
        remote.string() + " " + context.string() + " 3 -- " + (context / "job.py").string() + " " +
        (context / "sub").string() + " plain 3>" + (dir / "released").string() + " 2>&1");
  }
  void ship_debugpy() const {
    fs::create_directories(context / "debugpy");
    std::ifstream in(KINETIC_SOURCE_DIR "/tests/e2e/debugpy_standin.py");
    std::ofstream(context / "debugpy" / "__init__.py")
        << std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir =
      fs::temp_directory_path() / ("kinetic-debug-launcher-" + std::to_string(::getpid()));
  fs::path context = dir / "context";
  fs::path remote = dir / "links" / "job-1a2b3c4d";
};

TEST_F(DebugLauncher, NobodyAttachingTheJobRunsWithoutADebuggerThroughTheLink) {
  ship_debugpy();
  const test::CommandOutput r = launch(0);
  EXPECT_EQ(r.status, 3) << r.out;  // the job's own exit code
  EXPECT_NE(r.out.find("kinetic: debugpy listens on port 0; the job waits up to 0s for a debugger"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("kinetic: no debugger attached in 0s; the job runs without one"),
            std::string::npos)
      << r.out;
  // The job's file and its arguments under the context go through the link (its working
  // directory too, which the kernel names by its real path); other arguments stay as they are.
  EXPECT_NE(r.out.find("ran " + (remote / "job.py").string() + " " +
                       fs::canonical(context / "sub").string() + " ['" + (remote / "sub").string() +
                       "', 'plain']"),
            std::string::npos)
      << r.out;
  // The pod's (or this machine's) loopback only: the kubelet's port-forward connects there.
  EXPECT_NE(r.out.find("debugpy listened on ('127.0.0.1', 0)"), std::string::npos) << r.out;
  std::ifstream released(dir / "released");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(released), {}), "1");
  EXPECT_FALSE(fs::is_symlink(remote));  // removed at the end
}

TEST_F(DebugLauncher, AJobWhosePythonHasNoDebugpyCannotStart) {
  const test::CommandOutput r = launch(0);
  EXPECT_EQ(r.status, 126) << r.out;
  EXPECT_EQ(r.out.rfind("error: kinetic --debug: debugpy cannot be imported in the job (No module "
                        "named 'debugpy'): ",
                        0),
            0u)
      << r.out;
  EXPECT_EQ(r.out.find("ran "), std::string::npos);
}

}  // namespace
}  // namespace kinetic
