// The fake Kubernetes API server's CronJobs, service accounts and RBAC (tests/fakes/fake_kube.h),
// over HTTPS through kinetic's own curl transport: a CronJob fired on demand (trigger_cronjob)
// runs a Job whose pod runs a command, and its status, events and history follow the Job as the
// real controller's do; a pod's service account must exist; a pod gets a token that the API
// server maps to its service account and authorizes with RBAC, and that dies with the pod. No
// sleeps: the waits block on the fake's state changes, and a pod that must stay active waits on a
// fifo the test opens.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fakes/fake_kube.h"
#include "http/transport.h"
#include "integration/fake_kube_fixture.h"

namespace {

using json = nlohmann::json;
using kinetic::fakes::FakeKube;
using kinetic::fakes::FakeKubeOptions;
using kinetic::fakes::FakeNodePool;
using kinetic::http::Request;
using kinetic::http::Response;

constexpr int kCronWait = 10000;  // ms; a generous bound, never a delay
const std::string kCronJobs = "/apis/batch/v1/namespaces/default/cronjobs";
const std::string kCronJobsPath = "/apis/batch/v1/namespaces/default/jobs";
const std::string kCronPods = "/api/v1/namespaces/default/pods";

json cronjob_body(const std::string& name, const std::vector<std::string>& command) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "CronJob"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"schedule", "*/5 * * * *"},
            {"jobTemplate",
             {{"metadata",
               {{"labels", {{"app", "auto-down"}}}, {"annotations", {{"owner", "kinetic"}}}}},
              {"spec",
               {{"backoffLimit", 0},
                {"template",
                 {{"spec",
                   {{"restartPolicy", "Never"},
                    {"containers",
                     {{{"name", "main"},
                       {"image", "python:3.11-slim"},
                       {"command", command}}}}}}}}}}}}}}};
}

bool has_cron_condition(const json& obj, const std::string& type) {
  if (obj.is_null() || !obj.contains("status")) return false;
  for (auto& c : obj["status"].value("conditions", json::array()))
    if (c.value("type", "") == type && c.value("status", "") == "True") return true;
  return false;
}

class FakeKubeCronTest : public kinetic::test::FakeKubeFixture {
 protected:
  FakeKubeCronTest() : FakeKubeFixture("fake-kube-cron-") {}
  json create(const std::string& collection, const json& body) {
    auto r = call("POST", collection, body);
    EXPECT_EQ(r.status, 201) << collection << ": " << r.body;
    return json::parse(r.body);
  }
  json merge_patch(const std::string& path, const json& patch) {
    auto r = call("PATCH", path, patch, "test-token", "application/merge-patch+json");
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return json::parse(r.body);
  }
  std::vector<std::string> events(const std::string& object, const std::string& reason,
                                  const std::string& ns = "default") {
    std::vector<std::string> out;
    for (auto& e : kube_->events_for(ns, object))
      if (e.value("reason", "") == reason) out.push_back(e.value("message", std::string()));
    return out;
  }
  std::vector<std::string> job_names() {
    std::vector<std::string> out;
    const json list = get(kCronJobsPath);
    for (auto& j : list["items"]) out.push_back(j["metadata"]["name"]);
    return out;
  }
  std::string pod_of(const std::string& job, const std::string& ns = "default") {
    auto pods = kube_->pod_names(ns, "job-name=" + job);
    return pods.empty() ? std::string() : pods.front();
  }
  std::string log_of(const std::string& pod, const std::string& ns = "default") {
    return call("GET", "/api/v1/namespaces/" + ns + "/pods/" + pod + "/log").body;
  }
  // A command that runs until the test writes to the fifo it returns.
  std::pair<std::vector<std::string>, std::string> held_command(const std::string& name) {
    auto fifo = dir_ + "/" + name;
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    return {{"sh", "-c", "echo started; read x < " + fifo}, fifo};
  }
  void release(const std::string& fifo) {
    int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::write(fd, "go\n", 3), 3);
    ::close(fd);
  }
  bool job_active(const std::string& job) {
    return kube_->wait_for_object(
        kCronJobsPath + "/" + job,
        [](const json& j) { return j["status"].value("active", 0) == 1; }, kCronWait);
  }
};

