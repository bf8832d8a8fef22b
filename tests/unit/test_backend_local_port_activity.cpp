// --idle-stop's reading of the kernel's TCP tables and its clock (backend/local/port_activity.h).
#include "backend/local/port_activity.h"

#include <gtest/gtest.h>

namespace kinetic {
namespace {

// A /proc/net/tcp as the kernel writes it: port 8000 is 1F40. Line 1 listens on it (0A), line 2
// is a connection it accepted (01, local port 1F40), line 3 the client's side of that connection
// (its local port is the ephemeral one), line 4 one closing (06 TIME_WAIT).
constexpr const char* kTable =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n"
    "   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000 0 1\n"
    "   1: 0100007F:1F40 0100007F:A2C4 01 00000000:00000000 00:00000000 00000000  1000 0 2\n"
    "   2: 0100007F:A2C4 0100007F:1F40 01 00000000:00000000 00:00000000 00000000  1000 0 3\n"
    "   3: 0100007F:1F40 0100007F:A2C6 06 00000000:00000000 03:00000F9F 00000000     0 0 0\n";

TEST(PortActivity, CountsOnlyConnectionsTheServerAccepted) {
  const PortUse use = port_use(kTable, 8000);
  EXPECT_TRUE(use.listening);
  EXPECT_EQ(use.connections, 1);
  const PortUse client = port_use(kTable, 0xA2C4);  // the client's side, for its own port
  EXPECT_FALSE(client.listening);
  EXPECT_EQ(client.connections, 1);
  EXPECT_FALSE(port_use(kTable, 8001).listening);
  EXPECT_EQ(port_use("", 8000).connections, 0);
  EXPECT_EQ(port_use("garbage\n   0: nocolon 0 01\n", 8000).connections, 0);
}

TEST(PortActivity, TcpSixAddressesEndInThePortToo) {
  const char* six =
      "   0: 0000000000000000FFFF00000100007F:1F40 0000000000000000FFFF00000100007F:D2A0 01 "
      "00000000:00000000 00:00000000 00000000  1000 0 9\n";
  EXPECT_EQ(port_use(six, 8000).connections, 1);
}

TEST(PortActivity, QuietTimeCountsFromTheFirstListenAndEachConnectionSeen) {
  PortUse now;
  IdleWatch watch(30, [&now] { return now; });
  // Loading for longer than 30 s is not idleness: nothing listens yet.
  EXPECT_FALSE(watch.idle(1000));
  EXPECT_FALSE(watch.idle(1100));
  now.listening = true;
  EXPECT_FALSE(watch.idle(1101));
  EXPECT_FALSE(watch.idle(1130));
  now.connections = 1;               // a request comes at 1130.5, sampled at 1131
  EXPECT_FALSE(watch.idle(1130.5));  // within a second of the last sample: not sampled
  EXPECT_FALSE(watch.idle(1131));
  now.connections = 0;
  EXPECT_FALSE(watch.idle(1160));
  EXPECT_TRUE(watch.idle(1161));
}

TEST(PortActivity, TheVerdictIsACancelThatSaysWhy) {
  const StoppedVerdict v = idle_verdict(1800);
  EXPECT_EQ(v.state, "cancelled");
  EXPECT_EQ(v.exit_code, 130);
  EXPECT_EQ(v.error, "stopped after 30m00s without a request (--idle-stop)");
}

}  // namespace
}  // namespace kinetic
