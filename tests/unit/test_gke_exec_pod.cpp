// Which pod `kinetic exec` enters (backend/gke/exec_pod.h): host N's pod of the latest attempt,
// and the one-line refusals (host out of range, pending, ended).
#include <gtest/gtest.h>

#include "backend/gke/exec_pod.h"
#include "core/error.h"

namespace kinetic::gke {
namespace {

using nlohmann::json;

json pod(const std::string& name, int host, const std::string& created, const std::string& phase,
         const std::string& container_state = "running") {
  json state = json::object();
  if (container_state == "running")
    state["running"] = json::object();
  else if (!container_state.empty())
    state["waiting"] = {{"reason", container_state}};
  return {{"metadata",
           {{"name", name},
            {"creationTimestamp", created},
            {"labels", {{"batch.kubernetes.io/job-completion-index", std::to_string(host)}}}}},
          {"status",
           {{"phase", phase}, {"containerStatuses", {{{"name", "main"}, {"state", state}}}}}}};
}

std::string refusal(const std::vector<json>& pods, int host, int hosts, Errc* code = nullptr) {
  try {
    choose_exec_pod(pods, "job-1", host, hosts);
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "(no error)";
}

TEST(GkeExecPod, LatestAttemptOfTheHost) {
  std::vector<json> pods = {pod("a-0-old", 0, "2026-01-01T00:00:00Z", "Failed", ""),
                            pod("a-0-new", 0, "2026-01-01T00:01:00Z", "Running"),
                            pod("a-1", 1, "2026-01-01T00:01:00Z", "Running")};
  EXPECT_EQ(choose_exec_pod(pods, "job-1", 0, 2), "a-0-new");
  EXPECT_EQ(choose_exec_pod(pods, "job-1", 1, 2), "a-1");
}

// A multislice run numbers its hosts across slices: host 5 of two 4-host slices is slice 1's
// host 1 (jobset.sigs.k8s.io/job-index 1, completion index 1), not slice 0's.
TEST(GkeExecPod, HostsAreNumberedAcrossSlices) {
  json slice0 = pod("js-slice-0-1", 1, "2026-01-01T00:00:00Z", "Running");
  json slice1 = pod("js-slice-1-1", 1, "2026-01-01T00:00:00Z", "Running");
  slice0["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] = "0";
  slice1["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] = "1";
  EXPECT_EQ(choose_exec_pod({slice0, slice1}, "job-1", 5, 8, 4), "js-slice-1-1");
  EXPECT_EQ(choose_exec_pod({slice0, slice1}, "job-1", 1, 8, 4), "js-slice-0-1");
}

TEST(GkeExecPod, HostOutOfRangeNamesTheHostCount) {
  Errc code{};
  EXPECT_EQ(refusal({}, 4, 4, &code), "--host 4: job-1 runs on 4 hosts, 0 to 3");
  EXPECT_EQ(code, Errc::usage);
  EXPECT_EQ(refusal({}, 1, 1), "--host 1: job-1 runs on 1 host, host 0");
}

TEST(GkeExecPod, PendingSaysWhyAndWhatToDo) {
  Errc code{};
  EXPECT_EQ(refusal({pod("p", 0, "t", "Pending", "ContainerCreating")}, 0, 1, &code),
            "job-1 is pending (its pod p: ContainerCreating); try again once `kinetic status "
            "job-1` says running");
  EXPECT_EQ(code, Errc::not_found);
  EXPECT_EQ(refusal({}, 0, 1),
            "job-1 has no pod for host 0 yet; try again once `kinetic status job-1` says running");
}

TEST(GkeExecPod, EndedNamesKineticLogs) {
  EXPECT_EQ(refusal({pod("p", 0, "t", "Succeeded", "")}, 0, 1),
            "job-1 has ended (its pod p succeeded): there is nothing to exec into; see `kinetic "
            "logs job-1`");
}

}  // namespace
}  // namespace kinetic::gke
