#include "backend/gke/cluster_access.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "gcp/gke.h"

namespace kinetic::gke {

namespace {

fs::path cache_file(const Session& s) {
  return s.state_dir / "clusters" /
         (s.target.project + "_" + s.target.location + "_" + s.target.cluster + ".json");
}

}  // namespace

void remember_cluster_access(const Session& session, const ClusterAccess& access) {
  nlohmann::json j = {{"server", access.server}, {"caPem", access.ca_pem}};
  fs::path file = cache_file(session);
  make_dirs(file.parent_path());
  atomic_write(file, j.dump(), 0600, Durability::unsynced);
}

void forget_cluster_access(const Session& session) {
  std::error_code ec;
  fs::remove(cache_file(session), ec);
}

ClusterAccess cluster_access(const Session& session, bool refresh) {
  if (!refresh) {
    fs::path file = cache_file(session);
    if (auto text = read_file(file)) {
      try {
        auto j = nlohmann::json::parse(*text);
        ClusterAccess a{j.at("server").get<std::string>(), j.at("caPem").get<std::string>()};
        if (!a.server.empty() && !a.ca_pem.empty()) return a;
      } catch (const std::exception&) {
        // A damaged cache is just a cache miss.
      }
    }
  }
  gcp::GkeClient gke(*session.cloud, session.endpoint("container"), session.poll);
  const Target& t = session.target;
  auto cluster = gke.get_cluster(t.project, t.location, t.cluster);
  if (!cluster)
    throw Error(Errc::not_found, "cluster " + t.cluster + " not found in project " + t.project +
                                     " (" + t.location + "); create it with `kinetic up`");
  if (cluster->endpoint.empty() || cluster->ca_pem.empty())
    throw Error(Errc::api, "cluster " + t.cluster + " is " + cluster->status +
                               " and has no endpoint yet; wait for `kinetic up` to finish");
  ClusterAccess a{"https://" + cluster->endpoint, cluster->ca_pem};
  remember_cluster_access(session, a);
  return a;
}

KubeConnection connect_kube(const Session& session, const ClusterAccess& access) {
  KubeConnection c;
  c.transport = k8s::make_kube_transport(access.ca_pem, session.credentials, session.verbosity);
  c.client = std::make_unique<k8s::Client>(*c.transport, access.server);
  return c;
}

}  // namespace kinetic::gke
