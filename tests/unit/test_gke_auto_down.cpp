// Auto-down's objects (golden: tests/golden/manifests/auto-down.yaml), its period, and the line
// `status` makes of what the in-cluster check recorded (backend/gke/auto_down.h).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "backend/gke/auto_down.h"
#include "backend/gke/script_pod.h"
#include "core/error.h"
#include "manifest_golden.h"
#include "render/yaml.h"

namespace kinetic::gke {
namespace {

Target target() {
  return test::acme_target();
}

TEST(AutoDownManifests, Golden) {
  auto docs = auto_down_manifests(target(), 7200);
  // The script is tested on its own (tests/integration/test_auto_down_script.cpp).
  for (auto& d : docs)
    if (d["kind"] == "CronJob")
      d["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"][2] =
          "<lib/backend/gke/auto_down.py>";
  test::expect_manifest_golden("auto-down", to_yaml_stream(docs));
}

TEST(AutoDownManifests, TheCronJobRunsTheEmbeddedScriptAsItsOwnServiceAccount) {
  auto docs = auto_down_manifests(target(), 600);
  const nlohmann::ordered_json* cron = nullptr;
  for (const auto& d : docs)
    if (d["kind"] == "CronJob") cron = &d;
  ASSERT_NE(cron, nullptr);
  const auto& pod = (*cron)["spec"]["jobTemplate"]["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "kinetic-auto-down-kinetic");
  EXPECT_EQ(pod["containers"][0]["command"][2], std::string(auto_down_source()));
  // Everything in kinetic-system, whatever the job namespace: nothing that may create pods in
  // the jobs' namespace can run one as this account.
  Target other = target();
  other.ns = "ml";
  for (const auto& d : auto_down_manifests(other, 600)) {
    const auto& md = d["metadata"];
    if (d["kind"] == "Namespace" || d["kind"] == "ClusterRole" || d["kind"] == "ClusterRoleBinding")
      EXPECT_FALSE(md.contains("namespace")) << d.dump();
    else
      EXPECT_EQ(md["namespace"], "kinetic-system") << d.dump();
  }
  EXPECT_EQ(docs.front()["kind"], "Namespace");
  EXPECT_EQ(docs.front()["metadata"]["name"], "kinetic-system");
}

// What runs as the account that may delete the cluster is the image kinetic names, whatever
// Docker Hub later moves the tag to: a reference pinned by digest (issue #28 point 6).
TEST(AutoDownManifests, TheScriptsImageIsPinnedByDigest) {
  const std::regex pinned(R"(^python:3\.12-slim@sha256:[0-9a-f]{64}$)");
  for (const auto& d : auto_down_manifests(target(), 600))
    if (d["kind"] == "CronJob") {
      const auto& pod = d["spec"]["jobTemplate"]["spec"]["template"]["spec"];
      EXPECT_TRUE(std::regex_match(pod["containers"][0]["image"].get<std::string>(), pinned))
          << pod["containers"][0]["image"];
    }
  EXPECT_TRUE(std::regex_match(std::string(kScriptImage), pinned)) << kScriptImage;
}

// It lists workloads in every namespace (a ClusterRole, list only: no Secret, no log), deletes
// Deployments (an idle-stopped server's, in whichever namespace it runs) and nothing else, and
// reads and patches its own ConfigMap (a Role in its namespace).
TEST(AutoDownManifests, ItMayListWorkloadsClusterWideDeleteDeploymentsAndPatchOnlyItsRecord) {
  auto docs = auto_down_manifests(target(), 600);
  for (const auto& d : docs) {
    if (d["kind"] == "ClusterRole") {
      for (const auto& rule : d["rules"]) {
        if (rule["verbs"] == nlohmann::ordered_json({"delete"})) {
          EXPECT_EQ(rule["apiGroups"], nlohmann::ordered_json({"apps"})) << rule.dump();
          EXPECT_EQ(rule["resources"], nlohmann::ordered_json({"deployments"})) << rule.dump();
          continue;
        }
        EXPECT_EQ(rule["verbs"], nlohmann::ordered_json({"list"})) << rule.dump();
        for (const auto& r : rule["resources"]) EXPECT_NE(r, "secrets");
      }
    } else if (d["kind"] == "ClusterRoleBinding" || d["kind"] == "RoleBinding") {
      EXPECT_EQ(d["subjects"][0]["name"], "kinetic-auto-down-kinetic");
      EXPECT_EQ(d["subjects"][0]["namespace"], "kinetic-system");
    } else if (d["kind"] == "Role") {
      EXPECT_EQ(d["rules"].size(), 1u);
      EXPECT_EQ(d["rules"][0]["resourceNames"], nlohmann::ordered_json({"kinetic-auto-down"}));
    }
  }
}

TEST(AutoDownGrant, ThePrincipalAndConditionNameThisClusterOnly) {
  EXPECT_EQ(auto_down_principal(target(), "123456789012"),
            "principal://iam.googleapis.com/projects/123456789012/locations/global/"
            "workloadIdentityPools/acme-ml.svc.id.goog/subject/ns/kinetic-system/sa/"
            "kinetic-auto-down-kinetic");
  EXPECT_EQ(auto_down_condition(target()),
            "resource.name == \"projects/acme-ml/locations/us-central1-a/clusters/kinetic\"");
  Target other = target();
  other.cluster = "big";
  EXPECT_NE(auto_down_principal(other, "1"), auto_down_principal(target(), "1"));
  EXPECT_NE(auto_down_condition_title(other), auto_down_condition_title(target()));
}

TEST(AutoDownPeriod, AcceptsDurationsOfTenMinutesOrMoreAndOff) {
  EXPECT_EQ(parse_auto_down("2h", "--auto-down"), 7200);
  EXPECT_EQ(parse_auto_down("10m", "--auto-down"), 600);
  EXPECT_EQ(parse_auto_down("1h30m", "--auto-down"), 5400);
  EXPECT_EQ(parse_auto_down("off", "--auto-down"), 0);
  EXPECT_EQ(parse_auto_down("OFF", "--auto-down"), 0);
  try {
    parse_auto_down("5m", "--auto-down");
    ADD_FAILURE() << "5m accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("at least 10m"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_auto_down("soon", "--auto-down"), Error);
}

constexpr double kNow = 1795000000;

TEST(AutoDownText, SaysWhenTheClusterGoesAndSinceWhenItIsIdle) {
  AutoDownState s;
  s.idle_seconds = 7200;
  s.state = "idle";
  s.idle_since = kNow - 48 * 60;
  s.deletes_at = kNow + 72 * 60;
  s.checked_at = kNow - 60;
  const std::string text = auto_down_text(s, kNow);
  EXPECT_EQ(text.rfind("auto-down in 1h12m (idle since ", 0), 0u) << text;
  EXPECT_EQ(text.find("last check"), std::string::npos) << text;
}

// A check that decided but could not delete an idle-stopped server's Deployment says why.
TEST(AutoDownText, WhatTheLastCheckCouldNotDoFollowsItsDecision) {
  AutoDownState s;
  s.idle_seconds = 7200;
  s.state = "active";
  s.checked_at = kNow - 60;
  s.message = "cannot delete the idle-stopped server's Deployment default/kinetic-job-1: HTTP 403";
  EXPECT_EQ(auto_down_text(s, kNow),
            "auto-down after 2h idle (a job is pending or running); its last check: cannot delete "
            "the idle-stopped server's Deployment default/kinetic-job-1: HTTP 403");
}

TEST(AutoDownText, ActiveUncheckedDeletingFailedAndStale) {
  AutoDownState s;
  s.idle_seconds = 7200;
  EXPECT_EQ(auto_down_text(s, kNow), "auto-down after 2h idle (first check within 5 minutes)");
  s.state = "active";
  s.checked_at = kNow - 120;
  EXPECT_EQ(auto_down_text(s, kNow), "auto-down after 2h idle (a job is pending or running)");
  s.checked_at = kNow - 40 * 60;  // the CronJob stopped running: say so
  EXPECT_EQ(auto_down_text(s, kNow),
            "auto-down after 2h idle (a job is pending or running); last check 40m ago");
  s.state = "error";
  s.checked_at = kNow;
  s.message = "deleting cluster kinetic: HTTP 403: Required \"container.clusters.delete\"";
  EXPECT_EQ(auto_down_text(s, kNow), "auto-down failed at its last check: " + s.message);
}

}  // namespace
}  // namespace kinetic::gke
