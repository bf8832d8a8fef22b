// The Job, JobSet and Secret `run` submits on GKE, against golden files and by property.
//
// Golden files: tests/golden/manifests/NAME.yaml. After an intended change, regenerate them with
//   KINETIC_UPDATE_GOLDEN=1 ./build/tests/kinetic_unit_tests --gtest_filter='*Manifest*'
// and review the diff.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/error.h"
#include "job/manifest.h"
#include "manifest_golden.h"
#include "render/yaml.h"

namespace kinetic {
namespace {

using json = nlohmann::ordered_json;

// Accelerators as the catalog resolves them (built by hand: these tests are about manifests).
Accelerator tpu(const std::string& name, int chips, int hosts, const std::string& topology,
                const std::string& machine_type) {
  Accelerator a;
  a.name = name;
  a.family = AcceleratorFamily::tpu;
  a.kind = "v5litepod";
  a.chips = chips;
  a.hosts = hosts;
  a.chips_per_host = chips / hosts;
  a.topology = topology;
  a.machine_type = machine_type;
  a.gke_accelerator = "tpu-v5-lite-podslice";
  a.resource_name = "google.com/tpu";
  a.node_selector = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                     {"cloud.google.com/gke-tpu-topology", topology}};
  return a;
}

Accelerator v5litepod_1() {
  return tpu("v5litepod-1", 1, 1, "1x1", "ct5lp-hightpu-1t");
}
Accelerator v5litepod_4() {
  return tpu("v5litepod-4", 4, 1, "2x2", "ct5lp-hightpu-4t");
}
Accelerator v5litepod_16() {
  return tpu("v5litepod-16", 16, 4, "4x4", "ct5lp-hightpu-4t");
}

Accelerator gpu(const std::string& name, const std::string& kind, int count,
                const std::string& machine_type, const std::string& label) {
  Accelerator a;
  a.name = name;
  a.family = AcceleratorFamily::gpu;
  a.kind = kind;
  a.chips = count;
  a.hosts = 1;
  a.chips_per_host = count;
  a.machine_type = machine_type;
  a.gke_accelerator = label;
  a.resource_name = "nvidia.com/gpu";
  a.node_selector = {{"cloud.google.com/gke-accelerator", label}};
  return a;
}

Accelerator l4() {
  return gpu("l4", "l4", 1, "g2-standard-4", "nvidia-l4");
}
Accelerator a100x8() {
  return gpu("a100x8", "a100", 8, "a2-highgpu-8g", "nvidia-tesla-a100");
}

Accelerator cpu() {
  Accelerator a;
  a.name = "cpu";
  a.family = AcceleratorFamily::cpu;
  a.kind = "cpu";
  a.machine_type = "e2-standard-4";
  return a;
}

const char* const kBootstrap =
    "import os, sys, urllib.request\n"
    "exec(urllib.request.urlopen(os.environ['KINETIC_BOOTSTRAP_URL']).read())\n";

ManifestInput input_for(const Accelerator& accelerator) {
  ManifestInput in;
  in.job_id = "job-1a2b3c4d";
  in.service_account = "kinetic-job";  // gke::kJobServiceAccount, as the gke backend sets it
  in.accelerator = accelerator;
  in.image = "us-central1-docker.pkg.dev/acme-ml/kinetic/base:" +
             std::string(accelerator.family == AcceleratorFamily::tpu   ? "tpu"
                         : accelerator.family == AcceleratorFamily::gpu ? "gpu"
                                                                        : "cpu") +
             "-0123456789ab";
  in.command = {"python3", "-c", kBootstrap};
  in.env = {{"KINETIC_JOB_ID", "job-1a2b3c4d"},
            {"KINETIC_BUCKET", "acme-ml-kinetic-kinetic"},
            {"KINETIC_SPEC", "gs://acme-ml-kinetic-kinetic/jobs/job-1a2b3c4d/spec.json"},
            {"KINETIC_OUTPUT_DIR", "/kinetic/outputs"},
            {"KINETIC_CHECKPOINT_DIR", "/kinetic/checkpoints"}};
  in.labels = {{"kinetic.dev/accelerator", accelerator.name}};
  return in;
}

std::string render(const ManifestInput& in, const std::map<std::string, std::string>& secrets) {
  return to_yaml_stream(build_manifests(in, secrets));
}

const json& pod_spec(const json& workload) {
  if (workload["kind"] == "JobSet") {
    return workload["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
  }
  return workload["spec"]["template"]["spec"];
}

const json& container(const json& workload) {
  return pod_spec(workload)["containers"][0];
}

// ---- golden files

TEST(JobManifestGolden, Cpu) {
  test::expect_manifest_golden("cpu", render(input_for(cpu()), {}));
}
TEST(JobManifestGolden, L4) {
  test::expect_manifest_golden("l4", render(input_for(l4()), {}));
}
TEST(JobManifestGolden, A100x8) {
  test::expect_manifest_golden("a100x8", render(input_for(a100x8()), {}));
}
TEST(JobManifestGolden, V5litepod1) {
  test::expect_manifest_golden("v5litepod-1", render(input_for(v5litepod_1()), {}));
}
TEST(JobManifestGolden, V5litepod4) {
  test::expect_manifest_golden("v5litepod-4", render(input_for(v5litepod_4()), {}));
}
TEST(JobManifestGolden, V5litepod16JobSet) {
  test::expect_manifest_golden("v5litepod-16", render(input_for(v5litepod_16()), {}));
}
TEST(JobManifestGolden, V5litepod16TwoSlices) {
  ManifestInput in = input_for(v5litepod_16());
  in.accelerator.slices = 2;
  test::expect_manifest_golden("v5litepod-16-2-slices", render(in, {}));
}
TEST(JobManifestGolden, V5litepod4Spot) {
  Accelerator acc = v5litepod_4();
  acc.spot = true;
  ManifestInput in = input_for(acc);
  in.retries = 2;
  test::expect_manifest_golden("v5litepod-4-spot", render(in, {}));
}
TEST(JobManifestGolden, V5litepod4FlexStart) {
  Accelerator acc = v5litepod_4();
  acc.flex_start = true;
  test::expect_manifest_golden("v5litepod-4-flex-start", render(input_for(acc), {}));
}
TEST(JobManifestGolden, L4SecretsAndTimeout) {
  ManifestInput in = input_for(l4());
  in.secret_env = {"KAGGLE_USERNAME", "KAGGLE_KEY", "HF_TOKEN"};
  in.timeout_seconds = 7200;
  in.retries = 1;
  in.ttl_seconds_after_finished = 600;
  test::expect_manifest_golden("l4-secrets-timeout",
                               render(in, {{"KAGGLE_USERNAME", "alice"},
                                           {"KAGGLE_KEY", "0123456789abcdef"},
                                           {"HF_TOKEN", "hf_xyz: with # yaml-ish\nsecond line"}}));
}
TEST(JobManifestGolden, V5litepod16SpotSecretsAndTimeout) {
  Accelerator acc = v5litepod_16();
  acc.spot = true;
  ManifestInput in = input_for(acc);
  in.secret_env = {"WANDB_API_KEY"};
  in.timeout_seconds = 3600;
  in.retries = 3;
  test::expect_manifest_golden("v5litepod-16-spot-secrets-timeout",
                               render(in, {{"WANDB_API_KEY", "true"}}));
}

TEST(JobManifestGolden, V5litepod16GcsData) {
  ManifestInput in = input_for(v5litepod_16());
  in.gcs_data = {parse_data_flag("gs://training-data/imagenet/train:/imagenet"),
                 parse_data_flag("gs://scratch-bucket:out/scratch:rw")};
  test::expect_manifest_golden("v5litepod-16-gcs-data", render(in, {}));
}

// ---- properties

TEST(JobManifest, ObjectName) {
  EXPECT_EQ(k8s_object_name("job-1a2b3c4d"), "kinetic-job-1a2b3c4d");
}

TEST(JobManifest, SingleHostIsAJob) {
  for (const auto& acc : {cpu(), l4(), a100x8(), v5litepod_1(), v5litepod_4()}) {
    const json job = build_workload(input_for(acc));
    EXPECT_EQ(job["apiVersion"], "batch/v1") << acc.name;
    EXPECT_EQ(job["kind"], "Job") << acc.name;
    EXPECT_EQ(job["metadata"]["name"], "kinetic-job-1a2b3c4d");
    EXPECT_EQ(job["metadata"]["namespace"], "default");
    EXPECT_EQ(job["spec"]["backoffLimit"], 0);
    EXPECT_EQ(job["spec"]["ttlSecondsAfterFinished"], 3600);
    EXPECT_FALSE(job["spec"].contains("activeDeadlineSeconds"));
    EXPECT_EQ(pod_spec(job)["restartPolicy"], "Never");
    EXPECT_EQ(pod_spec(job)["containers"].size(), 1u);
    EXPECT_EQ(container(job)["name"], "main");
    // kubectl-like key order.
    std::vector<std::string> keys;
    for (const auto& [key, value] : job.items()) keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"apiVersion", "kind", "metadata", "spec"}));
  }
}

