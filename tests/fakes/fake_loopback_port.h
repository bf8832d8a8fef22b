// A loopback port nothing listens on, for a server a test starts itself (the fakes' pods share
// this machine's network): shared by the integration and end-to-end tests.
#pragma once

namespace kinetic::fakes {

// A port the kernel just gave and took back on 127.0.0.1: free unless another process takes it
// in between, which the tests accept (each binds it at once).
int unused_loopback_port();

}  // namespace kinetic::fakes
