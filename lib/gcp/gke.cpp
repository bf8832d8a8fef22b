// GKE client. Decisions:
// - Creates are sent as idempotent (retried after a 5xx or a dropped connection): a replay of a
//   create that went through answers 409 ALREADY_EXISTS, which is treated as ours — the resource
//   is read back and, while it is still PROVISIONING, followed until it settles.
// - GKE runs one operation at a time per cluster: a create or delete that meets another one gets
//   400 FAILED_PRECONDITION "Cluster is running incompatible operation ..." (or 409 ABORTED).
//   Those are retried with the PollOptions backoff, through its sleeper, until its deadline.
// - Operations are polled at projects/P/locations/L/operations/NAME (docs/gcp-api.md §2.3).
#include "gcp/gke.h"

#include "core/checksum.h"
#include "core/error.h"
#include "gcp/google_error.h"
#include "gcp/json_fields.h"
#include "gcp/storage.h"

namespace kinetic::gcp {

using nlohmann::json;

namespace {

// GKE is busy with another operation on the cluster: worth waiting for.
bool cluster_busy(const http::Response& r) {
  if (r.status != 400 && r.status != 409) return false;
  GoogleErrorBody e = parse_google_error(r.status, r.body);
  if (e.message.find("incompatible operation") != std::string::npos) return true;
  return r.status == 409 && e.status == "ABORTED";
}

// Sends REQ, waiting out "Cluster is running incompatible operation" answers until the deadline.
http::Response send_when_idle(http::Transport& transport, const http::Request& req,
                              const PollOptions& poll, const std::string& what) {
  Backoff backoff(poll);
  for (;;) {
    auto r = transport.send(req);
    if (!cluster_busy(r)) return r;
    if (!backoff.wait()) {
      std::string said = parse_google_error(r.status, r.body).message;
      throw Error(Errc::api, what + ": the cluster is still busy with another operation" +
                                 (said.empty() ? "" : " (" + said + ")") +
                                 "; wait for it to finish and run the command again");
    }
  }
}

}  // namespace

ClusterInfo cluster_from_json(const json& j) {
  ClusterInfo c;
  c.name = str(j, "name");
  c.location = str(j, "location");
  if (c.location.empty()) c.location = str(j, "zone");
  c.status = str(j, "status");
  c.status_message = str(j, "statusMessage");
  c.endpoint = str(j, "endpoint");
  if (c.endpoint.empty()) {
    const json& ip = member(member(j, "controlPlaneEndpointsConfig"), "ipEndpointsConfig");
    c.endpoint = str(ip, "publicEndpoint");
  }
  std::string ca = str(member(j, "masterAuth"), "clusterCaCertificate");
  if (!ca.empty()) {
    auto pem = base64_decode(ca);
    if (!pem) throw Error(Errc::api, "the cluster's CA certificate is not valid base64");
    c.ca_pem = *pem;
  }
  c.version = str(j, "currentMasterVersion");
  c.raw = j;
  return c;
}

NodePoolInfo node_pool_from_json(const json& j) {
  NodePoolInfo p;
  p.name = str(j, "name");
  p.status = str(j, "status");
  p.status_message = str(j, "statusMessage");
  const json& config = member(j, "config");
  p.machine_type = str(config, "machineType");
  const json& spot = member(config, "spot");
  const json& preemptible = member(config, "preemptible");
  p.spot = (spot.is_boolean() && spot.get<bool>()) ||
           (preemptible.is_boolean() && preemptible.get<bool>());
  const json& flex_start = member(config, "flexStart");
  p.flex_start = flex_start.is_boolean() && flex_start.get<bool>();
  if (const json& labels = member(config, "labels"); labels.is_object()) {
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      if (it->is_string()) p.labels[it.key()] = it->get<std::string>();
    }
  }
  p.tpu_topology = str(member(j, "placementPolicy"), "tpuTopology");
  const json& gcfs = member(member(config, "gcfsConfig"), "enabled");
  p.image_streaming = gcfs.is_boolean() && gcfs.get<bool>();
  const json& autoscaling = member(j, "autoscaling");
  // totalMin/totalMax (pool-wide) and min/max (per zone) are mutually exclusive.
  if (autoscaling.contains("totalMinNodeCount") || autoscaling.contains("totalMaxNodeCount")) {
    p.min_nodes = as_int(member(autoscaling, "totalMinNodeCount"));
    p.max_nodes = as_int(member(autoscaling, "totalMaxNodeCount"));
  } else {
    p.min_nodes = as_int(member(autoscaling, "minNodeCount"));
    p.max_nodes = as_int(member(autoscaling, "maxNodeCount"));
  }
  p.initial_nodes = as_int(member(j, "initialNodeCount"));
  p.raw = j;
  return p;
}

