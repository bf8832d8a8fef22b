// run/debug_attach.h: the launch configuration `run --debug` and `kinetic debug` print, and the
// local port they forward (debugpy's own when free).
#include "run/debug_attach.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"

namespace kinetic {
namespace {

TEST(DebugAttach, TheLaunchConfigurationAttachesVsCodesDebugpyAndMapsTheProject) {
  const auto launch = launch_configuration("job-1a2b3c4d", "127.0.0.1", 5678, "/home/me/proj",
                                           "/tmp/kinetic-debug/job-1a2b3c4d");
  EXPECT_EQ(launch.dump(),
            R"({"name":"kinetic: job-1a2b3c4d","type":"debugpy","request":"attach",)"
            R"("connect":{"host":"127.0.0.1","port":5678},"pathMappings":[{"localRoot":)"
            R"("/home/me/proj","remoteRoot":"/tmp/kinetic-debug/job-1a2b3c4d"}],)"
            R"("justMyCode":false})");
  const std::string text = attach_instructions(launch, 600);
  EXPECT_EQ(text.rfind("kinetic: debugpy of job-1a2b3c4d at 127.0.0.1:5678; the job waits up to "
                       "10m00s for a debugger. Add this to .vscode/launch.json's "
                       "\"configurations\", then Run > Start Debugging (F5):\n{\n",
                       0),
            0u)
      << text;
  EXPECT_EQ(text.substr(text.find("(F5):\n") + 6), launch.dump(2));
}

TEST(DebugAttach, TheProjectFolderIsMappedOnlyWhereItExists) {
  DebugSpec debug;
  debug.local_root = fs::temp_directory_path().string();
  EXPECT_EQ(local_root_here(debug), debug.local_root);
  debug.local_root = "/nowhere/on/this/machine";
  EXPECT_EQ(local_root_here(debug), "${workspaceFolder}");
}

class NoDialer : public PortDialer {
 public:
  std::unique_ptr<PortStream> dial(int) override { throw Error(Errc::internal, "not dialled"); }
  std::string wait_for_end(int) override { return ""; }
  std::string where() const override { return "nowhere"; }
};

TEST(DebugAttach, DebugpysPortTakenHereTheForwardTakesAnother) {
  // 5678 held (by this test, or already by someone else): either way it is taken.
  const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(kDebugPort);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool held =
      ::bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(holder, 1) == 0;
  NoDialer dialer;
  if (held) {
    const auto forwarder = debug_forwarder(dialer, "127.0.0.1", 0, 5678);
    EXPECT_NE(forwarder->mappings().front().local, kDebugPort);
    EXPECT_GT(forwarder->mappings().front().local, 0);
    EXPECT_EQ(forwarder->mappings().front().remote, 5678);
  }
  // A port asked for by name is not replaced: in use, it is the usage error port-forward gives.
  const int taken = held ? kDebugPort : 0;
  if (taken) {
    try {
      debug_forwarder(dialer, "127.0.0.1", taken, 5678);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
    }
  }
  ::close(holder);
}

}  // namespace
}  // namespace kinetic
