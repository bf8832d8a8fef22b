// The fault matrix (issue #8): each fault a real cloud throws (503/429 storms, dropped uploads,
// corrupted downloads, cut or cleanly ended log streams, lost create responses, an expired
// token, an expired watch (410), a Spot preemption) at each step of `kinetic run` (image, stage,
// submit, watch, stream, collect, clean). Every case must end as a clean run does: every output
// line exactly once and in order, exit 0, the outputs delivered, the fault really triggered, and
// nothing left behind.
//
// The job prints ten lines, saves a checkpoint and waits for a file the test creates: faults for
// the later steps are set up at that point, when the job's id is known and the requests that
// follow are the CLI's own. A preempted job resumes after its checkpoint, so it too prints each
// line once.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

using json = nlohmann::json;

// Context for setting up a fault: the fake cloud, and (mid-run) the job and its pod.
struct FaultSite {
  fakes::FakeCloud& cloud;
  std::string job;  // "job-1a2b3c4d"; empty before the run
  std::string pod;
  // "GET /storage/v1/b/BUCKET/o/jobs%2FJOB%2F..." as the fake GCS matches requests.
  std::string object_route(const std::string& method, const std::string& rest) const {
    return method + " /storage/v1/b/" + kGkeBucket + "/o/jobs%2F" + job + "%2F" + rest;
  }
};

struct FaultCase {
  std::string name;  // gtest-safe
  std::string step;
  std::vector<std::string> extra_args;
  std::function<void(FaultSite&)> before;  // before the run
  std::function<void(FaultSite&)> mid;     // once the job has printed its first ten lines
};

void PrintTo(const FaultCase& c, std::ostream* os) {
  *os << c.step << "/" << c.name;
}

const std::string kJobsRoute = "POST /apis/batch/v1/namespaces/default/jobs";

std::vector<FaultCase> fault_cases() {
  return {
      {"ImageRegistry503",
       "image",
       {},
       [](FaultSite& s) { s.cloud.gcp().fail_next("artifactregistry", 2, 503); },
       nullptr},
      {"ContextUpload503Storm",
       "stage",
       {},
       [](FaultSite& s) { s.cloud.gcs().fail_next(3, 503, -1, "POST /upload"); },
       nullptr},
      {"ContextUpload429RetryAfter",
       "stage",
       {},
       [](FaultSite& s) { s.cloud.gcs().fail_next(2, 429, 0, "POST /upload"); },
       nullptr},
      {"ContextUploadDropped",
       "stage",
       {},
       [](FaultSite& s) { s.cloud.gcs().drop_connection_after(64); },
       nullptr},
      {"JobCreate503",
       "submit",
       {},
       [](FaultSite& s) { s.cloud.kube().fail_next(2, 503, kJobsRoute); },
       nullptr},
      {"JobCreateResponseLost",
       "submit",
       {},
       [](FaultSite& s) { s.cloud.kube().lose_next_response(kJobsRoute); },
       nullptr},
      {"SecretCreate429",
       "submit",
       {"--env", "API_TOKEN=t0k3n"},
       [](FaultSite& s) {
         s.cloud.kube().fail_next(1, 429, "POST /api/v1/namespaces/default/secrets");
       },
       nullptr},
      {"PodList503",
       "watch",
       {},
       [](FaultSite& s) {
         s.cloud.kube().fail_next(2, 503, "GET /api/v1/namespaces/default/pods");
       },
       nullptr},
      // The pod watch's resourceVersion expires (410) while the pod is pending: the CLI lists
      // afresh and goes on (the fake holds the pod back until the 410 has been served).
      {"PodWatchExpired410",
       "watch",
       {},
       [](FaultSite& s) { s.cloud.kube().expire_next_watch(); },
       nullptr},
      {"TokenExpired401",
       "watch",
       {},
       [](FaultSite& s) {
         s.cloud.kube().fail_next(1, 401, "GET /api/v1/namespaces/default/pods");
       },
       nullptr},
      {"LogStreamCut",
       "stream",
       {},
       [](FaultSite& s) { s.cloud.kube().cut_next_log_stream_after(120); },
       nullptr},
      {"LogStreamEndedCleanlyAfterExit",
       "stream",
       {},
       // Past the first ten lines, which the job prints before it waits for the test.
       [](FaultSite& s) { s.cloud.kube().end_next_log_stream_after_exit(600); },
       nullptr},
      {"LogStreamHeldOpenAfterExit",
       "stream",
       {},
       // A kubelet slow to notice the exit: the bootstrap's end-of-log lines end the follow.
       [](FaultSite& s) { s.cloud.kube().hold_next_log_stream_open(); },
       nullptr},
      {"LogRequest503",
       "stream",
       {},
       [](FaultSite& s) {
         s.cloud.kube().fail_next(2, 503, "GET /api/v1/namespaces/default/pods/");
       },
       nullptr},
      {"Preempted",
       "stream",
       {"--spot"},
       nullptr,
       [](FaultSite& s) {
         ASSERT_TRUE(s.cloud.kube().preempt_node_of("default", s.pod));
         // The node is gone before the job could go on: what it does next is attempt 2's.
         ASSERT_TRUE(s.cloud.kube().wait_for_object(
             "/api/v1/namespaces/default/pods/" + s.pod,
             [](const json& p) {
               return p.is_null() || p["status"].value("phase", "") == "Failed";
             },
             30000));
       }},
      {"ResultsDownload503Storm",
       "collect",
       {},
       nullptr,
       [](FaultSite& s) {
         s.cloud.gcs().fail_next(3, 503, -1, s.object_route("GET", "results%2F"));
       }},
      {"ResultsDownloadCorrupted",
       "collect",
       {},
       nullptr,
       [](FaultSite& s) { s.cloud.gcs().corrupt_next_download(); }},
      {"JobDelete503",
       "clean",
       {},
       nullptr,
       [](FaultSite& s) {
         s.cloud.kube().fail_next(2, 503, "DELETE /apis/batch/v1/namespaces/default/jobs");
       }},
      {"CheckpointDelete503",
       "clean",
       {},
       nullptr,
       [](FaultSite& s) {
         s.cloud.gcs().fail_next(2, 503, -1, s.object_route("DELETE", "results%2Fcheckpoints"));
       }},
  };
}