TEST_F(FakeKubeCronTest, CreateFillsTheDefaultsAndIsDiscoverable) {
  start();
  auto created = create(kCronJobs, cronjob_body("idle", {"true"}));
  const auto& spec = created["spec"];
  EXPECT_EQ(spec["concurrencyPolicy"], "Allow");
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["successfulJobsHistoryLimit"], 3);
  EXPECT_EQ(spec["failedJobsHistoryLimit"], 1);
  EXPECT_FALSE(spec.contains("startingDeadlineSeconds"));
  EXPECT_EQ(spec["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(created["status"], json::object());

  auto list = get(kCronJobs);
  EXPECT_EQ(list["kind"], "CronJobList");
  ASSERT_EQ(list["items"].size(), 1u);
  auto replay = call("GET", kCronJobs + "?watch=1&timeoutSeconds=0");
  ASSERT_EQ(replay.status, 200);
  EXPECT_EQ(json::parse(replay.body.substr(0, replay.body.find('\n')))["type"], "ADDED");

  // replace (PUT), then a strategic-merge patch, as kubectl apply sends
  auto got = get(kCronJobs + "/idle");
  got["spec"]["schedule"] = "0 * * * *";
  auto put = call("PUT", kCronJobs + "/idle", got);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(json::parse(put.body)["metadata"]["generation"], 2);
  auto smp = call("PATCH", kCronJobs + "/idle", {{"spec", {{"suspend", true}}}}, "test-token",
                  "application/strategic-merge-patch+json");
  ASSERT_EQ(smp.status, 200) << smp.body;
  EXPECT_EQ(json::parse(smp.body)["spec"]["suspend"], true);
  EXPECT_EQ(json::parse(smp.body)["spec"]["schedule"], "0 * * * *");

  json cronjobs;
  const json discovery = get("/apis/batch/v1");
  for (auto& r : discovery["resources"])
    if (r["name"] == "cronjobs") cronjobs = r;
  ASSERT_FALSE(cronjobs.is_null());
  EXPECT_EQ(cronjobs["shortNames"], json({"cj"}));
  EXPECT_EQ(cronjobs["kind"], "CronJob");
  EXPECT_EQ(cronjobs["verbs"], json({"create", "delete", "deletecollection", "get", "list", "patch",
                                     "update", "watch"}));
  auto openapi = get("/openapi/v3/apis/batch/v1");
  EXPECT_TRUE(openapi["paths"].contains("/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}"));

  EXPECT_EQ(call("DELETE", kCronJobs + "/idle").status, 200);
  EXPECT_EQ(call("GET", kCronJobs + "/idle").status, 404);
}

TEST_F(FakeKubeCronTest, ScheduleAndJobTemplateAreValidated) {
  start();
  auto refused = [&](const std::string& schedule) {
    auto body = cronjob_body("bad", {"true"});
    body["spec"]["schedule"] = schedule;
    auto r = call("POST", kCronJobs, body);
    EXPECT_EQ(r.status, 422) << r.body;
    return json::parse(r.body);
  };
  auto bad = refused("every five minutes");
  EXPECT_EQ(bad["reason"], "Invalid");
  EXPECT_EQ(bad["message"],
            "CronJob.batch \"bad\" is invalid: spec.schedule: Invalid value: \"every five "
            "minutes\": expected exactly 5 fields, found 3: [every five minutes]");
  EXPECT_EQ(bad["details"]["causes"][0],
            json({{"reason", "FieldValueInvalid"},
                  {"message",
                   "Invalid value: \"every five minutes\": expected exactly 5 fields, "
                   "found 3: [every five minutes]"},
                  {"field", "spec.schedule"}}));
  EXPECT_EQ(bad["details"]["kind"], "CronJob");
  EXPECT_EQ(bad["details"]["group"], "batch");
  EXPECT_EQ(refused("61 * * * *")["details"]["causes"][0]["message"],
            "Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61");
  EXPECT_EQ(refused("*/5 * * * mon-fry")["details"]["causes"][0]["message"],
            "Invalid value: \"*/5 * * * mon-fry\": failed to parse int from fry: strconv.Atoi: "
            "parsing \"fry\": invalid syntax");
  EXPECT_EQ(refused("@fortnightly")["details"]["causes"][0]["message"],
            "Invalid value: \"@fortnightly\": unrecognized descriptor: @fortnightly");
  EXPECT_EQ(refused("TZ=UTC */5 * * * *")["details"]["causes"][0]["message"],
            "Invalid value: \"TZ=UTC */5 * * * *\": cannot use TZ or CRON_TZ in schedule, use "
            "timeZone field instead");
  EXPECT_EQ(refused("")["details"]["causes"][0], json({{"reason", "FieldValueRequired"},
                                                       {"message", "Required value"},
                                                       {"field", "spec.schedule"}}));
  for (auto* ok :
       {"*/5 * * * *", "0 9-17/2 * jan-jun MON-FRI", "@hourly", "@every 1h30m", "5,10 0 1 * *"}) {
    auto body = cronjob_body("good", {"true"});
    body["spec"]["schedule"] = ok;
    auto r = call("POST", kCronJobs, body);
    EXPECT_EQ(r.status, 201) << ok << ": " << r.body;
    call("DELETE", kCronJobs + "/good");
  }

  auto no_containers = cronjob_body("bad", {"true"});
  no_containers["spec"]["jobTemplate"]["spec"]["template"]["spec"].erase("containers");
  no_containers["spec"]["concurrencyPolicy"] = "Sometimes";
  auto r = call("POST", kCronJobs, no_containers);
  ASSERT_EQ(r.status, 422);
  auto causes = json::parse(r.body)["details"]["causes"];
  ASSERT_EQ(causes.size(), 2u) << r.body;
  EXPECT_EQ(causes[0]["field"], "spec.concurrencyPolicy");
  EXPECT_EQ(causes[0]["message"],
            "Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", "
            "\"Replace\"");
  EXPECT_EQ(causes[1]["field"], "spec.jobTemplate.spec.template.spec.containers");

  // an update is validated too
  create(kCronJobs, cronjob_body("idle", {"true"}));
  auto patched = call("PATCH", kCronJobs + "/idle", {{"spec", {{"schedule", "* * *"}}}},
                      "test-token", "application/merge-patch+json");
  EXPECT_EQ(patched.status, 422) << patched.body;
  EXPECT_EQ(get(kCronJobs + "/idle")["spec"]["schedule"], "*/5 * * * *");
}

TEST_F(FakeKubeCronTest, TriggerRunsAJobAndTheStatusFollowsIt) {
  start();
  auto [command, fifo] = held_command("idle");
  auto cj = create(kCronJobs, cronjob_body("idle", command));
  const auto before = std::time(nullptr) / 60;
  auto job = kube_->trigger_cronjob("default", "idle");
  ASSERT_FALSE(job.empty());
  const auto minutes = std::stoll(job.substr(std::string("idle-").size()));
  EXPECT_GE(minutes, before);
  EXPECT_LE(minutes, std::time(nullptr) / 60);

  auto j = get(kCronJobsPath + "/" + job);
  EXPECT_EQ(j["metadata"]["labels"]["app"], "auto-down");
  EXPECT_EQ(j["metadata"]["annotations"]["owner"], "kinetic");
  std::time_t t = minutes * 60;
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  EXPECT_EQ(j["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"], stamp);
  EXPECT_EQ(j["metadata"]["ownerReferences"], json({{{"apiVersion", "batch/v1"},
                                                     {"kind", "CronJob"},
                                                     {"name", "idle"},
                                                     {"uid", cj["metadata"]["uid"]},
                                                     {"controller", true},
                                                     {"blockOwnerDeletion", true}}}));
  auto status = get(kCronJobs + "/idle")["status"];
  ASSERT_EQ(status["active"].size(), 1u);
  EXPECT_EQ(status["active"][0]["kind"], "Job");
  EXPECT_EQ(status["active"][0]["name"], job);
  EXPECT_EQ(status["active"][0]["namespace"], "default");
  EXPECT_EQ(status["active"][0]["uid"], j["metadata"]["uid"]);
  EXPECT_EQ(status["lastScheduleTime"], stamp);
  EXPECT_EQ(events("idle", "SuccessfulCreate"), std::vector<std::string>{"Created job " + job});

  ASSERT_TRUE(job_active(job));
  EXPECT_FALSE(kube_->wait_for_cronjob_job_done("default", job, 10));  // held on its fifo
  release(fifo);
  ASSERT_TRUE(kube_->wait_for_cronjob_job_done("default", job, kCronWait));
  status = get(kCronJobs + "/idle")["status"];
  EXPECT_FALSE(status.contains("active"));
  EXPECT_EQ(status["lastSuccessfulTime"],
            get(kCronJobsPath + "/" + job)["status"]["completionTime"]);
  EXPECT_EQ(events("idle", "SawCompletedJob"),
            std::vector<std::string>{"Saw completed job: " + job + ", condition: Complete"});
  EXPECT_EQ(log_of(pod_of(job)), "started\n");

  // Twice in one minute: the next minute's name, not a clash.
  auto second = kube_->trigger_cronjob("default", "idle");
  EXPECT_EQ(second, "idle-" + std::to_string(minutes + 1));
  EXPECT_FALSE(kube_->wait_for_cronjob_job_done("default", "idle-0", 10));
  EXPECT_TRUE(kube_->trigger_cronjob("default", "nothing").empty());
}

TEST_F(FakeKubeCronTest, ForbidSkipsWhileAJobIsActive) {
  start();
  auto [command, fifo] = held_command("forbid");
  auto body = cronjob_body("idle", command);
  body["spec"]["concurrencyPolicy"] = "Forbid";
  create(kCronJobs, body);
  auto first = kube_->trigger_cronjob("default", "idle");
  ASSERT_FALSE(first.empty());
  ASSERT_TRUE(job_active(first));
  EXPECT_EQ(kube_->trigger_cronjob("default", "idle"), "");
  EXPECT_EQ(events("idle", "JobAlreadyActive"),
            std::vector<std::string>{"Not starting job because prior execution is running and "
                                     "concurrency policy is Forbid"});
  EXPECT_EQ(job_names(), std::vector<std::string>{first});
  auto status = get(kCronJobs + "/idle")["status"];
  EXPECT_EQ(status["active"].size(), 1u);

  release(fifo);
  ASSERT_TRUE(kube_->wait_for_cronjob_job_done("default", first, kCronWait));
  auto next = kube_->trigger_cronjob("default", "idle");
  EXPECT_FALSE(next.empty());
  EXPECT_NE(next, first);
}

TEST_F(FakeKubeCronTest, ReplaceDeletesTheActiveJobFirst) {
  start();
  auto [command, fifo] = held_command("replace");
  auto body = cronjob_body("idle", command);
  body["spec"]["concurrencyPolicy"] = "Replace";
  create(kCronJobs, body);
  auto first = kube_->trigger_cronjob("default", "idle");
  ASSERT_TRUE(job_active(first));
  auto first_pod = pod_of(first);
  auto second = kube_->trigger_cronjob("default", "idle");
  ASSERT_FALSE(second.empty());
  EXPECT_FALSE(kube_->object(kCronJobsPath + "/" + first).has_value());
  EXPECT_EQ(events("idle", "SuccessfulDelete"), std::vector<std::string>{"Deleted job " + first});
  auto status = get(kCronJobs + "/idle")["status"];
  ASSERT_EQ(status["active"].size(), 1u);
  EXPECT_EQ(status["active"][0]["name"], second);
  // the replaced Job's pod goes with it (SIGTERM ends its shell)
  ASSERT_TRUE(kube_->wait_for_object(
      kCronPods + "/" + first_pod, [](const json& p) { return p.is_null(); }, kCronWait));
}

TEST_F(FakeKubeCronTest, HistoryLimitsDeleteTheOldestFinishedJobs) {
  start();
  auto body = cronjob_body("idle", {"true"});
  body["spec"]["successfulJobsHistoryLimit"] = 1;
  body["spec"]["failedJobsHistoryLimit"] = 1;
  create(kCronJobs, body);
  std::vector<std::string> ok, failed;
  for (int i = 0; i < 2; ++i) {
    ok.push_back(kube_->trigger_cronjob("default", "idle"));
    ASSERT_TRUE(kube_->wait_for_cronjob_job_done("default", ok.back(), kCronWait));
  }
  merge_patch(kCronJobs + "/idle", {{"spec",
                                     {{"jobTemplate",
                                       {{"spec",
                                         {{"template",
                                           {{"spec",
                                             {{"containers",
                                               {{{"name", "main"},
                                                 {"image", "python:3.11-slim"},
                                                 {"command", {"sh", "-c", "exit 3"}}}}}}}}}}}}}}}});
  for (int i = 0; i < 2; ++i) {
    failed.push_back(kube_->trigger_cronjob("default", "idle"));
    ASSERT_TRUE(kube_->wait_for_cronjob_job_done("default", failed.back(), kCronWait));
  }
  // Each finished Job beyond its limit went with its pods: the newest of each kind stays.
  ASSERT_TRUE(kube_->wait_for_object(
      kCronJobsPath + "/" + failed[0], [](const json& j) { return j.is_null(); }, kCronWait));
  auto left = job_names();
  EXPECT_EQ(std::set<std::string>(left.begin(), left.end()),
            (std::set<std::string>{ok[1], failed[1]}));
  EXPECT_EQ(events("idle", "SuccessfulDelete"),
            (std::vector<std::string>{"Deleted job " + ok[0], "Deleted job " + failed[0]}));
  EXPECT_TRUE(pod_of(ok[0]).empty());
  EXPECT_TRUE(pod_of(failed[0]).empty());
  EXPECT_FALSE(pod_of(ok[1]).empty());
  auto sawn = events("idle", "SawCompletedJob");
  ASSERT_EQ(sawn.size(), 4u);
  EXPECT_EQ(sawn[3], "Saw completed job: " + failed[1] + ", condition: Failed");
  auto status = get(kCronJobs + "/idle")["status"];
  EXPECT_EQ(status["lastSuccessfulTime"],
            get(kCronJobsPath + "/" + ok[1])["status"]["completionTime"]);
}

TEST_F(FakeKubeCronTest, SuspendedCronJobDoesNotFire) {
  start();
  auto body = cronjob_body("idle", {"true"});
  body["spec"]["suspend"] = true;
  create(kCronJobs, body);
  EXPECT_EQ(kube_->trigger_cronjob("default", "idle"), "");
  EXPECT_TRUE(job_names().empty());
  EXPECT_FALSE(get(kCronJobs + "/idle")["status"].contains("lastScheduleTime"));
  merge_patch(kCronJobs + "/idle", {{"spec", {{"suspend", false}}}});
  EXPECT_FALSE(kube_->trigger_cronjob("default", "idle").empty());
}

TEST_F(FakeKubeCronTest, DeletingACronJobDeletesItsJobsAndPods) {
  start();
  create(kCronJobs, cronjob_body("idle", {"true"}));
  auto job = kube_->trigger_cronjob("default", "idle");
  ASSERT_TRUE(kube_->wait_for_cronjob_job_done("default", job, kCronWait));
  auto pod = pod_of(job);
  ASSERT_FALSE(pod.empty());
  auto del =
      call("DELETE", kCronJobs + "/idle",
           {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Foreground"}});
  EXPECT_EQ(del.status, 200) << del.body;
  EXPECT_FALSE(kube_->object(kCronJobsPath + "/" + job).has_value());
  EXPECT_FALSE(kube_->object(kCronPods + "/" + pod).has_value());

  // Orphan keeps the Jobs, without their owner.
  create(kCronJobs, cronjob_body("idle", {"true"}));
  job = kube_->trigger_cronjob("default", "idle");
  ASSERT_TRUE(kube_->wait_for_cronjob_job_done("default", job, kCronWait));
  EXPECT_EQ(call("DELETE", kCronJobs + "/idle?propagationPolicy=Orphan").status, 200);
  auto kept = get(kCronJobsPath + "/" + job);
  EXPECT_FALSE(kept["metadata"].contains("ownerReferences"));
}

TEST_F(FakeKubeCronTest, APodsServiceAccountMustExist) {
  start();
  // every namespace has its "default" account, which pods get when they name none
  ASSERT_EQ(call("POST", "/api/v1/namespaces", {{"metadata", {{"name", "kinetic"}}}}).status, 201);
  EXPECT_EQ(get("/api/v1/namespaces/kinetic/serviceaccounts/default")["metadata"]["name"],
            "default");
  json pod = {{"metadata", {{"generateName", "lonely-"}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"serviceAccountName", "nobody"},
                {"containers", {{{"name", "main"}, {"image", "app:1"}, {"command", {"true"}}}}}}}};
  auto r = call("POST", "/api/v1/namespaces/kinetic/pods", pod);
  ASSERT_EQ(r.status, 403);
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
              "message":"pods \"lonely-\" is forbidden: error looking up service account kinetic/nobody: serviceaccount \"nobody\" not found",
              "reason":"Forbidden","details":{"name":"lonely-","kind":"pods"},"code":403})"));
  pod["spec"].erase("serviceAccountName");
  auto made = call("POST", "/api/v1/namespaces/kinetic/pods", pod);
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(json::parse(made.body)["spec"]["serviceAccountName"], "default");

  // A Job's pods are refused the same way: FailedCreate on the Job, retried until the account
  // exists.
  json job = {
      {"metadata", {{"name", "needs-sa"}}},
      {"spec",
       {{"backoffLimit", 0},
        {"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"serviceAccountName", "kinetic-auto-down"},
            {"containers", {{{"name", "main"}, {"image", "app:1"}, {"command", {"true"}}}}}}}}}}}};
  create("/apis/batch/v1/namespaces/kinetic/jobs", job);
  ASSERT_TRUE(kube_->wait_for_event("kinetic", "FailedCreate", kCronWait));
  EXPECT_EQ(events("needs-sa", "FailedCreate", "kinetic").at(0),
            "Error creating: pods \"needs-sa-\" is forbidden: error looking up service account "
            "kinetic/kinetic-auto-down: serviceaccount \"kinetic-auto-down\" not found");
  create("/api/v1/namespaces/kinetic/serviceaccounts",
         {{"metadata", {{"name", "kinetic-auto-down"}}}});
  ASSERT_TRUE(kube_->wait_for_object(
      "/apis/batch/v1/namespaces/kinetic/jobs/needs-sa",
      [](const json& j) { return has_cron_condition(j, "Complete"); }, kCronWait));
}

