// kinetic_fake_gcp: the fake Service Usage, GKE, Cloud Build, Artifact Registry, Cloud Resource
// Manager and IAM APIs, wired to a fake GCS, as one standalone process for the gcloud fidelity
// test and manual use. Prints one JSON line with the base URLs (as api_endpoint_overrides take
// them), then serves until SIGINT/SIGTERM. --workload-identity starts the GKE metadata server of
// pods running as Kubernetes service account NS/KSA in PROJECT and adds its host ("127.0.0.1:PORT",
// for GCE_METADATA_HOST and gcloud's GCE_METADATA_ROOT) to the map as "metadata".
//
//   kinetic_fake_gcp [--enable-all] [--enable SERVICE]... [--operation-polls N] [--build-polls N]
//                    [--kube-endpoint HOST[:PORT]] [--kube-ca-file PEM]
//                    [--zone ZONE=TYPE,TYPE...]... [--unknown-package NAME]...
//                    [--workload-identity PROJECT/NS/KSA]
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/fake_gcp.h"
#include "fakes/fake_gcs.h"

namespace {

int usage() {
  std::cerr << "usage: kinetic_fake_gcp [--enable-all] [--enable SERVICE]... "
               "[--operation-polls N] [--build-polls N] [--kube-endpoint HOST[:PORT]] "
               "[--kube-ca-file PEM] [--zone ZONE=TYPE,TYPE...]... [--unknown-package NAME]... "
               "[--workload-identity PROJECT/NS/KSA]\n";
  return 2;
}

// A syntactically valid self-signed certificate (gcloud only copies it into the kubeconfig).
constexpr const char* kDefaultCa =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBdzCCAR2gAwIBAgIUKinetFakeGkeClusterCa0000000wCgYIKoZIzj0EAwIw\n"
    "ETEPMA0GA1UEAwwGZmFrZWNhMB4XDTI1MDEwMTAwMDAwMFoXDTM1MDEwMTAwMDAw\n"
    "MFowETEPMA0GA1UEAwwGZmFrZWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"
    "-----END CERTIFICATE-----\n";

}  // namespace

int main(int argc, char** argv) {
  kinetic::fakes::FakeGcpOptions options;
  options.kube_endpoint = "127.0.0.1:6443";
  options.kube_ca_pem = kDefaultCa;
  std::string workload_identity;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(usage());
      return argv[++i];
    };
    if (a == "--enable-all") {
      for (const char* s :
           {"container.googleapis.com", "cloudbuild.googleapis.com",
            "artifactregistry.googleapis.com", "serviceusage.googleapis.com",
            "storage.googleapis.com", "compute.googleapis.com", "logging.googleapis.com",
            "cloudresourcemanager.googleapis.com", "iam.googleapis.com"})
        options.enabled_services.insert(s);
    } else if (a == "--enable") {
      options.enabled_services.insert(value());
    } else if (a == "--operation-polls") {
      options.operation_polls = std::atoi(value().c_str());
    } else if (a == "--build-polls") {
      options.build_polls = std::atoi(value().c_str());
    } else if (a == "--kube-endpoint") {
      options.kube_endpoint = value();
    } else if (a == "--kube-ca-file") {
      std::ifstream in(value());
      if (!in) return usage();
      std::stringstream ss;
      ss << in.rdbuf();
      options.kube_ca_pem = ss.str();
    } else if (a == "--zone") {
      auto spec = value();
      auto eq = spec.find('=');
      if (eq == std::string::npos) return usage();
      auto& types = options.zone_machine_types[spec.substr(0, eq)];
      std::stringstream list(spec.substr(eq + 1));
      for (std::string t; std::getline(list, t, ',');)
        if (!t.empty()) types.insert(t);
    } else if (a == "--unknown-package") {
      options.unknown_packages.insert(value());
    } else if (a == "--workload-identity") {
      workload_identity = value();
      auto first = workload_identity.find('/');
      auto second = workload_identity.find('/', first + 1);
      if (first == std::string::npos || second == std::string::npos ||
          workload_identity.find('/', second + 1) != std::string::npos)
        return usage();
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      return usage();
    }
  }

  // Block the signals before the server threads start so that sigwait() gets them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  kinetic::fakes::FakeGcs gcs;
  options.gcs = &gcs;
  kinetic::fakes::FakeGcp gcp(options);
  nlohmann::json urls = {{"serviceusage", gcp.url("serviceusage")},
                         {"container", gcp.url("container")},
                         {"cloudbuild", gcp.url("cloudbuild")},
                         {"artifactregistry", gcp.url("artifactregistry")},
                         {"cloudresourcemanager", gcp.url("cloudresourcemanager")},
                         {"iam", gcp.url("iam")},
                         {"compute", gcp.url("compute")},
                         {"storage", gcs.url() + "/"}};
  if (!workload_identity.empty()) {
    auto first = workload_identity.find('/');
    auto second = workload_identity.find('/', first + 1);
    urls["metadata"] = gcp.workload_identity_metadata_host(
        workload_identity.substr(0, first), workload_identity.substr(first + 1, second - first - 1),
        workload_identity.substr(second + 1));
  }
  std::cout << urls.dump() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  std::cerr << "kinetic_fake_gcp: " << gcp.total_requests() << " API requests, "
            << gcs.total_requests() << " storage requests served\n";
  return 0;
}
