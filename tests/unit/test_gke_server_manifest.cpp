// A server's Deployment and Service on GKE (backend/gke/server_manifest.h), against golden files
// (tests/golden/manifests/server-*.yaml; regenerate with KINETIC_UPDATE_GOLDEN=1) and by the
// properties Kubernetes checks: the selector matches the pod's labels, the pod restarts Always.

#include <gtest/gtest.h>

#include <string>

#include "backend/gke/server_manifest.h"
#include "core/error.h"
#include "manifest_golden.h"
#include "render/yaml.h"

namespace kinetic::gke {
namespace {

ManifestInput server_input() {
  ManifestInput in;
  in.job_id = "job-5e7e7e7e";
  in.service_account = "kinetic-job";
  in.accelerator.name = "l4";
  in.accelerator.family = AcceleratorFamily::gpu;
  in.accelerator.kind = "l4";
  in.accelerator.chips = 1;
  in.accelerator.chips_per_host = 1;
  in.accelerator.machine_type = "g2-standard-4";
  in.accelerator.gke_accelerator = "nvidia-l4";
  in.accelerator.resource_name = "nvidia.com/gpu";
  in.accelerator.node_selector = {{"cloud.google.com/gke-accelerator", "nvidia-l4"}};
  in.image = "us-central1-docker.pkg.dev/acme-ml/kinetic/base:gpu-0123456789ab";
  in.command = {"python3", "-c", "exec(open('/bootstrap.py').read())"};
  in.env = {{"KINETIC_JOB_ID", "job-5e7e7e7e"}, {"KINETIC_SERVE_PORT", "8000"}};
  in.secret_env = {"HF_TOKEN"};
  in.annotations = {{"kinetic.dev/file", "serve.sh"}};
  return in;
}

TEST(GkeServerManifestGolden, DeploymentAndService) {
  const ManifestInput in = server_input();
  test::expect_manifest_golden("server-l4", to_yaml_stream({build_server_deployment(in, 8000),
                                                            build_server_service(in, 8000)}));
}

TEST(GkeServerManifest, DeploymentSelectsItsOwnPodsAndRestartsThemAlways) {
  const nlohmann::ordered_json d = build_server_deployment(server_input(), 8000);
  const nlohmann::ordered_json& labels = d["spec"]["template"]["metadata"]["labels"];
  for (const auto& [key, value] : d["spec"]["selector"]["matchLabels"].items())
    EXPECT_EQ(labels[key], value) << key;
  EXPECT_EQ(d["spec"]["replicas"], 1);
  EXPECT_EQ(d["spec"]["template"]["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(d["metadata"]["labels"]["kinetic.dev/serve"], "8000");
  const nlohmann::ordered_json& c = d["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["readinessProbe"]["tcpSocket"]["port"], 8000);
  EXPECT_EQ(c["ports"][0]["containerPort"], 8000);
  // The secret stays a reference, as in a run's Job.
  EXPECT_EQ(d.dump().find("secretKeyRef") != std::string::npos, true);
}

TEST(GkeServerManifest, ServiceSelectsTheServersPodsOnItsPort) {
  const nlohmann::ordered_json s = build_server_service(server_input(), 8000);
  EXPECT_EQ(s["spec"]["type"], "ClusterIP");
  EXPECT_EQ(s["spec"]["selector"]["kinetic.dev/job"], "job-5e7e7e7e");
  EXPECT_EQ(s["spec"]["ports"][0]["targetPort"], 8000);
  EXPECT_EQ(s["metadata"]["name"], "kinetic-job-5e7e7e7e");
}

TEST(GkeServerManifest, APortOutOfRangeIsRefused) {
  EXPECT_THROW(build_server_deployment(server_input(), 0), Error);
  EXPECT_THROW(build_server_service(server_input(), 70000), Error);
}

}  // namespace
}  // namespace kinetic::gke