TEST(JobManifest, MultiHostTpuIsAJobSet) {
  ManifestInput in = input_for(v5litepod_16());
  in.retries = 2;
  in.timeout_seconds = 900;
  const json js = build_workload(in);
  EXPECT_EQ(js["apiVersion"], "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(js["kind"], "JobSet");
  EXPECT_EQ(js["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"],
            "cloud.google.com/gke-nodepool");
  EXPECT_EQ(js["spec"]["failurePolicy"]["maxRestarts"], 2);
  EXPECT_EQ(js["spec"]["network"]["enableDNSHostnames"], true);
  ASSERT_EQ(js["spec"]["replicatedJobs"].size(), 1u);
  const json& rj = js["spec"]["replicatedJobs"][0];
  EXPECT_EQ(rj["name"], "slice");
  EXPECT_EQ(rj["replicas"], 1);
  const json& job = rj["template"]["spec"];
  EXPECT_EQ(job["parallelism"], 4);
  EXPECT_EQ(job["completions"], 4);
  EXPECT_EQ(job["completionMode"], "Indexed");
  EXPECT_EQ(job["backoffLimit"], 0);
  EXPECT_EQ(job["activeDeadlineSeconds"], 900);
  // Each pod asks for its host's chips, not the slice's.
  EXPECT_EQ(container(js)["resources"]["limits"]["google.com/tpu"], "4");
  EXPECT_EQ(pod_spec(js)["nodeSelector"]["cloud.google.com/gke-tpu-topology"], "4x4");
}

TEST(JobManifest, LabelsOnEveryObjectAndPodTemplate) {
  ManifestInput in = input_for(v5litepod_16());
  in.secret_env = {"K"};
  in.labels["kinetic.dev/job"] = "spoofed";  // kinetic's own labels win
  const json expected = {{"app.kubernetes.io/managed-by", "kinetic"},
                         {"kinetic.dev/job", "job-1a2b3c4d"},
                         {"kinetic.dev/accelerator", "v5litepod-16"}};
  const auto docs = build_manifests(in, {{"K", "v"}});
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["metadata"]["labels"], expected);
  EXPECT_EQ(docs[1]["metadata"]["labels"], expected);
  const json& rj = docs[1]["spec"]["replicatedJobs"][0];
  EXPECT_EQ(rj["template"]["metadata"]["labels"], expected);
  EXPECT_EQ(rj["template"]["spec"]["template"]["metadata"]["labels"], expected);

  const json job = build_workload(input_for(l4()));
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"]["kinetic.dev/job"], "job-1a2b3c4d");
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "kinetic");
}

