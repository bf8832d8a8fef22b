// The idle rule of auto-down (lib/backend/gke/auto_down.py, as embedded) run for real with
// python3: decide() and activity() are pure, so each case is a fake clock (NOW, in seconds), the
// workloads the script would list and what it recorded last time. The whole script against a
// cluster is in the e2e tests (tests/e2e/test_gke_auto_down.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/gke/auto_down.h"
#include "core/fs.h"
#include "integration/command_output.h"

namespace kinetic {
namespace {

using nlohmann::json;

constexpr long kHour = 3600;
constexpr double kT0 = 1795000000;  // 2026-11-18T..., a fixed clock

// Loads the embedded script as a module (not as __main__, so main() does not run) and prints
// what EXPR evaluates to, as JSON. ARGS is bound to `args` in the expression's scope.
json python(const std::string& expr, const json& args) {
  const fs::path dir =
      fs::temp_directory_path() / ("kinetic-auto-down-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "auto_down.py") << gke::auto_down_source();
  std::ofstream(dir / "args.json") << args.dump();
  std::ofstream(dir / "driver.py") << "import json, sys\n"
                                      "m = {'__name__': 'auto_down'}\n"
                                      "exec(open(sys.argv[1]).read(), m)\n"
                                      "args = json.load(open(sys.argv[2]))\n"
                                      "print(json.dumps(eval(sys.argv[3], m, {'args': args})))\n";
  const std::string cmd = "python3 '" + (dir / "driver.py").string() + "' '" +
                          (dir / "auto_down.py").string() + "' '" + (dir / "args.json").string() +
                          "' \"" + expr + "\"";
  const auto run = test::command_output(cmd);
  EXPECT_EQ(run.status, 0) << run.out;
  fs::remove_all(dir);
  return json::parse(run.out);
}

// decide(now, seen, state, idle) → [record, delete]
json decide(double now, const json& seen, const json& state, long idle) {
  return python("decide(args[0], args[1], args[2], args[3])", {now, seen, state, idle});
}

json idle_seen() {
  return {{"active", json::array()}, {"last_end", nullptr}};
}

// As the script writes times: RFC 3339, whole seconds, UTC.
std::string at(double t) {
  const time_t secs = static_cast<time_t>(t);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

TEST(AutoDownRule, TheFirstCheckOfAnIdleClusterStartsTheClock) {
  json r = decide(kT0, idle_seen(), json::object(), 2 * kHour);
  EXPECT_EQ(r[0]["state"], "idle");
  EXPECT_EQ(r[0]["idle_since"], at(kT0));
  EXPECT_EQ(r[0]["deletes_at"], at(kT0 + 2 * kHour));
  EXPECT_EQ(r[0]["idle_after"], "7200");
  EXPECT_FALSE(r[1]);
}

TEST(AutoDownRule, TheClusterGoesWhenThePeriodIsOverAndNotASecondBefore) {
  json state = {{"state", "idle"}, {"idle_since", at(kT0)}};
  json before = decide(kT0 + 2 * kHour - 1, idle_seen(), state, 2 * kHour);
  EXPECT_EQ(before[0]["state"], "idle");
  EXPECT_FALSE(before[1]);
  json due = decide(kT0 + 2 * kHour, idle_seen(), state, 2 * kHour);
  EXPECT_EQ(due[0]["state"], "deleting");
  EXPECT_EQ(due[0]["idle_since"], at(kT0));
  EXPECT_TRUE(due[1]);
}

TEST(AutoDownRule, AnActiveWorkloadKeepsTheClusterWhateverWasRecorded) {
  json seen = {{"active", {"job/job-1a2b3c4d"}}, {"last_end", nullptr}};
  json state = {{"state", "idle"}, {"idle_since", at(kT0)}};
  json r = decide(kT0 + 30 * kHour, seen, state, 2 * kHour);
  EXPECT_EQ(r[0]["state"], "active");
  EXPECT_EQ(r[0]["active"], "1");
  EXPECT_EQ(r[0]["idle_since"], "");
  EXPECT_FALSE(r[1]);
}

TEST(AutoDownRule, AfterActivityTheClockStartsAgainFromNowWhenTheEndIsUnknown) {
  // The job was seen at the last check and is gone (its Job deleted by run's clean-up): it
  // ended at some unknown time before now, so the period counts from now, never from earlier.
  json state = {{"state", "active"}, {"checked_at", at(kT0)}, {"idle_since", ""}};
  json r = decide(kT0 + 5 * kHour, idle_seen(), state, 2 * kHour);
  EXPECT_EQ(r[0]["idle_since"], at(kT0 + 5 * kHour));
  EXPECT_FALSE(r[1]);
}

TEST(AutoDownRule, AJobThatEndedSinceTheLastCheckRestartsTheClockAtItsEnd) {
  // Idle since T0, then a short job ran between two checks; its finished Job is still listed.
  json state = {{"state", "idle"}, {"idle_since", at(kT0)}};
  json seen = {{"active", json::array()}, {"last_end", kT0 + 2 * kHour - 60}};
  json r = decide(kT0 + 2 * kHour, seen, state, 2 * kHour);
  EXPECT_EQ(r[0]["idle_since"], at(kT0 + 2 * kHour - 60));
  EXPECT_FALSE(r[1]) << "the cluster went 60 s after a job ended";
}

// Every state the script records (auto_down.h's AutoDownState lists them: none yet, "active",
// "idle", "deleting", and "error" when the DELETE failed) and what the next idle check does with
// the recorded idle_since. "deleting" and "error" come only after the cluster was found idle for
// the period, so that time must not be counted again: a delete that failed once must be retried
// at the next check, not after another whole idle period the user pays for.
struct RecordedState {
  const char* state;
  bool keeps_idle_since;
};

class AutoDownRecordedState : public ::testing::TestWithParam<RecordedState> {};

TEST_P(AutoDownRecordedState, KeepsOrRestartsTheIdleClockAsItsStateSays) {
  const RecordedState& c = GetParam();
  json state = {{"idle_since", at(kT0)}, {"idle_after", "7200"}, {"checked_at", at(kT0)}};
  if (*c.state) state["state"] = c.state;
  if (std::string(c.state) == "error") state["message"] = "deleting cluster kinetic: HTTP 503";

  // Not yet idle for the period: nobody deletes; the clock is kept or starts now.
  json early = decide(kT0 + kHour, idle_seen(), state, 2 * kHour);
  EXPECT_EQ(early[0]["state"], "idle");
  EXPECT_EQ(early[0]["idle_since"], c.keeps_idle_since ? at(kT0) : at(kT0 + kHour));
  EXPECT_FALSE(early[1]);

  // Idle for the period counted from the recorded idle_since: a kept clock deletes now.
  json due = decide(kT0 + 2 * kHour, idle_seen(), state, 2 * kHour);
  EXPECT_EQ(due[1], c.keeps_idle_since) << due.dump();
  EXPECT_EQ(due[0]["state"], c.keeps_idle_since ? "deleting" : "idle");
  EXPECT_EQ(due[0]["idle_since"], c.keeps_idle_since ? at(kT0) : at(kT0 + 2 * kHour));
}

INSTANTIATE_TEST_SUITE_P(EveryState, AutoDownRecordedState,
                         ::testing::Values(RecordedState{"", false}, RecordedState{"active", false},
                                           RecordedState{"idle", true},
                                           RecordedState{"deleting", true},
                                           RecordedState{"error", true}),
                         [](const auto& info) {
                           return *info.param.state ? std::string(info.param.state)
                                                    : std::string("none");
                         });

TEST(AutoDownRule, AfterAFailedDeleteTheNextCheckDeletesAgain) {
  // What main() leaves after the DELETE failed: decide()'s "deleting" record, then state
  // "error" and the message merged over it. The next check, five minutes later, deletes.
  json first = decide(kT0 + 2 * kHour, idle_seen(), {{"state", "idle"}, {"idle_since", at(kT0)}},
                      2 * kHour)[0];
  ASSERT_EQ(first["state"], "deleting");
  first["state"] = "error";
  first["message"] = "deleting cluster kinetic: HTTP 503: unavailable";
  json next = decide(kT0 + 2 * kHour + 300, idle_seen(), first, 2 * kHour);
  EXPECT_TRUE(next[1]) << "a failed delete waited for another idle period: " << next.dump();
  EXPECT_EQ(next[0]["state"], "deleting");
  EXPECT_EQ(next[0]["idle_since"], at(kT0));
}

TEST(AutoDownRule, AnEndInTheFutureIsNotBelieved) {
  // A node's clock ahead of ours must not push the deletion out indefinitely, nor date the
  // idle time after now.
  json seen = {{"active", json::array()}, {"last_end", kT0 + kHour}};
  json r = decide(kT0, seen, json::object(), 2 * kHour);
  EXPECT_EQ(r[0]["idle_since"], at(kT0));
}

// ---- activity(): what counts

const json kIgnored = {"kube-*",        "gke-*",        "gmp-*",
                       "jobset-system", "kueue-system", "kinetic-system"};

json job(const std::string& name, const std::string& condition, const std::string& end) {
  json j = {{"metadata", {{"name", name}}}, {"status", json::object()}};
  if (!condition.empty()) {
    j["status"]["conditions"] = {
        {{"type", condition}, {"status", "True"}, {"lastTransitionTime", end}}};
    if (condition == "Complete") j["status"]["completionTime"] = end;
  }
  return j;
}

TEST(AutoDownActivity, UnfinishedJobsJobSetsAndPodsAreActivityFinishedOnesGiveTheirEnd) {
  json jobs = {job("job-running", "", ""), job("job-done", "Complete", at(kT0 + 10)),
               job("job-failed", "Failed", at(kT0 + 20))};
  json jobsets = {
      {{"metadata", {{"name", "js-pending"}}}, {"status", json::object()}},
      {{"metadata", {{"name", "js-done"}}},
       {"status",
        {{"terminalState", "Completed"},
         {"conditions",
          {{{"type", "Completed"}, {"status", "True"}, {"lastTransitionTime", at(kT0 + 5)}}}}}}}};
  // A pod pending on a scale-up counts; one that ended does not.
  json pods = {{{"metadata", {{"name", "job-running-abcde"}}}, {"status", {{"phase", "Pending"}}}},
               {{"metadata", {{"name", "job-done-fghij"}}}, {"status", {{"phase", "Succeeded"}}}}};
  json seen = python("activity(args[0], args[1], args[2])", {jobs, jobsets, pods});
  EXPECT_EQ(seen["active"],
            json({"job/job-running", "jobset/js-pending", "pod/job-running-abcde"}));
  EXPECT_EQ(seen["last_end"], kT0 + 20);
}

TEST(AutoDownActivity, AJobCleanedUpSinceTheLastCheckStillCountsByItsEvents) {
  // Its Job and pods are gone (run's clean-up), its events are not; the check's own Job (in its
  // namespace), the system's pods and a Node's events (recorded in "default") do not count.
  auto event = [](const std::string& ns, const std::string& kind, const std::string& name,
                  double when) {
    return json{{"metadata", {{"namespace", ns}}},
                {"involvedObject", {{"kind", kind}, {"name", name}, {"namespace", ns}}},
                {"lastTimestamp", at(when)}};
  };
  json events = {event("default", "Job", "kinetic-job-1a2b3c4d", kT0 + 30),
                 event("default", "Pod", "kinetic-job-1a2b3c4d-x7k2p", kT0 + 40),
                 event("kinetic-system", "Job", "kinetic-auto-down-29926298", kT0 + 90),
                 event("kube-system", "Pod", "kube-dns-5d7c9", kT0 + 95),
                 event("default", "Node", "gke-kinetic-default-pool-1", kT0 + 99)};
  events[1]["lastTimestamp"] = nullptr;
  events[1]["eventTime"] = at(kT0 + 40);
  json seen = python("activity(args[0], args[1], args[2], args[3], args[4])",
                     {json::array(), json::array(), json::array(), events, kIgnored});
  EXPECT_TRUE(seen["active"].empty());
  EXPECT_EQ(seen["last_end"], kT0 + 40);
}

// Deleting the cluster deletes whatever runs in it: another context's jobs (another namespace),
// anything not kinetic's; only the system's namespaces and auto-down's own are left out.
TEST(AutoDownActivity, WhatRunsInAnyNamespaceButTheIgnoredOnesKeepsTheCluster) {
  auto pod = [](const std::string& ns, const std::string& name) {
    return json{{"metadata", {{"name", name}, {"namespace", ns}}},
                {"status", {{"phase", "Running"}}}};
  };
  json pods = {pod("team-b", "kinetic-job-9f8e7d6c-abcde"),
               pod("default", "web-0"),
               pod("kube-system", "kube-dns-5d7c9"),
               pod("gke-managed-system", "agent-1"),
               pod("gmp-system", "collector-x"),
               pod("jobset-system", "controller-0"),
               pod("kueue-system", "kueue-controller-manager-0"),
               pod("kinetic-system", "kinetic-auto-down-29926298-q")};
  json jobs = {
      {{"metadata", {{"name", "nightly"}, {"namespace", "etl"}}}, {"status", json::object()}}};
  json seen = python("activity(args[0], args[1], args[2], [], args[3])",
                     {jobs, json::array(), pods, kIgnored});
  EXPECT_EQ(seen["active"], json({"job/nightly", "pod/kinetic-job-9f8e7d6c-abcde", "pod/web-0"}));
  // As the CronJob passes them, its own namespace last (ignored_namespaces()).
  json env = {{"KINETIC_IGNORED_NAMESPACES", gke::kAutoDownIgnored},
              {"KINETIC_NAMESPACE", gke::kAutoDownNamespace}};
  EXPECT_EQ(python("ignored_namespaces(args)", env),
            json({"kube-*", "gke-*", "gmp-*", "jobset-system", "kueue-system", "kinetic-system",
                  "kinetic-system"}));
}

// A server stopped by --idle-stop (its bootstrap's termination message, on the container's
// last run or its current one) waits to be deleted: none of its pods is activity, and its
// Deployment is one to delete. A server still serving is activity, as any pod.
TEST(AutoDownActivity, AnIdleStoppedServersPodsAreNotActivity) {
  auto server_pod = [](const std::string& ns, const std::string& job, const std::string& phase,
                       const json& container) {
    return json{{"metadata",
                 {{"name", "kinetic-" + job + "-7c9d8-x2k4p"},
                  {"namespace", ns},
                  {"labels", {{"kinetic.dev/job", job}, {"kinetic.dev/serve", "8000"}}}}},
                {"status", {{"phase", phase}, {"containerStatuses", {container}}}}};
  };
  const json stopped = {{"terminated", {{"exitCode", 130}, {"message", "kinetic: idle-stop"}}}};
  json pods = {
      // restarted in place (Kubernetes): the last run's message, the container running again
      server_pod("default", "job-1a2b3c4d", "Running",
                 {{"state", {{"running", json::object()}}}, {"lastState", stopped}}),
      // replaced (the fake's kubelet): the old pod ended with it, the new one waits
      server_pod("team-b", "job-5e6f7a8b", "Failed", {{"state", stopped}}),
      server_pod("team-b", "job-5e6f7a8b", "Running", {{"state", {{"running", json::object()}}}}),
      // serving: activity
      server_pod("default", "job-9c0d1e2f", "Running", {{"state", {{"running", json::object()}}}}),
  };
  pods[2]["metadata"]["name"] = "kinetic-job-5e6f7a8b-7c9d8-q9z8y";
  json seen = python("activity([], [], args[0])", json::array({pods}));
  EXPECT_EQ(seen["active"], json({"pod/kinetic-job-9c0d1e2f-7c9d8-x2k4p"}));
  EXPECT_EQ(seen["idle_servers"], json::array({json::array({"default", "kinetic-job-1a2b3c4d"}),
                                               json::array({"team-b", "kinetic-job-5e6f7a8b"})}));
}

TEST(AutoDownActivity, NothingListedIsNoActivityAndNoEnd) {
  json seen =
      python("activity(args[0], args[1], args[2])", {json::array(), json::array(), json::array()});
  EXPECT_TRUE(seen["active"].empty());
  EXPECT_TRUE(seen["last_end"].is_null());
}

}  // namespace
}  // namespace kinetic
