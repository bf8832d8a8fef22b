// The run record on gke (issue #8, docs/run-record.md): every log line once whatever happens to
// the stream, every attempt streamed and recorded, preemption restarting from the checkpoint
// without counting as a failure.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "gke_fixture.h"
#include "pack/sha256.h"

namespace kinetic::test {
namespace {

using json = nlohmann::json;

// The lines "line 1".."line N", each once.
std::string numbered(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

class GkeRecord : public GkeFixture {
 protected:
  // Starts `kinetic ARGS` in the background and waits until its stdout shows LINE; returns its
  // pid and the job's one pod, or -1 (with a failure recorded) when it never got there.
  int spawn_until(const std::vector<std::string>& args, const std::string& line, std::string* pod,
                  const std::map<std::string, std::string>& extra = {}) {
    int pid = spawn_until_output(args, line, extra);
    if (pid < 0) return -1;
    auto pods = cloud_->kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic");
    if (pods.size() != 1) {
      ADD_FAILURE() << pods.size() << " pods";
      return -1;
    }
    *pod = pods.front();
    return pid;
  }
  // A Spot pool to land --spot jobs on.
  void add_spot_pool() {
    auto pool = kin({"pool", "add", "--accelerator", "v5litepod-1", "--spot"});
    ASSERT_EQ(pool.exit_code, 0) << pool.err;
  }
};

TEST_F(GkeRecord, ALogStreamEndedCleanlyAfterTheJobExitedLosesNoLine) {
  sb.write("proj/fifty.py", "for i in range(1, 51):\n    print('line', i)\n");
  // The server ends the follow stream cleanly after a few lines, once the container has exited:
  // log rotation or a proxy. The run must still show all 50 lines, once each.
  cloud_->kube().end_next_log_stream_after_exit(200);
  auto r = kin({"run", "fifty.py", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, numbered(50)) << r.err;
}

TEST_F(GkeRecord, TheBootstrapsEndOfLogEndsTheRunWithoutWaitingForTheKubelet) {
  // The kubelet is slow to notice the container's exit: the log stream stays open after the
  // last byte. The bootstrap's end lines say the log is complete (lib/backend/gke/log_end.h):
  // the run drops the stream and goes on, without reading the pod or the log again, and no end
  // line shows.
  sb.write("proj/both.sh", "echo out line\necho err line >&2\n");
  cloud_->kube().hold_next_log_stream_open();
  cloud_->kube().reset_counters();
  auto r = kin({"run", "both.sh", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "out line\nerr line\n") << r.err;
  EXPECT_EQ(r.err.find("end of the log"), std::string::npos) << r.err;
  EXPECT_EQ(cloud_->kube().held_log_streams_ended(), 0) << "the run waited for the stream's end";
  auto counts = cloud_->kube().request_counts();
  EXPECT_EQ(counts["GET /api/v1/namespaces/{ns}/pods/{name}/log"], 1);
  EXPECT_EQ(counts["GET /api/v1/namespaces/{ns}/pods/{name}"], 0);
}

TEST_F(GkeRecord, EveryAttemptIsStreamedAnnouncedAndRecorded) {
  // Fails once after saving a checkpoint; the retry resumes from it.
  sb.write("proj/flaky.py",
           "import os, sys\n"
           "mark = os.path.join(os.environ['KINETIC_CHECKPOINT_DIR'], 'step')\n"
           "if os.path.exists(mark):\n"
           "    print('resumed at step', open(mark).read())\n"
           "    sys.exit(0)\n"
           "open(mark, 'w').write('7')\n"
           "print('first attempt, failing')\n"
           "sys.exit(1)\n");
  auto r = kin({"run", "flaky.py", "--accelerator", "v5litepod-1", "--retries", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "first attempt, failing\nresumed at step 7\n") << r.err;
  EXPECT_NE(
      r.err.find("kinetic: attempt 2/3: previous attempt exited 1; resuming from the checkpoint\n"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("succeeded in"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("after 2 attempts"), std::string::npos) << r.err;
  const std::string id = job_id_in(r.err);
  auto st = json::parse(slurp(proj / "kinetic-out" / id / "status.json"));
  EXPECT_EQ(st["attempts"], 2) << st.dump();
  ASSERT_EQ(st["attempt_history"].size(), 2u) << st.dump();
  EXPECT_EQ(st["attempt_history"][0]["exit_code"], 1) << st.dump();
  EXPECT_EQ(st["attempt_history"][0]["preempted"], false) << st.dump();
  EXPECT_EQ(st["attempt_history"][1]["exit_code"], 0) << st.dump();
}

TEST_F(GkeRecord, ASpotPreemptionRestartsTheJobFromItsCheckpointWithoutCountingAsARetry) {
  add_spot_pool();
  sb.write("proj/spot.py",
           "import os, sys, time\n"
           "mark = os.path.join(os.environ['KINETIC_CHECKPOINT_DIR'], 'step')\n"
           "if os.path.exists(mark):\n"
           "    print('resumed at step', open(mark).read(), flush=True)\n"
           "    sys.exit(0)\n"
           "open(mark, 'w').write('5')\n"
           "print('checkpoint saved', flush=True)\n"
           "while True:\n"
           "    time.sleep(0.05)\n");
  // No --retries: a preemption is not a failure, so it needs none.
  std::string pod;
  int pid = spawn_until({"run", "spot.py", "--accelerator", "v5litepod-1", "--spot"},
                        "checkpoint saved\n", &pod);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(cloud_->kube().preempt_node_of("default", pod));
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  EXPECT_EQ(slurp(out), "checkpoint saved\nresumed at step 5\n") << slurp(err);
  EXPECT_NE(slurp(err).find("kinetic: preempted: node reclaimed; attempt 2 on a new node"),
            std::string::npos)
      << slurp(err);
  EXPECT_NE(slurp(err).find("(1 preempted)"), std::string::npos) << slurp(err);
  const std::string id = job_id_in(slurp(err));
  auto st = json::parse(slurp(proj / "kinetic-out" / id / "status.json"));
  EXPECT_EQ(st["state"], "succeeded") << st.dump();
  EXPECT_EQ(st["attempts"], 2) << st.dump();
  ASSERT_GE(st["attempt_history"].size(), 1u) << st.dump();
  EXPECT_EQ(st["attempt_history"][0]["preempted"], true) << st.dump();
}

// A context lives kStagingDays after its last use, not after its upload: every attempt moves its
// customTime on (the bootstrap), and a run reusing one the CLI finds a day old or unmarked does
// too. Job records have no lifecycle rule: a live job's spec and checkpoints never expire.
TEST_F(GkeRecord, AContextStaysAliveWhileRunsAndAttemptsUseIt) {
  auto bucket = cloud_->gcs().bucket_resource(kGkeBucket);
  ASSERT_TRUE(bucket);
  const json rules = (*bucket)["lifecycle"]["rule"];
  ASSERT_EQ(rules.size(), 3u) << bucket->dump();
  EXPECT_EQ(rules[0]["condition"]["daysSinceCustomTime"], 7);
  EXPECT_EQ(rules[0]["condition"]["matchesPrefix"], json::array({"contexts/"}));
  EXPECT_EQ(rules[1]["condition"]["age"], 7);
  EXPECT_EQ(rules[1]["condition"]["matchesPrefix"], json::array({"builds/"}));
  EXPECT_EQ(rules[2]["condition"]["age"], 1);
  EXPECT_EQ(rules[2]["condition"]["matchesPrefix"], json::array({"uploads/"}));

  sb.write("proj/ctx.py", "print('ctx')\n");
  auto custom_time = [&](const std::string& name) {
    auto o = cloud_->gcs().object_resource(kGkeBucket, name);
    return o ? o->value("customTime", std::string()) : std::string();
  };
  ASSERT_EQ(kin({"run", "ctx.py", "-a", "v5litepod-1"}).exit_code, 0);
  auto contexts = cloud_->gcs().object_names(kGkeBucket, "contexts/");
  ASSERT_FALSE(contexts.empty());
  std::string context;  // the newest: this project's
  for (const auto& c : contexts)
    if (context.empty() || custom_time(c) > custom_time(context)) context = c;
  const std::string first = custom_time(context);
  ASSERT_FALSE(first.empty());

  cloud_->gcs().reset_counters();
  ASSERT_EQ(kin({"run", "ctx.py", "-a", "v5litepod-1"}).exit_code, 0);
  EXPECT_GT(custom_time(context), first) << "the attempt marked it in use";
  EXPECT_EQ(cloud_->gcs().request_count("objects.patch"), 1) << "the CLI left a fresh mark alone";

  // As an older kinetic left it: no mark at all. The next run's CLI marks it too.
  cloud_->gcs().put_object(kGkeBucket, context, *cloud_->gcs().object_data(kGkeBucket, context),
                           "application/gzip");
  ASSERT_TRUE(custom_time(context).empty());
  cloud_->gcs().reset_counters();
  ASSERT_EQ(kin({"run", "ctx.py", "-a", "v5litepod-1"}).exit_code, 0);
  EXPECT_FALSE(custom_time(context).empty());
  EXPECT_EQ(cloud_->gcs().request_count("objects.patch"), 2);
}

// A context past the parallel-upload threshold goes up as parts on several connections, composed
// into the one object the pod reads; the parts are gone once it is.
TEST_F(GkeRecord, ALargeContextGoesUpInPartsAndThePodReadsItWhole) {
  std::string blob(3 << 20, '\0');  // incompressible: the archive stays above 1 MiB
  uint64_t x = 88172645463325252ull;
  for (auto& c : blob) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>(x);
  }
  sb.write("proj/blob.bin", blob);
  sb.write("proj/digest.py",
           "import hashlib\nprint(hashlib.sha256(open('blob.bin','rb').read()).hexdigest())\n");
  cloud_->gcs().reset_counters();
  auto r = kin({"run", "digest.py", "-a", "v5litepod-1"},
               {{"KINETIC_PARALLEL_UPLOAD_THRESHOLD_MIB", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(sha256_hex(blob)), std::string::npos) << r.out;
  EXPECT_EQ(cloud_->gcs().request_count("objects.compose"), 1);
  EXPECT_GE(cloud_->gcs().request_count("upload.resumable.start"), 4) << "a part each";
  EXPECT_TRUE(cloud_->gcs().object_names(kGkeBucket, "uploads/").empty());

  sb.write("proj/more.txt", "a new context\n");
  auto bad = kin({"run", "digest.py", "-a", "v5litepod-1"},
                 {{"KINETIC_PARALLEL_UPLOAD_THRESHOLD_MIB", "lots"}});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("KINETIC_PARALLEL_UPLOAD_THRESHOLD_MIB=lots is not a whole number"),
            std::string::npos)
      << bad.err;
}

TEST_F(GkeRecord, PastMaxPreemptionsTheRunGivesUpWith197) {
  add_spot_pool();
  sb.write("proj/doomed.py",
           "import time\n"
           "print('working', flush=True)\n"
           "while True:\n"
           "    time.sleep(0.05)\n");
  std::string pod;
  int pid =
      spawn_until({"run", "doomed.py", "-a", "v5litepod-1", "--spot", "--max-preemptions", "0"},
                  "working\n", &pod);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(cloud_->kube().preempt_node_of("default", pod));
  EXPECT_EQ(Sandbox::wait(pid), 197) << slurp(err);
  EXPECT_EQ(slurp(out), "working\n") << "the job ran once: " << slurp(err);
  EXPECT_NE(slurp(err).find("preempted 1 time (--max-preemptions 0)"), std::string::npos)
      << slurp(err);
  EXPECT_TRUE(cloud_->kube().wait_idle(30000));
}

TEST_F(GkeRecord, RunFlagsForTheRecordAreCheckedAndReachTheSpec) {
  auto bad = kin({"run", "x.py", "--max-preemptions", "-1"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--max-preemptions must be between 0 and 1000"), std::string::npos)
      << bad.err;
  auto zero = kin({"run", "x.py", "--checkpoint-interval", "0s"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_NE(zero.err.find("--checkpoint-interval must be at least 1s"), std::string::npos)
      << zero.err;
  sb.write("proj/quick.py", "print('ok')\n");
  auto r = kin({"run", "quick.py", "-a", "v5litepod-1", "--max-preemptions", "3",
                "--checkpoint-interval", "30s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = job_id_in(r.err);
  auto spec = json::parse(
      cloud_->gcs().object_data(kGkeBucket, "jobs/" + id + "/spec.json").value_or("{}"));
  EXPECT_EQ(spec["max_preemptions"], 3) << spec.dump();
  EXPECT_EQ(spec["checkpoint_sync_seconds"], 30.0) << spec.dump();
}

TEST_F(GkeRecord, AForegroundRunWhoseKineticIsKilledStopsByItselfAndCanBeCleanedUp) {
  sb.write("proj/long.py",
           "import time\n"
           "print('working', flush=True)\n"
           "while True:\n"
           "    time.sleep(0.05)\n");
  std::string pod;
  int pid = spawn_until({"run", "long.py", "-a", "v5litepod-1"}, "working\n", &pod,
                        {{"KINETIC_FOLLOWER_TIMEOUT_SECONDS", "1"}});
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGKILL);
  Sandbox::wait(pid);
  // Nobody follows the run any more: its pod stops the job, and Kubernetes starts no other.
  EXPECT_TRUE(cloud_->kube().wait_idle(60000));
  const std::string job = pod.substr(std::string("kinetic-").size(), 12);
  auto st = kin({"status", job, "-o", "json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  EXPECT_NE(st.out.find("abandoned"), std::string::npos) << st.out;
  EXPECT_EQ(cloud_->kube().pod_names("default", "app.kubernetes.io/managed-by=kinetic").size(), 1u);
  // A new process cleans up what the killed one left.
  auto clean = kin({"cleanup", "--older-than", "0s"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_FALSE(exists("/apis/batch/v1/namespaces/default/jobs/kinetic-" + job));
  auto dry = kin({"cleanup", "--older-than", "0s", "--dry-run"});
  EXPECT_EQ(dry.out.find(job), std::string::npos) << dry.out;
}

TEST_F(GkeRecord, AFinishedJobOutlivesItsPodsUntilCleanup) {
  sb.write("proj/done.py", "print('all done')\nraise SystemExit(4)\n");
  auto r = kin({"run", "done.py", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 4) << r.err;
  const std::string id = job_id_in(r.err);
  // The run cleaned up its Job; the record is in the bucket.
  ASSERT_FALSE(
      cloud_->kube().object("/apis/batch/v1/namespaces/default/jobs/kinetic-" + id).has_value());

  auto one = kin({"status", id, "-o", "json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto doc = json::parse(one.out);
  const json job = doc.contains("jobs") ? doc["jobs"][0] : doc;
  EXPECT_EQ(job["state"], "failed") << one.out;
  EXPECT_EQ(job["exit_code"], 4) << one.out;

  auto all = kin({"status", "-o", "json"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  bool listed = false;
  const json listing = json::parse(all.out);
  for (const auto& j : listing["jobs"])
    listed = listed || (j["id"] == id && j["state"] == "failed");
  EXPECT_TRUE(listed) << all.out;

  // Until cleanup removes it.
  auto clean = kin({"cleanup", "--older-than", "0s"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  auto gone = kin({"status", id});
  EXPECT_NE(gone.exit_code, 0) << gone.out;
}

// The record keeps stdout and stderr apart (the parts' sidecars): `logs` of a finished job
// writes each to its own stream, as the live stream did.
TEST_F(GkeRecord, AFinishedJobsLogKeepsStderrOnStderr) {
  sb.write("proj/both.py",
           "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\nprint('out again')\n");
  auto r = kin({"run", "both.py", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto logs = kin({"logs", job_id_in(r.err)});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "to out\nout again\n");
  EXPECT_NE(logs.err.find("to err\n"), std::string::npos) << logs.err;
}

// A long job's record (docs/run-record.md "Log parts"): log/composed holding parts 1-31 and the
// parts after it print as one log through the CLI, the bytes a sidecar marks on stderr; --tail
// reads its end, with -f too (the job has ended: nothing follows).
TEST_F(GkeRecord, AComposedLogPrintsWholeAndItsTailReadsTheEnd) {
  sb.write("proj/short.py", "print('replaced below')\n");
  auto r = kin({"run", "short.py", "--accelerator", "v5litepod-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = job_id_in(r.err);
  const std::string bucket = "acme-ml-kinetic-kinetic";
  const std::string log = "jobs/" + id + "/results/attempts/1/log/";
  auto& gcs = cloud_->gcs();
  ASSERT_FALSE(gcs.object_names(bucket, log).empty());
  for (const auto& n : gcs.object_names(bucket, log)) gcs.delete_object(bucket, n);
  std::vector<std::string> composed;
  for (int p = 1; p <= 34; ++p) {
    char leaf[8];
    std::snprintf(leaf, sizeof leaf, "%06d", p);
    gcs.put_object(bucket, log + leaf, "line " + std::to_string(p) + "\n", "text/plain");
    if (p <= 31) composed.push_back(log + leaf);
  }
  gcs.compose_objects(bucket, log + "composed", composed,
                      {{"contentType", "text/plain"}, {"metadata", {{"parts", "31"}}}});
  for (const auto& n : composed) gcs.delete_object(bucket, n);
  // Line 33 went to stderr: its part's sidecar says so (offset 247, 8 bytes, big-endian).
  std::string span(16, '\0');
  span[7] = static_cast<char>(247);
  span[15] = 8;
  gcs.put_object(bucket, log + "000033.err", span);

  auto whole = kin({"logs", id});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  std::string out = numbered(34);
  out.erase(out.find("line 33\n"), 8);
  EXPECT_EQ(whole.out, out);
  EXPECT_NE(whole.err.find("line 33\n"), std::string::npos) << whole.err;
  auto tail = kin({"logs", id, "--tail", "2"});
  ASSERT_EQ(tail.exit_code, 0) << tail.err;
  EXPECT_EQ(tail.out, "line 34\n");
  EXPECT_EQ(tail.err, "line 33\n");
  auto follow = kin({"logs", "-f", id, "--tail", "3"});
  ASSERT_EQ(follow.exit_code, 0) << follow.err;
  EXPECT_EQ(follow.out, "line 32\nline 34\n");
  // --since by the objects' upload times (these were written a moment ago, without marks).
  auto since = kin({"logs", id, "--since", "1h"});
  ASSERT_EQ(since.exit_code, 0) << since.err;
  EXPECT_EQ(since.out, out);
  EXPECT_EQ(kin({"logs", id, "--since", "2099-01-01T00:00:00Z"}).out, "");
}

}  // namespace
}  // namespace kinetic::test