TEST(JobManifest, PerHostResources) {
  EXPECT_EQ(container(build_workload(input_for(v5litepod_1())))["resources"],
            (json{{"limits", {{"google.com/tpu", "1"}}}}));
  EXPECT_EQ(container(build_workload(input_for(v5litepod_4())))["resources"],
            (json{{"limits", {{"google.com/tpu", "4"}}}}));
  EXPECT_EQ(container(build_workload(input_for(l4())))["resources"],
            (json{{"limits", {{"nvidia.com/gpu", "1"}}}}));
  EXPECT_EQ(container(build_workload(input_for(a100x8())))["resources"],
            (json{{"limits", {{"nvidia.com/gpu", "8"}}}}));
  // Quantities are strings.
  EXPECT_TRUE(
      container(build_workload(input_for(a100x8())))["resources"]["limits"]["nvidia.com/gpu"]
          .is_string());
  EXPECT_EQ(container(build_workload(input_for(cpu())))["resources"],
            (json{{"requests", {{"cpu", "1"}, {"memory", "2Gi"}}}}));
}

TEST(JobManifest, NodeSelectorsAndTolerations) {
  const json tpu_toleration = {
      {"key", "google.com/tpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};
  const json gpu_toleration = {
      {"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};
  const json spot_toleration = {{"key", "cloud.google.com/gke-spot"},
                                {"operator", "Equal"},
                                {"value", "true"},
                                {"effect", "NoSchedule"}};

  const json tpu_spec = pod_spec(build_workload(input_for(v5litepod_4())));
  EXPECT_EQ(tpu_spec["nodeSelector"],
            (json{{"cloud.google.com/gke-tpu-accelerator", "tpu-v5-lite-podslice"},
                  {"cloud.google.com/gke-tpu-topology", "2x2"}}));
  EXPECT_EQ(tpu_spec["tolerations"], json::array({tpu_toleration}));

  const json gpu_spec = pod_spec(build_workload(input_for(a100x8())));
  EXPECT_EQ(gpu_spec["nodeSelector"],
            (json{{"cloud.google.com/gke-accelerator", "nvidia-tesla-a100"}}));
  EXPECT_EQ(gpu_spec["tolerations"], json::array({gpu_toleration}));

  const json cpu_spec = pod_spec(build_workload(input_for(cpu())));
  EXPECT_FALSE(cpu_spec.contains("nodeSelector"));
  EXPECT_FALSE(cpu_spec.contains("tolerations"));

  Accelerator spot_tpu = v5litepod_16();
  spot_tpu.spot = true;
  const json spot_spec = pod_spec(build_workload(input_for(spot_tpu)));
  EXPECT_EQ(spot_spec["nodeSelector"]["cloud.google.com/gke-spot"], "true");
  EXPECT_TRUE(spot_spec["nodeSelector"]["cloud.google.com/gke-spot"].is_string());
  EXPECT_EQ(spot_spec["tolerations"], json::array({tpu_toleration, spot_toleration}));

  Accelerator spot_cpu = cpu();
  spot_cpu.spot = true;
  const json spot_cpu_spec = pod_spec(build_workload(input_for(spot_cpu)));
  EXPECT_EQ(spot_cpu_spec["nodeSelector"], (json{{"cloud.google.com/gke-spot", "true"}}));
  EXPECT_EQ(spot_cpu_spec["tolerations"], json::array({spot_toleration}));

  // Not spot: no spot selector anywhere.
  EXPECT_EQ(to_yaml(build_workload(input_for(v5litepod_4()))).find("gke-spot"), std::string::npos);
}

TEST(JobManifest, EnvironmentOrderJaxPlatformsAndSecretRefs) {
  ManifestInput in = input_for(l4());
  in.env = {{"B", "2"}, {"A", "1"}};
  in.secret_env = {"Z_SECRET", "A_SECRET"};
  const json env = container(build_workload(in))["env"];
  ASSERT_EQ(env.size(), 6u);
  EXPECT_EQ(env[0], (json{{"name", "JAX_PLATFORMS"}, {"value", "gpu"}}));
  EXPECT_EQ(env[1], (json{{"name", "B"}, {"value", "2"}}));
  EXPECT_EQ(env[2], (json{{"name", "A"}, {"value", "1"}}));
  // The pod's name, from the downward API, for the bootstrap's attempt records.
  EXPECT_EQ(env[3], (json{{"name", "KINETIC_POD_NAME"},
                          {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}));
  EXPECT_EQ(env[4],
            (json{{"name", "Z_SECRET"},
                  {"valueFrom",
                   {{"secretKeyRef", {{"name", "kinetic-job-1a2b3c4d"}, {"key", "Z_SECRET"}}}}}}));
  EXPECT_EQ(env[5]["name"], "A_SECRET");
  EXPECT_EQ(env[5]["valueFrom"]["secretKeyRef"]["key"], "A_SECRET");

  EXPECT_EQ(container(build_workload(input_for(v5litepod_1())))["env"][0]["value"], "tpu");
  EXPECT_EQ(container(build_workload(input_for(cpu())))["env"][0]["value"], "cpu");

  // The job's own JAX_PLATFORMS (plain or secret) replaces kinetic's.
  ManifestInput own = input_for(cpu());
  own.env = {{"JAX_PLATFORMS", "tpu"}};
  EXPECT_EQ(container(build_workload(own))["env"].size(), 2u);  // and KINETIC_POD_NAME
  EXPECT_EQ(container(build_workload(own))["env"][0],
            (json{{"name", "JAX_PLATFORMS"}, {"value", "tpu"}}));
  own.env.clear();
  own.secret_env = {"JAX_PLATFORMS"};
  EXPECT_EQ(container(build_workload(own))["env"].size(), 2u);
  EXPECT_EQ(container(build_workload(own))["env"][1]["name"], "JAX_PLATFORMS");
  EXPECT_TRUE(container(build_workload(own))["env"][1].contains("valueFrom"));
}

// A TPU job knows its slice: topology and hosts, single-host or not; other jobs have none.
TEST(JobManifest, TpuJobsNameTheirSlice) {
  auto value_of = [](const json& env, const std::string& name) {
    for (const auto& e : env)
      if (e["name"] == name) return e.value("value", std::string("<ref>"));
    return std::string();
  };
  auto sixteen = container(build_workload(input_for(v5litepod_16())))["env"];
  EXPECT_EQ(value_of(sixteen, "KINETIC_SLICE_TOPOLOGY"), "4x4");
  EXPECT_EQ(value_of(sixteen, "KINETIC_SLICE_HOSTS"), "4");
  auto four = container(build_workload(input_for(v5litepod_4())))["env"];
  EXPECT_EQ(value_of(four, "KINETIC_SLICE_TOPOLOGY"), "2x2");
  EXPECT_EQ(value_of(four, "KINETIC_SLICE_HOSTS"), "1");
  EXPECT_EQ(value_of(container(build_workload(input_for(l4())))["env"], "KINETIC_SLICE_TOPOLOGY"),
            "");
}

TEST(JobManifest, SecretValuesNeverInTheWorkload) {
  for (const auto& acc : {l4(), v5litepod_16()}) {
    ManifestInput in = input_for(acc);
    in.secret_env = {"KAGGLE_KEY", "HF_TOKEN"};
    const std::map<std::string, std::string> values = {{"KAGGLE_KEY", "s3cr3t-kaggle-value"},
                                                       {"HF_TOKEN", "hf_s3cr3t_token"}};
    const auto docs = build_manifests(in, values);
    ASSERT_EQ(docs.size(), 2u);
    EXPECT_EQ(docs[0]["kind"], "Secret");
    const std::string workload_json = docs[1].dump();
    const std::string workload_yaml = to_yaml(docs[1]);
    for (const auto& [name, value] : values) {
      EXPECT_EQ(workload_json.find(value), std::string::npos) << value;
      EXPECT_EQ(workload_yaml.find(value), std::string::npos) << value;
    }
    EXPECT_NE(docs[0].dump().find("s3cr3t-kaggle-value"), std::string::npos);
  }
}

TEST(JobManifest, Secret) {
  ManifestInput in = input_for(v5litepod_4());
  EXPECT_FALSE(build_secret(in, {{"UNUSED", "x"}}).has_value());
  EXPECT_EQ(build_manifests(in, {}).size(), 1u);

  in.secret_env = {"ZED", "ALPHA"};
  in.namespace_ = "ml";
  const auto secret = build_secret(in, {{"ALPHA", "1"}, {"ZED", "z"}, {"OTHER", "o"}});
  ASSERT_TRUE(secret.has_value());
  EXPECT_EQ(secret->dump(),
            R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"kinetic-job-1a2b3c4d",)"
            R"("namespace":"ml","labels":{"app.kubernetes.io/managed-by":"kinetic",)"
            R"("kinetic.dev/job":"job-1a2b3c4d","kinetic.dev/accelerator":"v5litepod-4"}},)"
            R"("type":"Opaque","stringData":{"ZED":"z","ALPHA":"1"}})");
  // Redacted values for printing are the caller's: whatever is passed is used.
  EXPECT_EQ((*build_secret(in, {{"ALPHA", "***"}, {"ZED", "***"}}))["stringData"]["ZED"], "***");
  // A value that is not UTF-8 (which JSON cannot carry) travels base64 under data, exactly.
  const auto binary = build_secret(in, {{"ALPHA", "1"}, {"ZED", std::string("\xff\x00z", 3)}});
  EXPECT_EQ((*binary)["data"]["ZED"], "/wB6");
  EXPECT_EQ((*binary)["stringData"]["ALPHA"], "1");
  EXPECT_FALSE((*binary)["stringData"].contains("ZED"));
  EXPECT_NO_THROW(binary->dump());
  // A secret variable without a value is a bug in the caller.
  EXPECT_THROW(build_secret(in, {{"ALPHA", "1"}}), Error);
  // Creation order: the Secret first, so the pod never waits on a missing Secret.
  const auto docs = build_manifests(in, {{"ALPHA", "1"}, {"ZED", "z"}});
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["kind"], "Secret");
  EXPECT_EQ(docs[1]["kind"], "Job");
  EXPECT_EQ(docs[1]["metadata"]["namespace"], "ml");
}

TEST(JobManifest, RetriesTimeoutAndTtl) {
  ManifestInput in = input_for(v5litepod_4());
  in.retries = 3;
  in.timeout_seconds = 86400;
  in.ttl_seconds_after_finished = 600;
  const json job = build_workload(in);
  EXPECT_EQ(job["spec"]["backoffLimit"], 3);
  EXPECT_EQ(job["spec"]["activeDeadlineSeconds"], 86400);
  EXPECT_EQ(job["spec"]["ttlSecondsAfterFinished"], 600);

  in.accelerator = v5litepod_16();
  const json js = build_workload(in);
  EXPECT_EQ(js["spec"]["ttlSecondsAfterFinished"], 600);
  EXPECT_EQ(js["spec"]["failurePolicy"]["maxRestarts"], 3);
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["template"]["spec"]["backoffLimit"], 0);
}

TEST(JobManifest, CommandAndImage) {
  ManifestInput in = input_for(cpu());
  const json c = container(build_workload(in));
  EXPECT_EQ(c["image"], "us-central1-docker.pkg.dev/acme-ml/kinetic/base:cpu-0123456789ab");
  EXPECT_EQ(c["command"], (json::array({"python3", "-c", kBootstrap})));
  in.command.clear();  // the image's entrypoint
  EXPECT_FALSE(container(build_workload(in)).contains("command"));
}

TEST(JobManifest, RejectsBadInput) {
  ManifestInput in = input_for(cpu());
  in.job_id = "Job_1";
  EXPECT_THROW(build_workload(in), Error);
  in.job_id = std::string(60, 'a');
  EXPECT_THROW(build_workload(in), Error);
  in.job_id = "";
  EXPECT_THROW(build_workload(in), Error);
  in = input_for(cpu());
  in.image.clear();
  EXPECT_THROW(build_workload(in), Error);
}

TEST(JobManifest, YamlReadsBackAsTheManifests) {
  ManifestInput in = input_for(v5litepod_16());
  in.secret_env = {"TOKEN"};
  in.timeout_seconds = 60;
  const auto docs = build_manifests(in, {{"TOKEN", "0x1F"}});
  const auto parsed = YAML::LoadAll(to_yaml_stream(docs));
  ASSERT_EQ(parsed.size(), docs.size());
  EXPECT_EQ(parsed[0]["stringData"]["TOKEN"].Scalar(), "0x1F");
  EXPECT_EQ(parsed[0]["stringData"]["TOKEN"].Tag(), "!");  // quoted
  const auto pod = parsed[1]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
  EXPECT_EQ(pod["containers"][0]["command"][2].Scalar(), kBootstrap);
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["google.com/tpu"].Tag(), "!");
  EXPECT_EQ(parsed[1]["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"].as<int>(), 4);
}

// --data gs://: a Cloud Storage FUSE CSI volume per source, mounted where the job (or the
// bootstrap's link) expects it, read-only unless :rw; the annotation on the pod, where GKE's
// webhook looks for it to inject the driver's sidecar.
TEST(JobManifest, GcsDataIsACsiVolumeOnAnAnnotatedPod) {
  ManifestInput in = input_for(l4());
  in.gcs_data = {parse_data_flag("gs://training-data/imagenet/train:/imagenet"),
                 parse_data_flag("gs://scratch-bucket:out:rw")};
  const json job = build_workload(in);
  const json& pod = pod_spec(job);
  ASSERT_EQ(pod["volumes"].size(), 3u) << pod.dump();  // and /dev/shm's
  const json& ro = pod["volumes"][0];
  EXPECT_EQ(ro["csi"]["driver"], "gcsfuse.csi.storage.gke.io");
  EXPECT_EQ(ro["csi"]["readOnly"], true);
  EXPECT_EQ(ro["csi"]["volumeAttributes"]["bucketName"], "training-data");
  EXPECT_EQ(ro["csi"]["volumeAttributes"]["mountOptions"], "implicit-dirs,only-dir=imagenet/train");
  const json& rw = pod["volumes"][1];
  EXPECT_EQ(rw["csi"]["readOnly"], false);
  EXPECT_EQ(rw["csi"]["volumeAttributes"]["mountOptions"], "implicit-dirs");
  const json& mounts = container(job)["volumeMounts"];
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[0]["name"], ro["name"]);
  EXPECT_EQ(mounts[0]["mountPath"], "/imagenet");
  EXPECT_EQ(mounts[0]["readOnly"], true);
  EXPECT_EQ(mounts[1]["name"], rw["name"]);
  EXPECT_EQ(mounts[1]["mountPath"], "/mnt/kinetic-data/out");
  EXPECT_EQ(mounts[1]["readOnly"], false);
  EXPECT_EQ(job["spec"]["template"]["metadata"]["annotations"]["gke-gcsfuse/volumes"], "true");

  // Without gs:// data: no CSI volume nor the annotation (the sidecar costs a pod resources).
  const json plain = build_workload(input_for(l4()));
  EXPECT_EQ(pod_spec(plain)["volumes"].size(), 1u) << "only /dev/shm's";
  EXPECT_EQ(container(plain)["volumeMounts"].size(), 1u);
  EXPECT_FALSE(plain["spec"]["template"]["metadata"].contains("annotations"));
}

