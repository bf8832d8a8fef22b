// Start-up loads only what a command needs (issue #11 point 8, lib/lazy/lazy_library.h): the
// quick commands never map libcurl, libarchive or libcrypto, and the commands that need them
// load them on first use. Checked with the dynamic linker's own record (LD_DEBUG=files), which
// names every object it maps, from the link or from dlopen.
#include <gtest/gtest.h>

#include <set>

#include "cli_harness.h"

namespace kinetic::test {
namespace {

const char* const kLazy[] = {"libcurl.so.4", "libarchive.so.13", "libcrypto.so.3"};

class Startup : public ::testing::Test {
 protected:
  void SetUp() override { proj = sb.project(); }

  // The lazily loaded libraries a kinetic command (and any process it started) mapped.
  std::set<std::string> loaded_by(const std::vector<std::string>& args, int want_exit = 0) {
    fs::path trace = sb.root() / "ld-trace";
    fs::remove_all(trace);
    fs::create_directories(trace);
    auto r =
        sb.run(args, proj, {{"LD_DEBUG", "files"}, {"LD_DEBUG_OUTPUT", (trace / "ld").string()}});
    EXPECT_EQ(r.exit_code, want_exit) << r.err;
    std::set<std::string> found;
    for (const auto& f : fs::directory_iterator(trace)) {
      std::string text = slurp(f.path());
      for (const char* lib : kLazy) {
        if (text.find(std::string("file=") + lib) != std::string::npos) found.insert(lib);
      }
    }
    return found;
  }

  Sandbox sb;
  fs::path proj;
};

TEST_F(Startup, QuickCommandsLoadNoneOfTheHeavyLibraries) {
  const std::vector<std::vector<std::string>> quick = {
      {"version"},
      {"--help"},
      {"run", "--help"},
      {"completion", "bash"},
      {"config", "view"},
      {"config", "get-contexts"},
      {"accelerators", "-o", "json"},
  };
  for (const auto& args : quick) {
    EXPECT_EQ(loaded_by(args), std::set<std::string>{}) << args[0];
  }
}

TEST_F(Startup, ALocalRunLoadsWhatItUsesAndStatusAndLogsLoadNothing) {
  sb.write("proj/hi.sh", "echo hi\n");
  // The control: packing the project needs libarchive, so a trace that saw nothing would fail
  // here rather than pass the other checks by not seeing anything.
  auto run = loaded_by({"run", "hi.sh"});
  EXPECT_TRUE(run.count("libarchive.so.13")) << "the trace did not see the dlopen";
  EXPECT_FALSE(run.count("libcurl.so.4")) << "a local run makes no HTTP request";

  auto listed = sb.run({"status", "-o", "name"}, proj);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::string id = first_line(listed.out);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(loaded_by({"status"}), std::set<std::string>{});
  EXPECT_EQ(loaded_by({"status", id, "-o", "json"}), std::set<std::string>{});
  EXPECT_EQ(loaded_by({"logs", id}), std::set<std::string>{});
}

}  // namespace
}  // namespace kinetic::test
