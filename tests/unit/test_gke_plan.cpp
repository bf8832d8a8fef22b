// The pure parts of the gke backend: names, the cluster and node pool requests `up` sends, the
// image build source, and Job objects read back as job states.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "backend/gke/cluster_requests.h"
#include "backend/gke/data_access.h"
#include "backend/gke/image_source.h"
#include "backend/gke/job_manifest.h"
#include "backend/gke/job_state.h"
#include "backend/gke/names.h"
#include "backend/gke/slice_host.h"
#include "core/error.h"
#include "core/fs.h"
#include "pack/sha256.h"

namespace kinetic::gke {
namespace {

using json = nlohmann::json;

TEST(GkeNames, BucketNamesAreValidForAnyProject) {
  EXPECT_EQ(bucket_name("acme-ml", "kinetic"), "acme-ml-kinetic-kinetic");
  EXPECT_EQ(bucket_name("example.com:Proj", "c1"), "example-com-proj-kinetic-c1");
  // Bucket names may not contain "google".
  EXPECT_EQ(bucket_name("google-research", "kinetic"), "g00gle-research-kinetic-kinetic");
  std::string long_name = bucket_name(std::string(60, 'p'), "cluster");
  EXPECT_LE(long_name.size(), 63u);
  EXPECT_NE(long_name.back(), '-');
}

TEST(GkeNames, PoolNamePerAcceleratorAndSpot) {
  EXPECT_EQ(pool_name(resolve_accelerator("v5litepod-4")), "v5litepod-4");
  EXPECT_EQ(pool_name(resolve_accelerator("l4:spot")), "l4-spot");
  EXPECT_EQ(pool_name(resolve_accelerator("a100x8")), "a100x8");
  // Multislice: a pool a slice, the first the accelerator's own.
  EXPECT_EQ(slice_pool_name(resolve_accelerator("v5litepod-16"), 0), "v5litepod-16");
  EXPECT_EQ(slice_pool_name(resolve_accelerator("v5litepod-16:spot"), 1),
            "v5litepod-16-spot-slice-2");
  EXPECT_EQ(kube_context_name("p", "us-central1-a", "kinetic"), "gke_p_us-central1-a_kinetic");
  EXPECT_EQ(context_object("abc", Compression::zstd), "contexts/abc.tar.zst");
  EXPECT_EQ(context_object("abc", Compression::gzip), "contexts/abc.tar.gz");
  EXPECT_EQ(results_prefix("job-1"), "jobs/job-1/results/");
}

// A multislice run takes a pool a slice: pools of its machine type, topology and Spot-ness.
TEST(GkeSlicePools, CountsThePoolsThatHoldOneSliceEach) {
  Accelerator a = resolve_accelerator("v5litepod-16");
  a.slices = 2;
  gcp::NodePoolInfo slice{.name = "v5litepod-16", .machine_type = a.machine_type};
  slice.tpu_topology = a.topology;
  gcp::NodePoolInfo other = slice;
  other.tpu_topology = "2x4";
  gcp::NodePoolInfo spot = slice;
  spot.spot = true;
  EXPECT_EQ(slice_pools(a, {slice, other, spot}), 1);
  EXPECT_NE(missing_slice_pools(a, {slice, other, spot}).find("the cluster has 1"),
            std::string::npos);
  EXPECT_EQ(missing_slice_pools(a, {slice, slice}), "");
  a.slices = 1;
  EXPECT_EQ(missing_slice_pools(a, {}), "") << "one slice: the pod says why it waits, as before";
}

TEST(GkeRequests, ClusterHasWorkloadIdentityChannelAndSmallDefaultPool) {
  json c = cluster_request({"acme", "kinetic", "STABLE", "n2-standard-4"});
  EXPECT_EQ(c["name"], "kinetic");
  EXPECT_EQ(c["releaseChannel"]["channel"], "STABLE");
  EXPECT_EQ(c["workloadIdentityConfig"]["workloadPool"], "acme.svc.id.goog");
  ASSERT_EQ(c["nodePools"].size(), 1u);
  EXPECT_EQ(c["nodePools"][0]["config"]["machineType"], "n2-standard-4");
  EXPECT_EQ(c["nodePools"][0]["config"]["workloadMetadataConfig"]["mode"], "GKE_METADATA");
  EXPECT_FALSE(c.contains("initialNodeCount")) << "pools and the legacy fields do not mix";
}

// `run --data gs://` needs GKE's Cloud Storage FUSE CSI driver: a new cluster has it, and a
// cluster resource says whether it is on.
TEST(GkeRequests, ClusterHasTheCloudStorageFuseCsiDriver) {
  json c = cluster_request({"acme", "kinetic", "STABLE", "n2-standard-4"});
  EXPECT_EQ(c["addonsConfig"]["gcsFuseCsiDriverConfig"]["enabled"], true);
  EXPECT_TRUE(has_gcs_fuse_addon(c));
  EXPECT_FALSE(has_gcs_fuse_addon(json::object()));
  EXPECT_FALSE(
      has_gcs_fuse_addon({{"addonsConfig", {{"gcsFuseCsiDriverConfig", json::object()}}}}));
  EXPECT_FALSE(
      has_gcs_fuse_addon({{"addonsConfig", {{"gcsFuseCsiDriverConfig", {{"enabled", false}}}}}}));
}

// Who reads a --data bucket: the job pods' Workload Identity principal (their own service
// account, not the namespace's `default`), granted the least role.
TEST(GkeDataAccess, ThePodsPrincipalAndTheRoleAMountNeeds) {
  const std::string member = pods_principal("123456789012", "acme", "ml");
  EXPECT_EQ(member,
            "principal://iam.googleapis.com/projects/123456789012/locations/global/"
            "workloadIdentityPools/acme.svc.id.goog/subject/ns/ml/sa/kinetic-job");
  EXPECT_EQ(data_role(false), "roles/storage.objectViewer");
  EXPECT_EQ(data_role(true), "roles/storage.objectUser");
  EXPECT_EQ(grant_command("b1", member, "roles/storage.objectViewer"),
            "gcloud storage buckets add-iam-policy-binding gs://b1 --member=" + member +
                " --role=roles/storage.objectViewer");
}

TEST(GkeDataAccess, WhetherABucketPolicyGrantsIt) {
  const std::string member = pods_principal("1", "acme", "default");
  auto policy = [](const std::string& role, const std::string& who, bool conditional = false) {
    json b = {{"role", role}, {"members", {who}}};
    if (conditional) b["condition"] = {{"title", "t"}, {"expression", "true"}};
    return json{{"bindings", {b}}};
  };
  EXPECT_TRUE(policy_grants(policy("roles/storage.objectViewer", member), member, false));
  EXPECT_FALSE(policy_grants(policy("roles/storage.objectViewer", member), member, true));
  EXPECT_TRUE(policy_grants(policy("roles/storage.objectUser", member), member, true));
  EXPECT_TRUE(policy_grants(policy("roles/storage.objectViewer", "allUsers"), member, false));
  EXPECT_FALSE(policy_grants(policy("roles/storage.objectViewer", "user:a@b.c"), member, false));
  EXPECT_FALSE(policy_grants(policy("roles/storage.objectViewer", member, true), member, false));
  EXPECT_FALSE(policy_grants(policy("roles/storage.legacyObjectReader", member), member, false));
  EXPECT_FALSE(policy_grants(json::object(), member, false));
}

TEST(GkeRequests, MachineTypeErrorsAreRecognised) {
  EXPECT_TRUE(is_machine_type_unavailable(
      "creating cluster: Machine type \"e2-standard-4\" is not available in zone us-central2-b"));
  EXPECT_FALSE(is_machine_type_unavailable("Insufficient regional quota to satisfy request"));
}

TEST(GkeRequests, SingleHostTpuPoolAutoscalesFromZeroWithoutTopology) {
  json p = node_pool_request(resolve_accelerator("v5litepod-4"), {});
  EXPECT_EQ(p["config"]["machineType"], "ct5lp-hightpu-4t");
  EXPECT_FALSE(p.contains("placementPolicy"));
  EXPECT_EQ(p["autoscaling"]["totalMinNodeCount"], 0);
  EXPECT_EQ(p["autoscaling"]["totalMaxNodeCount"], 4);
  EXPECT_FALSE(p["autoscaling"].contains("minNodeCount")) << "total* and per-zone are exclusive";
  EXPECT_EQ(p["initialNodeCount"], 0);
  EXPECT_EQ(p["config"]["labels"]["kinetic.dev/accelerator"], "v5litepod-4");
}

TEST(GkeRequests, MultiHostTpuPoolScalesOneSliceAtATime) {
  Accelerator a = resolve_accelerator("v5litepod-16");
  ASSERT_GT(a.hosts, 1);
  json p = node_pool_request(a, {});
  EXPECT_EQ(p["placementPolicy"]["tpuTopology"], "4x4");
  EXPECT_EQ(p["placementPolicy"]["type"], "COMPACT") << "one physical slice";
  EXPECT_EQ(p["autoscaling"]["maxNodeCount"], a.hosts);
  EXPECT_EQ(p["autoscaling"]["locationPolicy"], "ANY");
  PoolOptions half;
  half.min_nodes = 1;
  EXPECT_THROW(node_pool_request(a, half), Error);
  // A multi-host pool is one slice: GKE adds no node to it, so two slices' worth is refused.
  PoolOptions two_slices;
  two_slices.max_nodes = 2 * a.hosts;
  EXPECT_THROW(node_pool_request(a, two_slices), Error);
  PoolOptions warm;
  warm.min_nodes = a.hosts;
  EXPECT_EQ(node_pool_request(a, warm)["initialNodeCount"], a.hosts);
}

TEST(GkeRequests, GpuSpotAndReservation) {
  PoolOptions o;
  o.spot = true;
  o.reservation = "res-1";
  json p = node_pool_request(resolve_accelerator("l4"), o);
  EXPECT_EQ(p["name"], "l4-spot");
  EXPECT_EQ(p["config"]["accelerators"][0]["acceleratorType"], "nvidia-l4");
  EXPECT_EQ(p["config"]["accelerators"][0]["acceleratorCount"], "1");
  EXPECT_EQ(p["config"]["spot"], true);
  EXPECT_EQ(p["config"]["taints"][0]["key"], "cloud.google.com/gke-spot");
  EXPECT_EQ(p["config"]["reservationAffinity"]["values"][0], "res-1");
  PoolOptions bad;
  bad.min_nodes = 5;
  bad.max_nodes = 2;
  EXPECT_THROW(node_pool_request(resolve_accelerator("l4"), bad), Error);
}

// a3-highgpu-1g/2g/4g are sold only as Spot or flex-start VMs, a3-ultragpu-8g and a4-highgpu-8g
// through reservations, flex-start or Spot (docs/gke-conformance.md "Capacity"): an on-demand pool
// of one would never get a node, so it is refused before anything is created, naming what works.
TEST(GkeRequests, ShapesNotSoldOnDemandNeedSpotOrAReservation) {
  const auto refusal = [](const std::string& accelerator, const PoolOptions& o) {
    try {
      node_pool_request(resolve_accelerator(accelerator), o);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string h100 = refusal("h100", {});
  EXPECT_NE(h100.find("h100 (a3-highgpu-1g) is not sold on demand"), std::string::npos) << h100;
  EXPECT_NE(h100.find("pass --flex-start or --spot, or ask for h100x8, which is sold on demand"),
            std::string::npos)
      << h100;
  PoolOptions reserved;
  reserved.reservation = "res-1";
  EXPECT_FALSE(refusal("h100x4", reserved).empty()) << "A3 High reservations are for 8 GPUs";
  EXPECT_TRUE(refusal("h100:spot", {}).empty());
  EXPECT_TRUE(refusal("h100x8", {}).empty());
  const std::string b200 = refusal("b200", {});
  EXPECT_NE(b200.find("b200x8 (a4-highgpu-8g) is not sold on demand"), std::string::npos) << b200;
  EXPECT_NE(b200.find("pass --reservation NAME, --flex-start or --spot"), std::string::npos)
      << b200;
  EXPECT_TRUE(refusal("b200", reserved).empty());
  EXPECT_TRUE(refusal("h200:spot", {}).empty());
  // Every shape the catalog marks is refused on demand; every other one is not.
  for (const auto& a : accelerator_catalog())
    EXPECT_EQ(refusal(a.name, {}).empty(), a.capacity == Capacity::on_demand) << a.name;
}

// A flex-start pool (docs/gke-conformance.md "Flex-start"): config.flexStart, no reservation, no
// auto-repair, scaling from zero, its own name; what GKE's flex-start pools do not take is refused
// in one line, and a shape sold only as Spot or flex-start VMs is obtainable so.
TEST(GkeRequests, FlexStartPool) {
  PoolOptions o;
  o.flex_start = true;
  json p = node_pool_request(resolve_accelerator("v6e-16"), o);
  EXPECT_EQ(p["name"], "v6e-16-flex-start");
  EXPECT_EQ(p["config"]["flexStart"], true);
  EXPECT_EQ(p["config"]["reservationAffinity"]["consumeReservationType"], "NO_RESERVATION");
  EXPECT_EQ(p["management"]["autoRepair"], false);
  EXPECT_EQ(p["placementPolicy"]["type"], "COMPACT");
  EXPECT_EQ(p["autoscaling"]["minNodeCount"], 0);
  EXPECT_FALSE(p["config"].contains("spot"));
  EXPECT_EQ(node_pool_request(resolve_accelerator("l4:flex-start"), {})["name"], "l4-flex-start");
  EXPECT_NO_THROW(node_pool_request(resolve_accelerator("h100"), o));
  const auto refusal = [](const std::string& accelerator, PoolOptions options) {
    try {
      node_pool_request(resolve_accelerator(accelerator), options);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  PoolOptions spot = o;
  spot.spot = true;
  EXPECT_NE(refusal("l4", spot).find("pick one"), std::string::npos);
  PoolOptions reserved = o;
  reserved.reservation = "res-1";
  EXPECT_NE(refusal("l4", reserved).find("consumes no reservation"), std::string::npos);
  PoolOptions warm = o;
  warm.min_nodes = 1;
  EXPECT_NE(refusal("l4", warm).find("scales from zero"), std::string::npos);
  EXPECT_NE(refusal("v4-8", o).find("from v5e on, and v4-8 is a v4 TPU"), std::string::npos)
      << refusal("v4-8", o);
}

// --timeout-from start (docs/capacity.md): the deadline counts from the job's first start, which
// only the bootstrap sees, so neither the Job nor a slice's child Job gets an
// activeDeadlineSeconds (it counts from the Job's creation: the wait for a node would count) nor
// the JobSet the DeadlineExceeded rule; from the submit (the default), both are as before.
TEST(GkeManifestInput, ADeadlineFromTheStartIsTheBootstrapsAlone) {
  JobSpec spec;
  spec.id = "job-1a2b3c4d";
  spec.accelerator = "v5litepod-16:flex-start";
  spec.image = "us-docker.pkg.dev/p/kinetic/base:tpu";
  spec.timeout_seconds = 600;
  const ManifestInput from_submit = manifest_input(spec, "bucket", "default");
  EXPECT_EQ(from_submit.timeout_seconds, 600);
  EXPECT_TRUE(from_submit.accelerator.flex_start);
  spec.timeout_from = "start";
  const ManifestInput from_start = manifest_input(spec, "bucket", "default");
  EXPECT_FALSE(from_start.timeout_seconds.has_value());
  const json jobset = json::parse(build_workload(from_start).dump());
  const json& child = jobset["spec"]["replicatedJobs"][0]["template"]["spec"];
  EXPECT_FALSE(child.contains("activeDeadlineSeconds"));
  EXPECT_NE(jobset.dump().find("gke-flex-start"), std::string::npos);
  EXPECT_EQ(jobset.dump().find("DeadlineExceeded"), std::string::npos);
}

TEST(GkeImageSource, BuildSourceIsDeterministic) {
  fs::path dir = make_temp_dir(fs::temp_directory_path(), "kinetic-src-");
  write_build_source(dir / "a.tar.gz", {{"Dockerfile", "FROM x\n"}, {"smoke.sh", "true\n"}});
  write_build_source(dir / "b.tar.gz", {{"Dockerfile", "FROM x\n"}, {"smoke.sh", "true\n"}});
  write_build_source(dir / "c.tar.gz", {{"Dockerfile", "FROM x\n"}, {"smoke.sh", "false\n"}});
  EXPECT_EQ(sha256_file(dir / "a.tar.gz"), sha256_file(dir / "b.tar.gz"));
  EXPECT_NE(sha256_file(dir / "a.tar.gz"), sha256_file(dir / "c.tar.gz"));
  remove_all_quiet(dir);
}

TEST(GkeStartError, AnImageWithoutPython3IsSaidPlainly) {
  // What containerd reports when the bootstrap's python3 is not in the image (kubelet's
  // StartError, exit 128), and a pod that ran.
  const json no_python = {
      {"status",
       {{"containerStatuses",
         {{{"name", "main"},
           {"state",
            {{"terminated",
              {{"exitCode", 128},
               {"reason", "StartError"},
               {"message",
                "failed to create containerd task: failed to create shim task: OCI runtime "
                "create failed: runc create failed: unable to start container process: exec: "
                "\"python3\": executable file not found in $PATH: unknown"}}}}}}}}}}};
  auto why = container_start_error(no_python);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(start_error_message("debian:12-slim", *why),
            "the image debian:12-slim has no python3 on its PATH, and kinetic's bootstrap runs "
            "with it: add python3 to the image, or drop --image to let kinetic build one");
  EXPECT_EQ(start_error_message("img", "permission denied"),
            "the container could not start in img: permission denied");
  json ran = no_python;
  ran["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] = "Error";
  EXPECT_FALSE(container_start_error(ran).has_value());
}

json job_with(const json& status) {
  return {
      {"metadata",
       {{"name", "kinetic-job-1"},
        {"creationTimestamp", "2026-01-01T00:00:00Z"},
        {"labels", {{"kinetic.dev/job", "job-1"}}},
        {"annotations", {{"kinetic.dev/file", "train.py"}, {"kinetic.dev/accelerator", "l4"}}}}},
      {"status", status}};
}

TEST(GkeJobState, ConditionsBecomeStates) {
  JobStatus done = status_from_workload(
      job_with({{"startTime", "2026-01-01T00:00:10Z"},
                {"completionTime", "2026-01-01T00:01:10Z"},
                {"conditions", {{{"type", "Complete"}, {"status", "True"}}}}}));
  EXPECT_EQ(done.state, "succeeded");
  EXPECT_EQ(done.id, "job-1");
  EXPECT_EQ(done.file, "train.py");
  EXPECT_EQ(done.accelerator, "l4");
  EXPECT_DOUBLE_EQ(done.duration_seconds, 60);

  JobStatus timed = status_from_workload(
      job_with({{"conditions",
                 {{{"type", "Failed"}, {"status", "True"}, {"reason", "DeadlineExceeded"}}}}}));
  EXPECT_EQ(timed.state, "timeout");
  EXPECT_TRUE(workload_finished(
      job_with({{"conditions", {{{"type", "Failed"}, {"status", "True"}, {"reason", "X"}}}}})));
  EXPECT_FALSE(
      workload_finished(job_with({{"conditions", {{{"type", "Failed"}, {"status", "False"}}}}})));

  JobStatus running = status_from_workload(
      job_with({{"active", 1}, {"ready", 1}, {"startTime", "2026-01-01T00:00:10Z"}}));
  EXPECT_EQ(running.state, "running");
  JobStatus pending = status_from_workload(job_with({{"active", 1}}));
  EXPECT_EQ(pending.state, "pending");

  // A JobSet: running once a child Job is ready (its pods all are), pending before.
  const json waiting_slice = {{"name", "slice"}, {"active", 2}, {"ready", 0}};
  EXPECT_EQ(status_from_workload(job_with({{"replicatedJobsStatus", {waiting_slice}}})).state,
            "pending");
  const json ready_slice = {{"name", "slice"}, {"active", 2}, {"ready", 1}};
  EXPECT_EQ(status_from_workload(job_with({{"replicatedJobsStatus", {ready_slice}}})).state,
            "running");
}

TEST(GkeJobState, ParsesRfc3339) {
  EXPECT_DOUBLE_EQ(parse_rfc3339("1970-01-01T00:01:00Z"), 60);
  EXPECT_NEAR(parse_rfc3339("1970-01-01T00:00:01.250000000Z"), 1.25, 1e-9);
  EXPECT_EQ(parse_rfc3339("yesterday"), 0);
}

}  // namespace
}  // namespace kinetic::gke
