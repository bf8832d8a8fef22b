// A simulated network round trip: every fake server (GCS, the GCP control plane, the Kubernetes
// API) waits this long before it serves a request, as a laptop's round trip to Google's APIs
// (30-150 ms) would. bench/ counts the round trips a command makes one after another as
// (wall at L - wall at 0) / L. The default, 0, adds nothing; tests never set it.
#pragma once

namespace httplib {
class Server;
}

namespace kinetic::fakes {

void set_round_trip_ms(int ms);
int round_trip_ms();
// Makes SERVER wait round_trip_ms() before routing each request (its pre-routing handler).
void simulate_round_trips(httplib::Server& server);

}  // namespace kinetic::fakes
