// kinetic_fake_kube: the fake Kubernetes API server as a standalone process, for the kubectl
// fidelity test (tests/kubectl/run_kubectl.sh) and manual use. Prints the port on the first
// stdout line, writes the CA certificate to --ca-file, then serves until SIGINT/SIGTERM.
//
//   kinetic_fake_kube [--ca-file PATH] [--token T] [--cluster NAME] [--work-root DIR]
//                     [--grace SECONDS] [--no-default-pool] [--no-jobset]
//                     [--pool NAME[:label=v,label2=v2[:resource=N[:max]]]]...
//
// Without --pool (and without --no-default-pool) the cluster has one node in "default-pool".
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "fakes/fake_kube.h"

namespace {

int usage() {
  std::cerr << "usage: kinetic_fake_kube [--ca-file PATH] [--token T] [--cluster NAME] "
               "[--work-root DIR] [--grace SECONDS] [--no-default-pool] [--no-jobset] "
               "[--pool NAME[:label=v,...[:resource=N,...[:max]]]]...\n";
  return 2;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

// NAME:label=v,label2=v2:resource=N:max (labels, resources and max optional). A pool with
// extended resources starts with no node (the autoscaler adds them); others start with one.
bool parse_pool(const std::string& spec, kinetic::fakes::FakeNodePool& pool) {
  auto parts = split(spec, ':');
  if (parts.empty() || parts[0].empty()) return false;
  pool.name = parts[0];
  auto kv = [](const std::string& list, std::map<std::string, std::string>& out) {
    for (auto& item : split(list, ',')) {
      if (item.empty()) continue;
      auto eq = item.find('=');
      if (eq == std::string::npos) return false;
      out[item.substr(0, eq)] = item.substr(eq + 1);
    }
    return true;
  };
  if (parts.size() > 1 && !kv(parts[1], pool.labels)) return false;
  if (parts.size() > 2 && !kv(parts[2], pool.allocatable)) return false;
  pool.max_nodes = parts.size() > 3 ? std::atoi(parts[3].c_str()) : 1;
  pool.nodes = pool.allocatable.empty() ? 1 : 0;
  for (auto& [k, v] : pool.allocatable)
    if (k == "google.com/tpu" || k == "nvidia.com/gpu")
      pool.taints.push_back({k, "present", "NoSchedule"});
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  kinetic::fakes::FakeKubeOptions options;
  std::string ca_file;
  std::vector<kinetic::fakes::FakeNodePool> pools;
  bool default_pool = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(usage());
      return argv[++i];
    };
    if (a == "--ca-file") {
      ca_file = value();
    } else if (a == "--token") {
      options.expected_token = value();
    } else if (a == "--cluster") {
      options.cluster = value();
    } else if (a == "--work-root") {
      options.work_root = value();
    } else if (a == "--grace") {
      options.default_grace_seconds = std::atoi(value().c_str());
    } else if (a == "--no-default-pool") {
      default_pool = false;
    } else if (a == "--no-jobset") {  // a fresh GKE cluster: JobSet only once applied
      options.jobset_installed = false;
    } else if (a == "--pool") {
      kinetic::fakes::FakeNodePool pool;
      if (!parse_pool(value(), pool)) return usage();
      pools.push_back(pool);
    } else if (a == "-h" || a == "--help") {
      return usage() - 2;
    } else {
      return usage();
    }
  }
  if (pools.empty() && default_pool) {
    kinetic::fakes::FakeNodePool pool;
    pool.name = "default-pool";
    pool.nodes = 1;
    pool.max_nodes = 3;
    pools.push_back(pool);
  }

  // Block the signals before any thread starts so that sigwait() gets them (pod processes get
  // a clean mask and dispositions).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  kinetic::fakes::FakeKube kube(options);
  for (auto& p : pools) kube.set_node_pool(p);
  if (!ca_file.empty()) {
    std::ofstream out(ca_file);
    out << kube.ca_pem();
    if (!out) {
      std::cerr << "kinetic_fake_kube: cannot write " << ca_file << "\n";
      return 1;
    }
  }
  std::cout << kube.port() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  std::cerr << "kinetic_fake_kube: " << kube.total_requests() << " requests served\n";
  return 0;
}
