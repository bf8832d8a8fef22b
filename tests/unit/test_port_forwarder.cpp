// kubectl's [LOCAL:]REMOTE port syntax (backend/port_forwarder.h), each refusal one line.
#include <gtest/gtest.h>

#include "backend/port_forwarder.h"
#include "core/error.h"

namespace kinetic {
namespace {

TEST(PortMapping, KubectlsThreeForms) {
  PortMapping m = parse_port_mapping("8080");
  EXPECT_EQ(m.local, 8080);
  EXPECT_EQ(m.remote, 8080);
  m = parse_port_mapping("9000:8080");
  EXPECT_EQ(m.local, 9000);
  EXPECT_EQ(m.remote, 8080);
  m = parse_port_mapping(":8080");
  EXPECT_EQ(m.local, 0);  // any free port
  EXPECT_EQ(m.remote, 8080);
}

TEST(PortMapping, RefusesWhatIsNoPort) {
  for (const char* bad : {"0", "70000", "", ":", "8080:", "http", "80:90:100", "-1", "8080 "}) {
    try {
      parse_port_mapping(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << bad;
      EXPECT_NE(std::string(e.what()).find("ports are 1 to 65535"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace kinetic