// /dev/shm is a memory-backed emptyDir without a sizeLimit in every pod (GPU, TPU, slice, CPU):
// the container runtime's 64 MiB is too small for DataLoader workers and NCCL.
TEST(JobManifest, EveryPodHasAMemoryBackedDevShm) {
  for (const Accelerator& acc : {l4(), v5litepod_1(), v5litepod_16(), cpu()}) {
    const json w = build_workload(input_for(acc));
    const json& pod = pod_spec(w);
    const json& mounts = container(w)["volumeMounts"];
    ASSERT_FALSE(mounts.empty()) << acc.name;
    const json& mount = mounts.back();
    EXPECT_EQ(mount["mountPath"], "/dev/shm") << acc.name;
    const json& volume = pod["volumes"].back();
    EXPECT_EQ(volume["name"], mount["name"]) << acc.name;
    EXPECT_EQ(volume["emptyDir"]["medium"], "Memory") << acc.name;
    EXPECT_FALSE(volume["emptyDir"].contains("sizeLimit")) << acc.name;
  }
}

// A slice's child Job that runs past its deadline fails the JobSet: restarted (JobSet's default)
// it would get a fresh deadline. The rule comes first: a deadline ends the run whatever else.
TEST(JobManifest, ASliceWithADeadlineIsNotRestartedPastIt) {
  ManifestInput in = input_for(v5litepod_16());
  in.retries = 2;
  in.timeout_seconds = 60;
  const json rules = build_workload(in)["spec"]["failurePolicy"]["rules"];
  ASSERT_EQ(rules.size(), 4u) << rules.dump();
  EXPECT_EQ(rules[0]["action"], "FailJobSet");
  EXPECT_EQ(rules[0]["onJobFailureReasons"], json::array({"DeadlineExceeded"}));
  EXPECT_FALSE(rules[0].contains("onJobFailureMessagePatterns"));
  in.timeout_seconds.reset();
  EXPECT_EQ(build_workload(in)["spec"]["failurePolicy"]["rules"].size(), 3u) << "no deadline";
}

