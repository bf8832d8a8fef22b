#include "backend/gke/provisioner.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "backend/gke/auto_down.h"
#include "backend/gke/cluster_access.h"
#include "backend/gke/job_identity.h"
#include "backend/gke/jobset_release.h"
#include "backend/gke/kueue.h"
#include "backend/gke/names.h"
#include "backend/gke/node_service_account.h"
#include "core/error.h"
#include "core/strings.h"
#include "gcp/artifact_registry.h"
#include "gcp/compute.h"
#include "gcp/service_usage.h"
#include "gcp/storage.h"
#include "job/pricing.h"

namespace kinetic::gke {

using gcp::BucketInfo;

namespace {

// The bucket's lifecycle (docs/run-record.md): a context goes kStagingDays after a run last used
// it (its customTime, which every run and every attempt refreshes), so a job running for weeks
// keeps it; an image's build source kStagingDays after the build. Job records (jobs/) have no
// rule: a live job's spec and checkpoints must outlive any age, and `kinetic cleanup` removes
// finished jobs' records. A parallel upload's parts (uploads/) live minutes; a day on, any a
// crash left behind goes.
std::vector<gcp::LifecycleRule> lifecycle_rules() {
  return {{kStagingDays, true, {kContextsPrefix}},
          {kStagingDays, false, {kBuildsPrefix}},
          {kUploadPartDays, false, {kUploadsPrefix}}};
}

}  // namespace

Provisioner::Provisioner(const Session& session,
                         std::function<void(const ClusterChange&)> on_change)
    : session_(session), on_change_(std::move(on_change)) {}

void Provisioner::record(std::vector<ClusterChange>& changes, ClusterChange change) {
  if (on_change_) on_change_(change);
  changes.push_back(std::move(change));
}

gcp::ClusterInfo Provisioner::ensure_cluster(const UpOptions& options,
                                             std::vector<ClusterChange>& changes) {
  const Target& t = session_.target;
  gcp::GkeClient gke(*session_.cloud, session_.endpoint("container"), session_.poll);
  if (auto existing = gke.get_cluster(t.project, t.location, t.cluster)) {
    if (existing->status == "ERROR" || existing->status == "STOPPING")
      throw Error(Errc::api,
                  "cluster " + t.cluster + " is " + existing->status +
                      (existing->status_message.empty() ? std::string()
                                                        : " (" + existing->status_message + ")") +
                      "; delete it with `kinetic down --yes` and run `kinetic up` again");
    record(changes, {"cluster", t.cluster, "exists"});
    if (existing->status == "RUNNING" && !has_gcs_fuse_addon(existing->raw)) {
      // A cluster from an older kinetic, or made by hand: `run --data gs://` needs the driver.
      auto updated = gke.update_cluster(t.project, t.location, t.cluster,
                                        {{"desiredAddonsConfig", gcs_fuse_addon()}});
      record(changes, {"cluster add-on", "Cloud Storage FUSE CSI driver", "enabled"});
      return updated;
    }
    if (existing->status == "RUNNING") return *existing;
    // Still provisioning (an interrupted `up`): creating again answers 409 and waits for it.
  }
  std::vector<std::string> candidates =
      options.default_machine_type.empty() ? default_machine_candidates()
                                           : std::vector<std::string>{options.default_machine_type};
  for (size_t i = 0; i < candidates.size(); ++i) {
    ClusterOptions co;
    co.project = t.project;
    co.name = t.cluster;
    co.release_channel = options.release_channel;
    co.default_machine_type = candidates[i];
    if (t.location == t.region) {
      // A regional cluster's nodes in one zone (xpk's --node-locations), not one in each.
      try {
        co.zone = zone_for(candidates[i], "the default pool");
      } catch (const Error&) {
        if (i + 1 < candidates.size() && options.default_machine_type.empty()) continue;
        throw;
      }
    }
    co.node_service_account = node_service_account(t.project);
    try {
      gcp::ClusterInfo created = gke.create_cluster(t.project, t.location, cluster_request(co));
      if (changes.empty() || changes.back().kind != "cluster")
        record(changes, {"cluster",
                         t.cluster + " (" + t.location + ", default pool " + candidates[i] +
                             (co.zone.empty() ? "" : " in " + co.zone) + ")",
                         "created"});
      return created;
    } catch (const Error& e) {
      const bool last = i + 1 == candidates.size();
      if (last || !options.default_machine_type.empty() || !is_machine_type_unavailable(e.what()))
        throw;
      // This zone does not offer the type (a TPU-only zone may lack E2): try the next one.
    }
  }
  throw Error(Errc::internal, "no machine type to try");
}

std::vector<ClusterChange> Provisioner::up(const UpOptions& options) {
  std::vector<ClusterChange> changes;
  const Target& t = session_.target;

  gcp::ServiceUsageClient services(*session_.cloud, session_.endpoint("serviceusage"));
  // Auto-down's grant, like the nodes', is in the project's IAM policy (Resource Manager, which
  // required_services() holds).
  std::vector<std::string> wanted = required_services();
  std::vector<std::string> off = services.disabled(t.project, wanted);
  if (!off.empty()) {
    services.enable(t.project, off, session_.poll);
    for (const auto& s : off) record(changes, {"service", s, "enabled"});
  }

  // The nodes' account first: GKE refuses a pool naming an account that does not exist.
  ensure_node_account([&](ClusterChange c) { record(changes, std::move(c)); });
  gcp::ClusterInfo cluster = ensure_cluster(options, changes);
  remember_cluster_access(session_, {"https://" + cluster.endpoint, cluster.ca_pem});

  for (const Accelerator& a : options.accelerators) {
    if (a.family == AcceleratorFamily::cpu && !options.pool.spot) continue;  // the default pool
    // `up --slices N` makes N pools of each multi-host TPU given, one of any other.
    PoolOptions pool = options.pool;
    if (a.hosts < 2) pool.slices = 1;
    for (auto& c : add_pools(a, pool)) changes.push_back(std::move(c));  // reported by add_pool
  }

  // Multi-host slices run as JobSets, which GKE does not ship (jobset_release.h). A cluster of
  // single-host pools never needs it, so its `up` reads nothing from GitHub.
  const bool slice_requested = std::any_of(options.accelerators.begin(), options.accelerators.end(),
                                           [](const Accelerator& a) { return a.hosts > 1; });
  if (slice_requested || has_slice_pool())
    changes.push_back(ensure_jobset_for_slices(options.jobset_manifests));  // reported by it

  // Queues last among the cluster's own objects: their quotas are the pools' sizes. Without
  // --queue, pools added here change the quotas of queues that are on.
  const bool pools_asked = std::any_of(
      options.accelerators.begin(), options.accelerators.end(), [&](const Accelerator& a) {
        return a.family != AcceleratorFamily::cpu || options.pool.spot;
      });
  if (options.queue || pools_asked) {
    auto conn = connect_kube(session_, cluster_access(session_));
    auto report = [&](ClusterChange c) { record(changes, std::move(c)); };
    if (!options.queue)
      follow_pools(*conn.client, list_pools(), t.ns, report);
    else if (*options.queue)
      ensure_queues(session_, *conn.client, options.kueue_manifests, list_pools(), t.ns,
                    options.queue_fair, report);
    else
      remove_queues(*conn.client, t.ns, report);
  }

  gcp::ArtifactRegistryClient registry(*session_.cloud, session_.endpoint("artifactregistry"),
                                       session_.poll);
  auto [repo, created] =
      registry.ensure_repository(t.project, t.region, kRepository, "kinetic job images");
  (void)repo;
  record(changes, {"repository", t.region + "-docker.pkg.dev/" + t.project + "/" + kRepository,
                   created ? "created" : "exists"});

  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  const bool had_bucket = storage.get_bucket(bucket).has_value();
  BucketInfo info = storage.ensure_bucket(t.project, bucket, t.region, lifecycle_rules());
  record(changes, {"bucket", "gs://" + bucket, had_bucket ? "exists" : "created"});
  // Said on every `up`, so a user knows what the bucket keeps how long without reading docs.
  const bool lifecycle_updated = had_bucket && storage.ensure_lifecycle(bucket, lifecycle_rules());
  record(changes, {"bucket lifecycle",
                   "contexts/ " + std::to_string(kStagingDays) +
                       " days after their last use, builds/ " + std::to_string(kStagingDays) +
                       " days after the build, uploads/ (parts of an upload cut short) " +
                       std::to_string(kUploadPartDays) +
                       " day, jobs/ until `kinetic cleanup` (by default 7 days after they "
                       "finish)",
                   !had_bucket         ? "created"
                   : lifecycle_updated ? "updated"
                                       : "exists"});

  // Pods run as kinetic-job through Workload Identity (job_identity.h): it reads contexts and
  // writes results in the bucket, nothing else.
  if (!info.project_number.empty())
    grant_jobs_bucket(session_, info.project_number,
                      [&](ClusterChange c) { record(changes, std::move(c)); });

  if (options.auto_down) {
    auto conn = connect_kube(session_, cluster_access(session_));
    auto report = [&](ClusterChange c) { record(changes, std::move(c)); };
    if (*options.auto_down == 0) {
      remove_auto_down(session_, conn.client.get(), report);
    } else {
      if (info.project_number.empty())
        throw Error(Errc::api, "the bucket gs://" + bucket +
                                   " did not say its project number, which auto-down's "
                                   "principal needs; try `kinetic up` again");
      install_auto_down(session_, *conn.client, info.project_number, *options.auto_down, report);
    }
  }
  return changes;
}

std::string Provisioner::zone_for(const std::string& machine_type, const std::string& what) {
  const Target& t = session_.target;
  if (t.location != t.region) return t.location;
  gcp::ComputeClient compute(*session_.cloud, session_.endpoint("compute"));
  const std::vector<std::string> zones = compute.region_zones(t.project, t.region);
  for (const auto& zone : zones)
    if (compute.zone_offers(t.project, zone, machine_type)) return zone;
  std::string listed;
  for (const auto& zone : zones) listed += (listed.empty() ? "" : ", ") + zone;
  throw Error(Errc::usage, "no zone of " + t.region + " (" + listed + ") offers " + machine_type +
                               " for " + what + "; run `kinetic up` with --region or --zone " +
                               "where it exists (TPUs: https://cloud.google.com/tpu/docs/" +
                               "regions-zones; GPUs: https://cloud.google.com/compute/docs/" +
                               "gpus/gpu-regions-zones)");
}

void Provisioner::ensure_node_account(const std::function<void(ClusterChange)>& report) {
  if (node_account_ready_) return;
  ensure_node_service_account(session_, report);
  node_account_ready_ = true;
}

ClusterChange Provisioner::add_pool(const Accelerator& accelerator,
                                    const PoolOptions& pool_options) {
  const Target& t = session_.target;
  gcp::GkeClient gke(*session_.cloud, session_.endpoint("container"), session_.poll);
  PoolOptions options = pool_options;
  options.service_account = node_service_account(t.project);
  nlohmann::json request = node_pool_request(accelerator, options);
  const std::string name = request["name"];
  // "v5litepod-16-slice-2 (slice 2 of 2, ...": which of a multislice run's pools it is.
  const std::string of_slices = options.slices > 1
                                    ? "slice " + std::to_string(options.slice + 1) + " of " +
                                          std::to_string(options.slices) + ", "
                                    : std::string();
  for (const auto& p : gke.list_node_pools(t.project, t.location, t.cluster)) {
    if (p.name == name) {
      ClusterChange c{"node pool", name, "exists"};
      if (on_change_) on_change_(c);
      return c;
    }
  }
  // `pool add` on a cluster from an older kinetic: the account may not exist yet. Only what it
  // changes is worth a line there.
  ensure_node_account([&](const ClusterChange& c) {
    if (c.action != "exists" && on_change_) on_change_(c);
  });
  const std::string zone = zone_for(accelerator.machine_type, accelerator.name);
  gke.create_node_pool(t.project, t.location, t.cluster,
                       node_pool_request(accelerator, options, zone));
  std::string what = name + " (" + of_slices + accelerator.machine_type +
                     (accelerator.topology.empty() ? "" : ", " + accelerator.topology) +
                     (t.location == zone ? "" : ", in " + zone);
  // A flex-start pool has no node until GKE finds the capacity: say so where it is made.
  if (accelerator.flex_start || options.flex_start)
    what += ", flex-start: nodes come when GKE has the capacity";
  // What a node costs while it is up, and a multi-host slice, which comes up whole.
  // On Spot: your Spot price when the prices setting has one, else the on-demand price and a
  // word on how to price Spot (the catalog has no Spot prices).
  const bool on_spot = accelerator.spot || options.spot;
  const std::optional<double> spot_slice =
      on_spot ? spot_price(accelerator, session_.prices) : std::nullopt;
  const std::optional<double> spot_node =
      on_spot ? spot_node_price_per_hour(accelerator.machine_type, session_.prices) : std::nullopt;
  const bool yours = negotiated(accelerator, session_.prices);
  std::string basis = yours ? " (your price)" : " on demand";
  std::string spot;
  if (on_spot && (accelerator.hosts > 1 ? spot_slice : spot_node)) {
    basis = " (your Spot price)";
  } else if (on_spot) {
    spot = ", Spot costs less (`kinetic config set prices " + accelerator.name +
           ":spot=USD` shows it)";
  }
  if (accelerator.hosts > 1) {
    what += "; a slice is " + std::to_string(accelerator.hosts) + " nodes, " +
            format_usd(spot_slice ? *spot_slice : accelerator_price(accelerator, session_.prices)) +
            "/h" + basis + " while up" + spot;
  } else if (auto each = spot_node
                             ? spot_node
                             : node_price_per_hour(accelerator.machine_type, session_.prices)) {
    what += "; " + format_usd(*each) + "/h per node" + basis + " while up" + spot;
  }
  ClusterChange c{"node pool", what + ")", "created"};
  if (on_change_) on_change_(c);
  return c;
}

std::vector<ClusterChange> Provisioner::add_pools(const Accelerator& accelerator,
                                                  const PoolOptions& options) {
  std::vector<ClusterChange> changes;
  for (int slice = 0; slice < std::max(1, options.slices); ++slice) {
    PoolOptions one = options;
    one.slice = slice;
    changes.push_back(add_pool(accelerator, one));
  }
  return changes;
}

bool Provisioner::has_slice_pool() {
  const Target& t = session_.target;
  gcp::GkeClient gke(*session_.cloud, session_.endpoint("container"), session_.poll);
  for (const auto& p : gke.list_node_pools(t.project, t.location, t.cluster))
    if (!p.tpu_topology.empty()) return true;  // only a multi-host pool has a placement policy
  return false;
}

ClusterChange Provisioner::ensure_jobset_for_slices(const std::string& source) {
  auto conn = connect_kube(session_, cluster_access(session_));
  ClusterChange c = ensure_jobset(session_, *conn.client, source);
  if (on_change_) on_change_(c);
  return c;
}

ClusterChange Provisioner::remove_pool(const std::string& name) {
  const Target& t = session_.target;
  gcp::GkeClient gke(*session_.cloud, session_.endpoint("container"), session_.poll);
  if (name == "default-pool")
    throw Error(Errc::usage,
                "default-pool runs the cluster's own services; remove the cluster with `kinetic "
                "down` instead");
  if (!gke.delete_node_pool(t.project, t.location, t.cluster, name)) {
    std::vector<std::string> names;
    for (const auto& p : gke.list_node_pools(t.project, t.location, t.cluster))
      names.push_back(p.name);
    auto close = closest_matches(name, names);
    throw Error(Errc::not_found, "node pool " + name + " not found in cluster " + t.cluster +
                                     (close.empty() ? std::string("; see `kinetic pool list`")
                                                    : "; did you mean " + join_or(close) + "?"));
  }
  ClusterChange c{"node pool", name, "deleted"};
  if (on_change_) on_change_(c);
  return c;
}

std::vector<PoolRow> Provisioner::list_pools() {
  const Target& t = session_.target;
  gcp::GkeClient gke(*session_.cloud, session_.endpoint("container"), session_.poll);
  std::vector<PoolRow> rows;
  for (auto& p : gke.list_node_pools(t.project, t.location, t.cluster)) {
    PoolRow row;
    if (auto it = p.labels.find(kAcceleratorLabel); it != p.labels.end())
      row.accelerator = it->second;
    row.pool = std::move(p);
    rows.push_back(std::move(row));
  }
  // Node counts come from the cluster itself (GKE reports only what autoscaling allows).
  auto conn = connect_kube(session_, cluster_access(session_));
  std::map<std::string, int> counts;
  for (const auto& node : conn.client->list(k8s::nodes_path()).items) {
    auto labels = node["metadata"].value("labels", nlohmann::json::object());
    counts[labels.value("cloud.google.com/gke-nodepool", "")]++;
  }
  for (auto& row : rows) row.nodes = counts[row.pool.name];
  return rows;
}

std::vector<ClusterChange> Provisioner::down(const DownOptions& options) {
  std::vector<ClusterChange> changes;
  const Target& t = session_.target;
  gcp::GkeClient gke(*session_.cloud, session_.endpoint("container"), session_.poll);
  if (gke.delete_cluster(t.project, t.location, t.cluster))
    record(changes, {"cluster", t.cluster + " (with its node pools)", "deleted"});
  forget_cluster_access(session_);

  const std::string repo_name =
      t.region + "-docker.pkg.dev/" + t.project + "/" + std::string(kRepository);
  if (options.keep_images) {
    record(changes, {"repository", repo_name, "kept"});
  } else {
    gcp::ArtifactRegistryClient registry(*session_.cloud, session_.endpoint("artifactregistry"),
                                         session_.poll);
    if (registry.delete_repository(t.project, t.region, kRepository))
      record(changes, {"repository", repo_name, "deleted"});
  }

  // What kinetic granted its jobs goes before the bucket that records it.
  revoke_job_grants(session_, options.keep_bucket,
                    [&](ClusterChange c) { record(changes, std::move(c)); });
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = session_.bucket();
  if (options.keep_bucket) {
    record(changes, {"bucket", "gs://" + bucket, "kept"});
  } else if (storage.get_bucket(bucket)) {
    // A bucket must be empty before it can go.
    for (const auto& o : storage.list(bucket).objects) storage.delete_object(bucket, o.name);
    storage.delete_bucket(bucket);
    record(changes, {"bucket", "gs://" + bucket, "deleted"});
  }

  // Auto-down's access goes with the cluster (its objects went with it), and so do the nodes'.
  remove_auto_down(session_, nullptr, [&](ClusterChange c) { record(changes, std::move(c)); });
  remove_node_service_account(session_, [&](ClusterChange c) { record(changes, std::move(c)); });
  return changes;
}

}  // namespace kinetic::gke
