// The gke backend's part of `run --data gs://...` (step 4): the cluster must have the Cloud
// Storage FUSE CSI driver, and the job's pods must be able to read the bucket. The volume itself
// is in the manifests (job/manifest.cpp); a local directory is staged by the pipeline.
#include "backend/gke/cluster_requests.h"
#include "backend/gke/data_access.h"
#include "backend/gke/gke_backend.h"
#include "backend/gke/job_identity.h"
#include "core/error.h"
#include "gcp/gke.h"

namespace kinetic::gke {

DataMount GkeBackend::stage_data(const DataMount& mount, bool grant) {
  if (!mount.is_gcs()) return Backend::stage_data(mount, grant);
  const Target& t = session_.target;
  if (!gcs_fuse_checked_) {
    // Without the driver the pod would wait in ContainerCreating for ever ("driver name
    // gcsfuse.csi.storage.gke.io not found in the list of registered CSI drivers").
    gcp::GkeClient gke(*session_.cloud, session_.endpoint("container"), session_.poll);
    auto cluster = gke.get_cluster(t.project, t.location, t.cluster);
    if (!cluster)
      throw Error(Errc::not_found, "cluster " + t.cluster + " not found in " + t.location +
                                       "; create it with `kinetic up`");
    if (!has_gcs_fuse_addon(cluster->raw))
      throw Error(Errc::config, "--data " + mount.source + ": cluster " + t.cluster +
                                    " has no Cloud Storage FUSE CSI driver, which mounts gs:// "
                                    "data; `kinetic up` turns it on");
    gcs_fuse_checked_ = true;
  }
  // The pods hold objectUser on the jobs bucket already (`kinetic up`).
  gcp::StorageClient& storage = session_.storage();
  const std::string bucket = mount.bucket();
  if (bucket == session_.bucket()) return mount;
  if (pods_member_.empty()) {
    auto jobs = storage.get_bucket(session_.bucket());
    if (!jobs || jobs->project_number.empty())
      throw Error(Errc::not_found, "the jobs bucket gs://" + session_.bucket() +
                                       " cannot be read; run `kinetic up`");
    pods_member_ = pods_principal(jobs->project_number, t.project, t.ns);
  }
  const std::string role = data_role(mount.writable);
  if (grant) {
    const bool changed = storage.add_bucket_iam_member(bucket, role, pods_member_);
    // So that `down` takes it back; a grant found in place is someone else's to take back.
    if (changed) remember_data_grant(session_, bucket, pods_member_);
    session_.io->info("kinetic: gs://" + bucket + ": " + role + " for the job's pods " +
                      (changed ? "granted" : "held already"));
    return mount;
  }
  bool granted = false;
  try {
    granted = policy_grants(storage.get_bucket_iam_policy(bucket), pods_member_, mount.writable);
  } catch (const Error&) {
    // Not allowed to read the policy (a bucket shared with you): say how, as when not granted.
  }
  if (!granted)
    session_.io->warn("kinetic: the job's pods may not " +
                      std::string(mount.writable ? "write" : "read") + " gs://" + bucket +
                      " yet; grant it with `" + grant_command(bucket, pods_member_, role) +
                      "`, or run with --grant");
  return mount;
}

}  // namespace kinetic::gke