// A slice stopped from outside (Kueue evicted it: exit 143 on its hosts) is restarted whole,
// whatever --retries says, as a preemption is: its child Job fails with the exit-code rule's
// message, which the JobSet's Stopped rule matches (docs/capacity.md "Queueing").
TEST(JobManifest, ASliceStoppedFromOutsideRestartsWhole) {
  const json js = build_workload(input_for(v5litepod_16()));
  const json& job_rules =
      js["spec"]["replicatedJobs"][0]["template"]["spec"]["podFailurePolicy"]["rules"];
  bool fails_on_143 = false;
  for (const auto& r : job_rules)
    fails_on_143 =
        fails_on_143 || (r.value("action", "") == "FailJob" && r.contains("onExitCodes") &&
                         r["onExitCodes"]["values"] == json::array({143}));
  EXPECT_TRUE(fails_on_143) << job_rules.dump();
  const json& last = js["spec"]["failurePolicy"]["rules"].back();
  EXPECT_EQ(last["name"], "Stopped");
  EXPECT_EQ(last["action"], "RestartJobSetAndIgnoreMaxRestarts");
  EXPECT_EQ(last["onJobFailureMessagePatterns"],
            json::array({"failed with exit code 143 matching FailJob rule"}));
}

// Multislice (docs/multihost.md): one replicated Job of N replicas, each a whole slice of HOSTS
// hosts; every pod knows the number of slices and reads its own from the label JobSet puts on
// it; the coordinator is host 0 of slice 0; the same failure policy answers any slice's failure
// for the whole JobSet, and one slice is exactly the JobSet it was.
TEST(JobManifest, SlicesAreReplicasOfTheSlicesJob) {
  ManifestInput in = input_for(v5litepod_16());
  in.retries = 1;
  const json one = build_workload(in);
  in.accelerator.slices = 3;
  const json js = build_workload(in);
  const json& rj = js["spec"]["replicatedJobs"][0];
  EXPECT_EQ(js["spec"]["replicatedJobs"].size(), 1u);
  EXPECT_EQ(rj["replicas"], 3);
  EXPECT_EQ(rj["template"]["spec"]["parallelism"], 4) << "each replica is one whole slice";
  EXPECT_EQ(js["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"],
            "cloud.google.com/gke-nodepool");
  EXPECT_EQ(js["spec"]["failurePolicy"], one["spec"]["failurePolicy"]);
  std::map<std::string, json> env;
  for (const auto& e : container(js)["env"]) env[e["name"]] = e;
  EXPECT_EQ(env["KINETIC_SLICES"]["value"], "3");
  EXPECT_EQ(env["KINETIC_SLICE_ID"]["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.labels['jobset.sigs.k8s.io/job-index']");
  EXPECT_EQ(env["JAX_COORDINATOR_ADDRESS"]["value"],
            "kinetic-job-1a2b3c4d-slice-0-0.kinetic-job-1a2b3c4d:8476");
  EXPECT_FALSE(env.count("MEGASCALE_NUM_SLICES")) << "GKE injects the MEGASCALE_* variables";
  std::set<std::string> one_env;
  for (const auto& e : container(one)["env"]) one_env.insert(e["name"]);
  EXPECT_FALSE(one_env.count("KINETIC_SLICES")) << "one slice: the JobSet it always was";
  EXPECT_FALSE(one_env.count("KINETIC_SLICE_ID"));
}

}  // namespace
}  // namespace kinetic