// What the idle auto-down script does from its pod: its token, its CA and its namespace from
// $KINETIC_SERVICEACCOUNT_DIR, then the API server with Python's urllib.
const char* kInPodScript = R"PY(
import json, os, ssl, urllib.request, urllib.error
d = os.environ["KINETIC_SERVICEACCOUNT_DIR"]
token = open(d + "/token").read()
ns = open(d + "/namespace").read()
ctx = ssl.create_default_context(cafile=d + "/ca.crt")
base = "https://%s:%s" % (os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"])
def call(path):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, context=ctx) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
s, body = call("/api/v1/namespaces/%s/pods" % ns)
print("pods", s, len(body.get("items", [])))
s, body = call("/apis/batch/v1/namespaces/%s/jobs" % ns)
print("jobs", s, json.dumps(body, sort_keys=True))
s, body = call("/api/v1/namespaces/%s/configmaps/auto-down-state" % ns)
print("state", s, body.get("reason"))
s, body = call("/api/v1/namespaces/%s/configmaps/other" % ns)
print("other", s, body.get("message"))
print("identity", os.environ.get("IDENTITY", "none"))
print("token", token)
)PY";

TEST_F(FakeKubeCronTest, APodsTokenIsItsServiceAccountUnderRbac) {
  FakeKubeOptions o;
  o.pod_identity_env = [](const std::string& ns, const std::string& sa) {
    std::map<std::string, std::string> env;
    if (ns == "kinetic" && sa == "kinetic-auto-down") env["IDENTITY"] = "workload-identity";
    return env;
  };
  start(o);
  const std::string ns = "/api/v1/namespaces/kinetic";
  create("/api/v1/namespaces", {{"metadata", {{"name", "kinetic"}}}});
  create(ns + "/serviceaccounts", {{"metadata", {{"name", "kinetic-auto-down"}}}});
  const std::string rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/kinetic";
  create(rbac + "/roles", {{"metadata", {{"name", "auto-down"}}},
                           {"rules",
                            {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"list"}}},
                             {{"apiGroups", {""}},
                              {"resources", {"configmaps"}},
                              {"resourceNames", {"auto-down-state"}},
                              {"verbs", {"get", "update"}}}}}});
  create(
      rbac + "/rolebindings",
      {{"metadata", {{"name", "auto-down"}}},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "auto-down"}}},
       {"subjects",
        {{{"kind", "ServiceAccount"}, {"name", "kinetic-auto-down"}, {"namespace", "kinetic"}}}}});
  auto body = cronjob_body("auto-down", {"python3", "-c", kInPodScript});
  body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["serviceAccountName"] =
      "kinetic-auto-down";
  create("/apis/batch/v1/namespaces/kinetic/cronjobs", body);
  auto job = kube_->trigger_cronjob("kinetic", "auto-down");
  ASSERT_TRUE(kube_->wait_for_cronjob_job_done("kinetic", job, kCronWait));
  auto pod = pod_of(job, "kinetic");
  auto log = log_of(pod, "kinetic");
  std::map<std::string, std::string> out;
  std::stringstream ss(log);
  for (std::string line; std::getline(ss, line);)
    out[line.substr(0, line.find(' '))] = line.substr(line.find(' ') + 1);
  EXPECT_EQ(out["pods"], "200 1") << log;
  EXPECT_EQ(json::parse(out["jobs"].substr(4)),
            json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
              "message":"jobs.batch is forbidden: User \"system:serviceaccount:kinetic:kinetic-auto-down\" cannot list resource \"jobs\" in API group \"batch\" in the namespace \"kinetic\"",
              "reason":"Forbidden","details":{"group":"batch","kind":"jobs"},"code":403})"))
      << log;
  EXPECT_EQ(out["jobs"].substr(0, 3), "403");
  EXPECT_EQ(out["state"], "404 NotFound") << log;  // allowed, and not there yet
  EXPECT_EQ(out["other"],
            "403 configmaps \"other\" is forbidden: User "
            "\"system:serviceaccount:kinetic:kinetic-auto-down\" cannot get resource "
            "\"configmaps\" in API group \"\" in the namespace \"kinetic\"")
      << log;
  EXPECT_EQ(out["identity"], "workload-identity");

  // The test holds the pod's token now: it works until the pod is deleted.
  const auto token = out["token"];
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(call("GET", ns + "/pods", nullptr, token).status, 200);
  EXPECT_EQ(call("GET", "/apis/batch/v1", nullptr, token).status, 200);  // discovery
  EXPECT_EQ(call("GET", "/version", nullptr, token).status, 200);
  auto create_cm = call("POST", ns + "/configmaps", {{"metadata", {{"name", "auto-down-state"}}}},
                        token);  // resourceNames never grant a create
  EXPECT_EQ(create_cm.status, 403);
  EXPECT_EQ(json::parse(create_cm.body)["message"],
            "configmaps is forbidden: User \"system:serviceaccount:kinetic:kinetic-auto-down\" "
            "cannot create resource \"configmaps\" in API group \"\" in the namespace \"kinetic\"");
  auto other_ns = call("GET", "/api/v1/namespaces/default/pods", nullptr, token);
  EXPECT_EQ(other_ns.status, 403);
  auto all_ns = call("GET", "/api/v1/pods", nullptr, token);
  EXPECT_EQ(json::parse(all_ns.body)["message"],
            "pods is forbidden: User \"system:serviceaccount:kinetic:kinetic-auto-down\" cannot "
            "list resource \"pods\" in API group \"\" at the cluster scope");
  auto log_r = call("GET", ns + "/pods/" + pod + "/log", nullptr, token);
  EXPECT_EQ(json::parse(log_r.body)["message"],
            "pods \"" + pod +
                "\" is forbidden: User \"system:serviceaccount:kinetic:kinetic-auto-down\" cannot "
                "get resource \"pods/log\" in API group \"\" in the namespace \"kinetic\"");
  EXPECT_EQ(call("DELETE", ns + "/pods/" + pod).status, 200);
  ASSERT_TRUE(kube_->wait_for_object(
      ns + "/pods/" + pod, [](const json& p) { return p.is_null(); }, kCronWait));
  auto gone = call("GET", ns + "/pods", nullptr, token);
  EXPECT_EQ(gone.status, 401);
  EXPECT_EQ(json::parse(gone.body)["reason"], "Unauthorized");
}

