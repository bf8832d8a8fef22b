// kinetic_fake_gcs: the fake GCS as a standalone server, for the Node/gcloud fidelity tests and
// manual use. Prints the port on the first stdout line, then serves until SIGINT/SIGTERM.
//
//   kinetic_fake_gcs [--host H] [--port N] [--bucket NAME]... [--fail-next N:STATUS[:RETRY_AFTER]]
//                    [--drop-after BYTES] [--fail-precondition-next]
//
// The faults may also come from the environment: KINETIC_FAKE_GCS_FAIL_NEXT=N:STATUS[:RETRY_AFTER],
// KINETIC_FAKE_GCS_DROP_AFTER=BYTES, KINETIC_FAKE_GCS_FAIL_PRECONDITION_NEXT=1,
// KINETIC_FAKE_GCS_BUCKETS=a,b.
#include "fakes/fake_gcs.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

int usage() {
  std::cerr << "usage: kinetic_fake_gcs [--host H] [--port N] [--bucket NAME]... "
               "[--fail-next N:STATUS[:RETRY_AFTER]] [--drop-after BYTES] "
               "[--fail-precondition-next]\n";
  return 2;
}

bool apply_fail_next(kinetic::fakes::FakeGcs& gcs, const std::string& spec) {
  int n = 0, status = 0, retry_after = -1;
  int got = std::sscanf(spec.c_str(), "%d:%d:%d", &n, &status, &retry_after);
  if (got < 2) return false;
  gcs.fail_next(n, status, got == 3 ? retry_after : -1);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  int port = 0;
  std::vector<std::string> buckets;
  std::vector<std::string> fail_next;
  std::string drop_after;
  bool precondition_next = false;

  if (const char* e = std::getenv("KINETIC_FAKE_GCS_FAIL_NEXT")) fail_next.emplace_back(e);
  if (const char* e = std::getenv("KINETIC_FAKE_GCS_DROP_AFTER")) drop_after = e;
  if (const char* e = std::getenv("KINETIC_FAKE_GCS_FAIL_PRECONDITION_NEXT"))
    precondition_next = std::string(e) == "1";
  if (const char* e = std::getenv("KINETIC_FAKE_GCS_BUCKETS")) {
    std::string list = e;
    for (std::size_t pos = 0; pos <= list.size();) {
      auto comma = list.find(',', pos);
      auto item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (!item.empty()) buckets.push_back(item);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }

  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::exit(usage());
      }
      return argv[++i];
    };
    if (a == "--host")
      host = value();
    else if (a == "--port")
      port = std::atoi(value().c_str());
    else if (a == "--bucket")
      buckets.push_back(value());
    else if (a == "--fail-next")
      fail_next.push_back(value());
    else if (a == "--drop-after")
      drop_after = value();
    else if (a == "--fail-precondition-next")
      precondition_next = true;
    else if (a == "-h" || a == "--help")
      return usage() - 2;
    else
      return usage();
  }

  // Block the signals before the server threads start so that sigwait() gets them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  kinetic::fakes::FakeGcs gcs(host, port);
  for (auto& b : buckets) gcs.create_bucket(b);
  for (auto& f : fail_next) {
    if (!apply_fail_next(gcs, f)) return usage();
  }
  if (!drop_after.empty()) gcs.drop_connection_after(std::stoull(drop_after));
  if (precondition_next) gcs.fail_precondition_next();

  std::cout << gcs.port() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  std::cerr << "kinetic_fake_gcs: " << gcs.total_requests() << " requests served\n";
  return 0;
}