GkeClient::GkeClient(http::Transport& transport, std::string endpoint, PollOptions poll)
    : transport_(transport), endpoint_(std::move(endpoint)), poll_(std::move(poll)) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
}

std::string GkeClient::base(const std::string& project, const std::string& location) const {
  return endpoint_ + "/v1/projects/" + encode_object_name(project) + "/locations/" +
         encode_object_name(location);
}

json GkeClient::wait(const std::string& project, const std::string& location, json operation,
                     const std::string& what) {
  std::string name = str(operation, "name");
  if (name.empty() && str(operation, "status") != "DONE")
    throw Error(Errc::api, what + ": GKE answered without an operation name");
  auto get = [&]() {
    http::Request req;
    req.url = base(project, location) + "/operations/" + encode_object_name(name);
    auto r = transport_.send(req);
    if (!ok(r.status))
      throw google_error(r.status, r.body, what + " (reading operation " + name + ")");
    return parse_json(r, what, "GKE");
  };
  return wait_gke_operation(get, std::move(operation), poll_, what);
}

std::optional<ClusterInfo> GkeClient::get_cluster(const std::string& project,
                                                  const std::string& location,
                                                  const std::string& name) {
  http::Request req;
  req.url = base(project, location) + "/clusters/" + encode_object_name(name);
  auto r = transport_.send(req);
  if (r.status == 404) return std::nullopt;
  std::string what = "reading cluster " + name + " in " + location;
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  return cluster_from_json(parse_json(r, what, "GKE"));
}

std::vector<ClusterInfo> GkeClient::list_clusters(const std::string& project,
                                                  const std::string& location) {
  http::Request req;
  req.url = base(project, location) + "/clusters";
  auto r = transport_.send(req);
  std::string what = "listing the clusters of project " + project;
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  std::vector<ClusterInfo> out;
  for (const auto& c : parse_json(r, what, "GKE").value("clusters", json::array()))
    out.push_back(cluster_from_json(c));
  return out;
}

ClusterInfo GkeClient::update_cluster(const std::string& project, const std::string& location,
                                      const std::string& name, const json& update) {
  std::string what = "updating cluster " + name + " in " + location;
  http::Request req;
  req.method = "PUT";
  req.url = base(project, location) + "/clusters/" + encode_object_name(name);
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json({{"update", update}}).dump();
  // Safe to replay: the update sets a desired state.
  req.idempotent = true;
  auto r = send_when_idle(transport_, req, poll_, what);
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  wait(project, location, parse_json(r, what, "GKE"), what);
  auto c = get_cluster(project, location, name);
  if (!c) throw Error(Errc::api, what + ": the cluster is gone");
  return *c;
}

ClusterInfo GkeClient::create_cluster(const std::string& project, const std::string& location,
                                      const json& cluster) {
  std::string name = str(cluster, "name");
  std::string what = "creating cluster " + name + " in " + location;
  http::Request req;
  req.method = "POST";
  req.url = base(project, location) + "/clusters";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json({{"cluster", cluster}}).dump();
  // Safe to replay: a replay of a create that went through answers 409, handled below.
  req.idempotent = true;
  auto r = send_when_idle(transport_, req, poll_, what);
  if (r.status != 409 && !ok(r.status)) throw google_error(r.status, r.body, what);
  if (ok(r.status)) wait(project, location, parse_json(r, what, "GKE"), what);

  // The cluster as it is now; after a 409, follow one that is still coming up.
  Backoff backoff(poll_);
  for (;;) {
    auto c = get_cluster(project, location, name);
    if (!c) {
      if (r.status == 409 && backoff.wait()) continue;  // deleted in between, or not visible yet
      throw Error(Errc::api, what + ": GKE reported the cluster as created but it cannot be read");
    }
    if (c->status == "ERROR")
      throw Error(Errc::api, what + ": GKE: the cluster is in ERROR" +
                                 (c->status_message.empty() ? "" : " (" + c->status_message + ")") +
                                 "; delete it (kinetic down) and create it again");
    if (c->status == "STOPPING")
      throw Error(Errc::api, what +
                                 ": the cluster is being deleted; wait for that to finish and "
                                 "run the command again");
    if (c->status != "PROVISIONING") return *c;
    if (!backoff.wait())
      throw Error(Errc::api, what + ": the cluster is still " + c->status +
                                 "; check again later (or run the command again)");
  }
}

