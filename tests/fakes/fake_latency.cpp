#include "fakes/fake_latency.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kinetic::fakes {

namespace {
std::atomic<int> g_round_trip_ms{0};
}

void set_round_trip_ms(int ms) {
  g_round_trip_ms = ms < 0 ? 0 : ms;
}

int round_trip_ms() {
  return g_round_trip_ms;
}

void simulate_round_trips(httplib::Server& server) {
  server.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    if (const int ms = g_round_trip_ms; ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return httplib::Server::HandlerResponse::Unhandled;
  });
}

}  // namespace kinetic::fakes