class GkeFaultMatrix : public GkeFixture, public ::testing::WithParamInterface<FaultCase> {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    if (HasFatalFailure()) return;
    auto pool = kin({"pool", "add", "--accelerator", "v5litepod-1", "--spot"});
    ASSERT_EQ(pool.exit_code, 0) << pool.err;
  }
  void TearDown() override {
    // A case that failed must not leave its job waiting (and holding the node) for the next.
    std::ofstream(go).put('\n');
    cloud_->kube().wait_idle(30000);
    cloud_->gcs().clear_faults();
    cloud_->kube().clear_faults();
  }
  fs::path go = sb.root() / "go";
};

std::string lines(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

TEST_P(GkeFaultMatrix, TheRunEndsAsACleanRunDoes) {
  const FaultCase& c = GetParam();
  // A new context per case (so the stage step uploads), and a job that waits for GO.
  sb.write("proj/case.txt", c.name + "\n");
  sb.write(
      "proj/job.py",
      "import os, time\n"
      "ck = os.path.join(os.environ['KINETIC_CHECKPOINT_DIR'], 'step')\n"
      "start = int(open(ck).read()) + 1 if os.path.exists(ck) else 1\n"
      "for i in range(start, 11):\n"
      "    if i == 10:  # saved before the line the test waits for: a preemption never tears it\n"
      "        open(ck, 'w').write('10')\n"
      "    print('line', i, flush=True)\n"
      "while not os.path.exists(" +
          json(go.string()).dump() +
          "):\n"
          "    time.sleep(0.01)\n"
          "for i in range(max(start, 11), 31):\n"
          "    print('line', i, flush=True)\n"
          "open(os.path.join(os.environ['KINETIC_OUTPUT_DIR'], 'result.txt'), 'w')"
          ".write('done\\n')\n");
  FaultSite site{*cloud_, "", ""};
  if (c.before) c.before(site);

  std::vector<std::string> args = {"run", "job.py", "-a", "v5litepod-1"};
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  const fs::path out = sb.root() / "run.out", err = sb.root() / "run.err";
  const auto earlier = cloud_->kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic");
  int pid = spawn(args, out, err);
  ASSERT_TRUE(eventually([&] { return slurp(out).find("line 10\n") != std::string::npos; }))
      << c.step << ": " << slurp(err);
  std::vector<std::string> pods;
  for (const auto& p : cloud_->kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic"))
    if (std::find(earlier.begin(), earlier.end(), p) == earlier.end()) pods.push_back(p);
  ASSERT_EQ(pods.size(), 1u);
  site.pod = pods.front();
  site.job = site.pod.substr(std::string("kinetic-").size(), 12);
  if (c.mid) c.mid(site);
  std::ofstream(go).put('\n');
  const int code = Sandbox::wait(pid);

  EXPECT_EQ(code, 0) << c.step << ": " << slurp(err);
  EXPECT_EQ(slurp(out), lines(1, 30)) << c.step << ": every line once, in order\n" << slurp(err);
  EXPECT_EQ(slurp(proj / "kinetic-out" / site.job / "result.txt"), "done\n") << slurp(err);
  auto st = json::parse(slurp(proj / "kinetic-out" / site.job / "status.json"));
  EXPECT_EQ(st["state"], "succeeded") << st.dump();
  // The fault really happened.
  EXPECT_EQ(cloud_->gcs().pending_faults() + cloud_->kube().pending_faults() +
                cloud_->gcp().pending_faults(),
            0)
      << "the fault was never triggered";
  // Nothing left behind: no Job, no Secret, nothing `cleanup` would remove today.
  EXPECT_FALSE(exists("/apis/batch/v1/namespaces/default/jobs/kinetic-" + site.job));
  EXPECT_FALSE(exists("/api/v1/namespaces/default/secrets/kinetic-" + site.job));
  // What cleanup would remove of everything finished: the job's record in the bucket (kept on
  // purpose), never a Job or a Secret left running or orphaned.
  auto dry = kin({"cleanup", "--older-than", "0s", "--dry-run", "-o", "json"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  const json listing = json::parse(dry.out);  // kept alive: the loop reads into it
  for (const auto& item : listing["items"])
    EXPECT_TRUE(item["kind"] != "job" && item["kind"] != "secret") << dry.out;
  EXPECT_TRUE(cloud_->kube().wait_idle(30000));
}

INSTANTIATE_TEST_SUITE_P(EachFaultAtEachStep, GkeFaultMatrix, ::testing::ValuesIn(fault_cases()),
                         [](const ::testing::TestParamInfo<FaultCase>& info) {
                           return info.param.step + "_" + info.param.name;
                         });

}  // namespace
}  // namespace kinetic::test