bool GkeClient::delete_cluster(const std::string& project, const std::string& location,
                               const std::string& name) {
  std::string what = "deleting cluster " + name + " in " + location;
  http::Request req;
  req.method = "DELETE";
  req.url = base(project, location) + "/clusters/" + encode_object_name(name);
  auto r = send_when_idle(transport_, req, poll_, what);
  if (r.status == 404) return false;
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  wait(project, location, parse_json(r, what, "GKE"), what);
  return true;
}

std::vector<NodePoolInfo> GkeClient::list_node_pools(const std::string& project,
                                                     const std::string& location,
                                                     const std::string& cluster) {
  std::string what = "listing node pools of cluster " + cluster + " in " + location;
  http::Request req;
  req.url = base(project, location) + "/clusters/" + encode_object_name(cluster) + "/nodePools";
  auto r = transport_.send(req);
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  json j = parse_json(r, what, "GKE");
  std::vector<NodePoolInfo> pools;
  if (const json& list = member(j, "nodePools"); list.is_array()) {
    for (const auto& p : list) pools.push_back(node_pool_from_json(p));
  }
  return pools;
}

NodePoolInfo GkeClient::create_node_pool(const std::string& project, const std::string& location,
                                         const std::string& cluster, const json& pool) {
  std::string name = str(pool, "name");
  std::string what = "creating node pool " + name;
  std::string pools =
      base(project, location) + "/clusters/" + encode_object_name(cluster) + "/nodePools";
  http::Request req;
  req.method = "POST";
  req.url = pools;
  req.headers = {{"Content-Type", "application/json"}};
  req.body = json({{"nodePool", pool}}).dump();
  req.idempotent = true;  // a replay answers 409, handled below
  auto r = send_when_idle(transport_, req, poll_, what);
  if (r.status != 409 && !ok(r.status)) throw google_error(r.status, r.body, what);
  if (ok(r.status)) wait(project, location, parse_json(r, what, "GKE"), what);

  auto get = [&]() -> std::optional<NodePoolInfo> {
    http::Request g;
    g.url = pools + "/" + encode_object_name(name);
    auto gr = transport_.send(g);
    if (gr.status == 404) return std::nullopt;
    if (!ok(gr.status)) throw google_error(gr.status, gr.body, "reading node pool " + name);
    return node_pool_from_json(parse_json(gr, "reading node pool " + name, "GKE"));
  };
  Backoff backoff(poll_);
  for (;;) {
    auto p = get();
    if (!p) {
      if (r.status == 409 && backoff.wait()) continue;
      throw Error(Errc::api,
                  what + ": GKE reported the node pool as created but it cannot be read");
    }
    // Only a replayed create (409) can find the pool still on its way.
    if (r.status != 409 || p->status != "PROVISIONING") return *p;
    if (!backoff.wait())
      throw Error(Errc::api, what +
                                 ": the node pool is still PROVISIONING; check again later (or "
                                 "run the command again)");
  }
}

bool GkeClient::delete_node_pool(const std::string& project, const std::string& location,
                                 const std::string& cluster, const std::string& pool) {
  std::string what = "deleting node pool " + pool;
  http::Request req;
  req.method = "DELETE";
  req.url = base(project, location) + "/clusters/" + encode_object_name(cluster) + "/nodePools/" +
            encode_object_name(pool);
  auto r = send_when_idle(transport_, req, poll_, what);
  if (r.status == 404) return false;
  if (!ok(r.status)) throw google_error(r.status, r.body, what);
  wait(project, location, parse_json(r, what, "GKE"), what);
  return true;
}

}  // namespace kinetic::gcp