TEST_F(FakeKubeCronTest, RbacRulesClusterRolesAndRequestedTokens) {
  start();
  create("/api/v1/namespaces/default/serviceaccounts", {{"metadata", {{"name", "reader"}}}});
  auto tr = call("POST", "/api/v1/namespaces/default/serviceaccounts/reader/token",
                 {{"apiVersion", "authentication.k8s.io/v1"},
                  {"kind", "TokenRequest"},
                  {"spec", {{"expirationSeconds", 3600}}}});
  ASSERT_EQ(tr.status, 201) << tr.body;
  const auto token = json::parse(tr.body)["status"]["token"].get<std::string>();
  EXPECT_EQ(call("GET", kCronPods, nullptr, token).status, 403);
  EXPECT_EQ(call("GET", "/healthz", nullptr, token).status, 200);
  auto path = call("GET", "/metrics", nullptr, token);
  EXPECT_EQ(path.status, 403);
  EXPECT_EQ(
      json::parse(path.body)["message"],
      "forbidden: User \"system:serviceaccount:default:reader\" cannot get path \"/metrics\"");

  // A ClusterRole granted in one namespace by a RoleBinding, to the group of its accounts.
  const std::string rbac = "/apis/rbac.authorization.k8s.io/v1";
  create(rbac + "/clusterroles",
         {{"metadata", {{"name", "job-reader"}}},
          {"rules",
           {{{"apiGroups", {"batch"}}, {"resources", {"jobs", "cronjobs"}}, {"verbs", {"*"}}},
            {{"apiGroups", {"*"}}, {"resources", {"*/status"}}, {"verbs", {"get"}}}}}});
  create(rbac + "/namespaces/default/rolebindings",
         {{"metadata", {{"name", "job-reader"}}},
          {"roleRef", {{"kind", "ClusterRole"}, {"name", "job-reader"}}},
          {"subjects", {{{"kind", "Group"}, {"name", "system:serviceaccounts:default"}}}}});
  auto rb = get(rbac + "/namespaces/default/rolebindings/job-reader");
  EXPECT_EQ(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");  // defaulted
  EXPECT_EQ(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
  EXPECT_EQ(call("GET", kCronJobsPath, nullptr, token).status, 200);
  EXPECT_EQ(call("GET", kCronJobsPath + "?watch=1&timeoutSeconds=0", nullptr, token).status, 200);
  EXPECT_EQ(call("GET", kCronJobs + "/x/status", nullptr, token).status, 404);  // allowed
  EXPECT_EQ(call("GET", "/apis/batch/v1/namespaces/kube-system/jobs", nullptr, token).status, 403);
  // ... and a ClusterRoleBinding grants it everywhere
  create(
      rbac + "/clusterrolebindings",
      {{"metadata", {{"name", "job-reader"}}},
       {"roleRef", {{"kind", "ClusterRole"}, {"name", "job-reader"}}},
       {"subjects", {{{"kind", "ServiceAccount"}, {"name", "reader"}, {"namespace", "default"}}}}});
  EXPECT_EQ(call("GET", "/apis/batch/v1/namespaces/kube-system/jobs", nullptr, token).status, 200);
  EXPECT_EQ(call("GET", "/apis/batch/v1/jobs", nullptr, token).status, 200);

  // Bindings are validated as the API server does.
  auto bad = call("POST", rbac + "/clusterrolebindings",
                  {{"metadata", {{"name", "bad"}}},
                   {"roleRef", {{"kind", "Role"}, {"name", "x"}}},
                   {"subjects", {{{"kind", "ServiceAccount"}, {"name", "reader"}}}}});
  ASSERT_EQ(bad.status, 422);
  EXPECT_EQ(json::parse(bad.body)["message"],
            "ClusterRoleBinding.rbac.authorization.k8s.io \"bad\" is invalid: [roleRef.kind: "
            "Unsupported value: \"Role\": supported values: \"ClusterRole\", "
            "subjects[0].namespace: Required value]");
  auto no_verbs = call(
      "POST", rbac + "/namespaces/default/roles",
      {{"metadata", {{"name", "r"}}}, {"rules", {{{"apiGroups", {""}}, {"resources", {"pods"}}}}}});
  EXPECT_EQ(json::parse(no_verbs.body)["message"],
            "Role.rbac.authorization.k8s.io \"r\" is invalid: rules[0].verbs: Required value: "
            "verbs must contain at least one value");
  auto change =
      call("PATCH", rbac + "/namespaces/default/rolebindings/job-reader",
           {{"roleRef", {{"name", "other"}}}}, "test-token", "application/merge-patch+json");
  EXPECT_EQ(change.status, 422) << change.body;

  // The token dies with its ServiceAccount (the same name again is another account).
  EXPECT_EQ(call("DELETE", "/api/v1/namespaces/default/serviceaccounts/reader").status, 200);
  EXPECT_EQ(call("GET", kCronJobsPath, nullptr, token).status, 401);
  create("/api/v1/namespaces/default/serviceaccounts", {{"metadata", {{"name", "reader"}}}});
  EXPECT_EQ(call("GET", kCronJobsPath, nullptr, token).status, 401);
}

TEST_F(FakeKubeCronTest, AutomountCanBeTurnedOff) {
  start();
  create("/api/v1/namespaces/default/serviceaccounts",
         {{"metadata", {{"name", "quiet"}}}, {"automountServiceAccountToken", false}});
  auto pod = [&](const std::string& name, const std::string& sa, std::optional<bool> automount) {
    json spec = {{"restartPolicy", "Never"},
                 {"serviceAccountName", sa},
                 {"containers",
                  {{{"name", "main"},
                    {"image", "app:1"},
                    {"command", {"sh", "-c", "echo ${KINETIC_SERVICEACCOUNT_DIR:-none}"}}}}}};
    if (automount) spec["automountServiceAccountToken"] = *automount;
    create(kCronPods, {{"metadata", {{"name", name}}}, {"spec", spec}});
    EXPECT_TRUE(kube_->wait_for_object(
        kCronPods + "/" + name,
        [](const json& p) { return p["status"].value("phase", "") == "Succeeded"; }, kCronWait));
    return log_of(name);
  };
  EXPECT_EQ(pod("off-by-account", "quiet", std::nullopt), "none\n");
  EXPECT_EQ(pod("off-by-pod", "default", false), "none\n");
  auto on = pod("on-by-pod", "quiet", true);
  EXPECT_NE(on.find("/var/run/secrets/kubernetes.io/serviceaccount"), std::string::npos) << on;
  EXPECT_TRUE(std::filesystem::exists(on.substr(0, on.size() - 1) + "/token"));
}

}  // namespace
