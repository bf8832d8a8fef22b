// kinetic_fake_cloud: the whole fake cloud (GCS, Service Usage, GKE, Cloud Build, Artifact
// Registry and a Kubernetes API running pods as local processes) as one standalone server, for
// benchmarks and trying kinetic by hand. Prints the environment that points kinetic at it, one
// `export NAME=VALUE` line each, then a blank line, and serves until SIGINT/SIGTERM:
//
//   eval "$(kinetic_fake_cloud --enable-all | sed '/^$/q')"
//   kinetic up --project demo --zone us-central1-a --accelerator v5litepod-1
//
// --round-trip-ms MS delays every request by MS (fake_latency.h), for bench/.
// --write-quota N lets each bucket and the Kubernetes API server take N writes a second, and
// answers the writes past it with the services' 429s (fake_quota.h); on exit the fake prints how
// many it refused, one "kinetic_fake_cloud: rate_limited SERVICE N" line each on stderr.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "fakes/fake_cloud.h"
#include "fakes/fake_latency.h"

namespace {
volatile sig_atomic_t g_stop = 0;
void on_signal(int) {
  g_stop = 1;
}
}  // namespace

int main(int argc, char** argv) {
  kinetic::fakes::FakeCloudOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--enable-all") == 0) {
      options.all_services_enabled = true;
    } else if (std::strcmp(argv[i], "--write-quota") == 0 && i + 1 < argc) {
      options.write_quota = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--round-trip-ms") == 0 && i + 1 < argc) {
      kinetic::fakes::set_round_trip_ms(std::atoi(argv[++i]));
    } else {
      std::cerr
          << "usage: kinetic_fake_cloud [--enable-all] [--round-trip-ms MS] [--write-quota N]\n";
      return 2;
    }
  }
  // A handler, not a blocked mask: pods are forked from here and must get signals normally.
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  kinetic::fakes::FakeCloud cloud(options);
  for (const auto& [name, value] : cloud.client_env())
    std::printf("export %s=%s\n", name.c_str(), value.c_str());
  std::printf("\n");
  std::fflush(stdout);
  while (!g_stop) pause();
  auto kube_counts = cloud.kube().request_counts();
  std::fprintf(
      stderr, "kinetic_fake_cloud: rate_limited gcs %d\nkinetic_fake_cloud: rate_limited kube %d\n",
      cloud.gcs().request_count("rate_limited"), kube_counts["rate_limited"]);
  return 0;
}
