// `kinetic pipeline run` on GKE against the fake cloud (docs/pipelines.md "On GKE"): each step a
// Job of its own, a step's outputs reaching the steps that need it through the bucket (the pod
// downloads them; nothing passes through the laptop), the cache kept in the bucket, a second run
// reusing every step, a change rerunning one step and its dependents, and a failure stopping its
// dependents, then a resume.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gke_fixture.h"
#include "http/transport.h"
#include "pack/sha256.h"
#include "pipeline_doc.h"
#include "schema_check.h"

namespace kinetic::test {
namespace {

// A fan-out (left and right each need prep) joined again by merge.
const char* kPipeline =
    "steps:\n"
    "  prep: {file: prep.py}\n"
    "  left: {file: side.py, args: [left], needs: [prep]}\n"
    "  right: {file: side.py, args: [right], env: [BREAK], needs: [prep]}\n"
    "  merge: {file: merge.py, env: [BREAK], needs: [left, right]}\n";

class GkePipeline : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    sb.write("proj/prep.py",
             "import os\n"
             "open(os.path.join(os.environ['KINETIC_OUTPUT_DIR'], 'data.txt'), 'w')"
             ".write('seed 42\\n')\n"
             "print('prep done')\n");
    // What a step finds of what it needs, and a copy of it in its own outputs; right fails
    // when BREAK (a secret: its value is not in the step's key) says so.
    sb.write("proj/side.py",
             "import os, sys\n"
             "side = sys.argv[1]\n"
             "if os.environ.get('BREAK', '0') == '1' and side == 'right':\n"
             "    sys.exit('right broke')\n"
             "inputs = os.path.join(os.environ['KINETIC_INPUT_DIR'], 'prep')\n"
             "data = open(os.path.join(inputs, 'data.txt')).read().strip()\n"
             "print(side, 'saw', data, 'in', ' '.join(sorted(os.listdir(inputs))))\n"
             "open(os.path.join(os.environ['KINETIC_OUTPUT_DIR'], side + '.txt'), 'w')"
             ".write(data + ' ' + ' '.join(sys.argv[1:]) + '\\n')\n");
    sb.write("proj/merge.py",
             "import os\n"
             "d = os.environ['KINETIC_INPUT_DIR']\n"
             "text = ''.join(open(os.path.join(d, s, s + '.txt')).read() for s in ('left', "
             "'right'))\n"
             "open(os.path.join(os.environ['KINETIC_OUTPUT_DIR'], 'merged.txt'), 'w').write(text)\n"
             "print('merged', text.replace('\\n', ';'))\n");
    sb.write("proj/kinetic.yaml", kPipeline);
    // The bucket (and so the cache) is the suite's: each test's project hashes apart.
    sb.write("proj/test.txt", ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  // `pipeline run -o json` in the project: the result and its PipelineRun document.
  std::pair<CliResult, nlohmann::json> run(const std::string& broken = "0") {
    CliResult r = kin({"pipeline", "run", "-o", "json"}, {{"BREAK", broken}});
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
    return {r, doc};
  }
  static std::string job_of(const nlohmann::json& doc, const std::string& name) {
    return step_of(doc, name).value("job", "");
  }
  nlohmann::json spec_of(const std::string& job) const {
    return nlohmann::json::parse(
        cloud_->gcs().object_data(kGkeBucket, "jobs/" + job + "/spec.json").value_or("{}"));
  }
  // A pipeline's record (or plan) in the bucket, as its runner left it.
  std::string record_of(const std::string& id, const std::string& name = "pipeline.json") const {
    return cloud_->gcs().object_data(kGkeBucket, "pipelines/" + id + "/" + name).value_or("");
  }
  // A detached run of FILE whose runner's pod is held until the test calls
  // fail_pod_creates("") (its Job exists, its pod is not created yet): what the test does in
  // between comes before the runner's first read. Its id; the command's result in RESULT.
  std::string detached_and_held(CliResult* result, const std::string& file,
                                const std::map<std::string, std::string>& env = {}) {
    cloud_->kube().fail_pod_creates("held by the test");
    std::map<std::string, std::string> all = {{"BREAK", "0"},
                                              {"KINETIC_PIPELINE_POLL_SECONDS", "0.1"}};
    all.insert(env.begin(), env.end());
    *result = kin({"pipeline", "run", "-f", file, "--detach"}, all);
    std::string id = result->out;
    while (!id.empty() && id.back() == '\n') id.pop_back();
    return id;
  }
  static std::string outputs_uri(const std::string& job) {
    return std::string("gs://") + kGkeBucket + "/jobs/" + job + "/results/outputs.tar.gz";
  }
};

TEST_F(GkePipeline, OutputsReachTheStepsThatNeedThemThroughTheBucket) {
  auto [r, doc] = run();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_schema("PipelineRun", doc);
  EXPECT_EQ(step_states(doc), (std::map<std::string, std::string>{{"prep", "succeeded"},
                                                                  {"left", "succeeded"},
                                                                  {"right", "succeeded"},
                                                                  {"merge", "succeeded"}}));
  // Each dependent's spec names its needs' outputs objects, which its pod downloaded.
  const nlohmann::json left = spec_of(job_of(doc, "left"));
  ASSERT_EQ(left["inputs"].size(), 1u) << left.dump();
  EXPECT_EQ(left["inputs"][0]["name"], "prep");
  EXPECT_EQ(left["inputs"][0]["location"], outputs_uri(job_of(doc, "prep")));
  const nlohmann::json merge = spec_of(job_of(doc, "merge"));
  ASSERT_EQ(merge["inputs"].size(), 2u) << merge.dump();
  EXPECT_EQ(merge["inputs"][1]["location"], outputs_uri(job_of(doc, "right")));
  EXPECT_NE(r.err.find("left saw seed 42 in data.txt"), std::string::npos) << r.err;

  // Every step's outputs land on the laptop too, with their status.
  const fs::path out = proj / "kinetic-out" / doc["id"].get<std::string>();
  EXPECT_EQ(slurp(out / "prep" / "data.txt"), "seed 42\n");
  EXPECT_EQ(slurp(out / "merge" / "merged.txt"), "seed 42 left\nseed 42 right\n");
  EXPECT_TRUE(fs::exists(out / "right" / "status.json"));
  // The cache is in the bucket: an entry per key, naming the outputs object.
  for (const char* name : {"prep", "left", "right", "merge"}) {
    const auto entry = cloud_->gcs().object_data(
        kGkeBucket, "pipelines/cache/" + step_of(doc, name)["key"].get<std::string>() + ".json");
    ASSERT_TRUE(entry) << name;
    EXPECT_EQ(nlohmann::json::parse(*entry)["outputs"], outputs_uri(job_of(doc, name))) << name;
  }

  // cleanup prunes the finished run's record (everything under pipelines/ID/) by the jobs' rule,
  // and leaves the step cache.
  const std::string id = doc["id"];
  ASSERT_FALSE(cloud_->gcs().object_names(kGkeBucket, "pipelines/" + id + "/").empty());
  auto c = kin({"cleanup", "--keep-last", "0", "-o", "json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("\"kind\": \"pipeline\",\n      \"name\": \"" + id + "\""),
            std::string::npos)
      << c.out;
  EXPECT_TRUE(cloud_->gcs().object_names(kGkeBucket, "pipelines/" + id + "/").empty());
  EXPECT_EQ(cloud_->gcs().object_names(kGkeBucket, "pipelines/cache/").size(), 4u);
  EXPECT_NE(kin({"status", id}).exit_code, 0);
}

TEST_F(GkePipeline, ASecondRunReusesEveryStepAndAChangeRerunsItsDependentsOnly) {
  auto [first, doc1] = run();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto [second, doc2] = run();
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(step_states(doc2),
            (std::map<std::string, std::string>{
                {"prep", "reused"}, {"left", "reused"}, {"right", "reused"}, {"merge", "reused"}}));
  EXPECT_EQ(second.err.find(") started"), std::string::npos) << "a step ran again:\n" << second.err;
  EXPECT_EQ(job_of(doc2, "merge"), job_of(doc1, "merge"));
  // The reused outputs came down from the bucket into the new run's folder.
  EXPECT_EQ(slurp(proj / "kinetic-out" / doc2["id"].get<std::string>() / "merge" / "merged.txt"),
            "seed 42 left\nseed 42 right\n");

  // left's args change: left and merge run again, prep and right are reused.
  std::string text = kPipeline;
  text.replace(text.find("args: [left]"), 12, "args: [left, wide]");
  sb.write("proj/kinetic.yaml", text);
  auto [third, doc3] = run();
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(
      step_states(doc3),
      (std::map<std::string, std::string>{
          {"prep", "reused"}, {"left", "succeeded"}, {"right", "reused"}, {"merge", "succeeded"}}));
  // The rerun step read the reused step's outputs from the job that made them.
  EXPECT_EQ(spec_of(job_of(doc3, "left"))["inputs"][0]["location"],
            outputs_uri(job_of(doc1, "prep")));
  EXPECT_EQ(slurp(proj / "kinetic-out" / doc3["id"].get<std::string>() / "merge" / "merged.txt"),
            "seed 42 left wide\nseed 42 right\n");
}

TEST_F(GkePipeline, AFailureStopsItsDependentsAndASecondRunResumesFromIt) {
  auto [first, doc1] = run("1");
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_EQ(doc1["state"], "failed");
  EXPECT_EQ(step_states(doc1), (std::map<std::string, std::string>{{"prep", "succeeded"},
                                                                   {"left", "succeeded"},
                                                                   {"right", "failed"},
                                                                   {"merge", "skipped"}}));
  EXPECT_EQ(step_of(doc1, "right")["error"], "right broke");
  EXPECT_NE(first.err.find("kinetic: step merge skipped: needs right, which failed"),
            std::string::npos)
      << first.err;
  // BREAK is a secret: its value is in neither the spec nor the key.
  EXPECT_EQ(spec_of(job_of(doc1, "right")).dump().find("\"1\""), std::string::npos);

  auto [second, doc2] = run("0");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(
      step_states(doc2),
      (std::map<std::string, std::string>{
          {"prep", "reused"}, {"left", "reused"}, {"right", "succeeded"}, {"merge", "succeeded"}}));
  EXPECT_EQ(step_of(doc2, "right")["key"], step_of(doc1, "right")["key"]);
  // No Job or Secret of any step is left in the cluster.
  for (const auto& doc : {doc1, doc2})
    for (const auto& s : doc["steps"]) {
      const std::string name = s["job"];
      EXPECT_FALSE(exists("/apis/batch/v1/namespaces/default/jobs/kinetic-" + name)) << name;
      EXPECT_FALSE(exists("/api/v1/namespaces/default/secrets/kinetic-" + name)) << name;
    }
}

// The runner Job of a detached run, until it ends: whether it succeeded.
bool runner_succeeded(fakes::FakeCloud& cloud, const std::string& id) {
  const std::string path = "/apis/batch/v1/namespaces/default/jobs/kinetic-" + id;
  const bool ended = cloud.kube().wait_for_object(
      path,
      [](const nlohmann::json& j) {
        return j.is_object() &&
               (j["status"].value("succeeded", 0) > 0 || j["status"].value("failed", 0) > 3);
      },
      120000);
  auto j = cloud.kube().object(path);
  return ended && j && (*j)["status"].value("succeeded", 0) > 0;
}

TEST_F(GkePipeline, DetachedRunsInTheClusterWithNoCliThenStatusAndLogsFollowIt) {
  const std::map<std::string, std::string> fast = {{"BREAK", "0"},
                                                   {"KINETIC_PIPELINE_POLL_SECONDS", "0.1"}};
  CliResult r = kin({"pipeline", "run", "--detach", "-o", "json"}, fast);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json started = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(started.is_discarded()) << r.out;
  EXPECT_EQ(started["state"], "running");
  const std::string id = started["id"];
  EXPECT_EQ(started["runner"]["job"], "kinetic-" + id);
  // The CLI has exited; nothing of the run is on this machine.
  EXPECT_FALSE(fs::exists(proj / "kinetic-out"));

  // The runner's Roles: creating this namespace's Jobs and JobSets; reading and deleting its own
  // steps' ones and deleting their Secrets, by name; nothing else.
  auto role = cloud_->kube().object(
      "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/kinetic-pipeline-runner");
  ASSERT_TRUE(role);
  for (const auto& rule : (*role)["rules"])
    EXPECT_EQ(rule["verbs"], nlohmann::json({"create"})) << rule.dump();
  auto own = cloud_->kube().object(
      "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/kinetic-" + id);
  ASSERT_TRUE(own);
  for (const auto& rule : (*own)["rules"]) {
    EXPECT_FALSE(rule["resourceNames"].empty()) << rule.dump();
    EXPECT_TRUE(rule["resources"] == nlohmann::json({"jobs"}) ||
                (rule["resources"] == nlohmann::json({"secrets"}) &&
                 rule["verbs"] == nlohmann::json({"delete"})))
        << rule.dump();
  }
  EXPECT_EQ((*own)["metadata"]["ownerReferences"][0]["name"], "kinetic-" + id);
  // Its principal may use the bucket's objects, as the job pods' may.
  EXPECT_NE(cloud_->gcs().bucket_iam_policy(kGkeBucket)->dump().find("sa/kinetic-pipeline-runner"),
            std::string::npos);

  ASSERT_TRUE(runner_succeeded(*cloud_, id)) << record_of(id);
  CliResult st = kin({"status", id, "-o", "json"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  const nlohmann::json doc = nlohmann::json::parse(st.out);
  // A PipelineRun whose runner is a Job of the cluster (docs/schemas.md).
  expect_schema("PipelineRunInCluster", doc);
  EXPECT_EQ(doc["state"], "succeeded");
  EXPECT_EQ(doc["exit_code"], 0);
  EXPECT_EQ(step_states(doc), (std::map<std::string, std::string>{{"prep", "succeeded"},
                                                                  {"left", "succeeded"},
                                                                  {"right", "succeeded"},
                                                                  {"merge", "succeeded"}}));
  // Each step's outputs stay in the bucket; the dependents read them there.
  EXPECT_EQ(step_of(doc, "merge")["output_dir"], outputs_uri(job_of(doc, "merge")));
  EXPECT_EQ(spec_of(job_of(doc, "merge"))["inputs"][1]["location"],
            outputs_uri(job_of(doc, "right")));
  EXPECT_FALSE(spec_of(job_of(doc, "left")).value("follower_timeout_seconds", 0.0) > 0);

  CliResult logs = kin({"logs", id, "--step", "left"});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("left saw seed 42 in data.txt"), std::string::npos) << logs.out;
  CliResult listed = kin({"status"});
  EXPECT_NE(listed.out.find(id), std::string::npos) << listed.out;
  // The table (tab-separated when not a terminal) names the runner and what each step's job
  // cost at list price.
  CliResult table = kin({"status", id});
  EXPECT_NE(table.err.find("(detached, runner Job kinetic-" + id + ")"), std::string::npos)
      << table.err;
  for (const char* name : {"prep", "left", "right", "merge"}) {
    const std::string job = job_of(doc, name);
    const size_t at = table.out.find(job);
    ASSERT_NE(at, std::string::npos) << table.out;
    EXPECT_EQ(table.out.compare(at + job.size(), 6, "\t$0.00"), 0) << table.out;
  }

  // No Job or Secret of a step is left; the runner remembered every step, so a run in the
  // foreground reuses them all and brings their outputs here.
  for (const auto& s : doc["steps"]) {
    const std::string name = "kinetic-" + s["job"].get<std::string>();
    EXPECT_FALSE(exists("/apis/batch/v1/namespaces/default/jobs/" + name)) << name;
    EXPECT_FALSE(exists("/api/v1/namespaces/default/secrets/" + name)) << name;
  }
  auto [again, doc2] = run();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(step_states(doc2),
            (std::map<std::string, std::string>{
                {"prep", "reused"}, {"left", "reused"}, {"right", "reused"}, {"merge", "reused"}}));
  EXPECT_EQ(slurp(proj / "kinetic-out" / doc2["id"].get<std::string>() / "merge" / "merged.txt"),
            "seed 42 left\nseed 42 right\n");
}

TEST_F(GkePipeline, ADetachedFailureSkipsItsDependentsAndTheRecordSaysWhy) {
  CliResult r = kin({"pipeline", "run", "--detach"},
                    {{"BREAK", "1"}, {"KINETIC_PIPELINE_POLL_SECONDS", "0.1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string id = r.out;
  while (!id.empty() && id.back() == '\n') id.pop_back();
  ASSERT_TRUE(runner_succeeded(*cloud_, id)) << record_of(id);
  CliResult st = kin({"status", id, "-o", "json"});
  const nlohmann::json doc = nlohmann::json::parse(st.out);
  EXPECT_EQ(doc["state"], "failed");
  EXPECT_EQ(doc["exit_code"], 1);
  EXPECT_EQ(step_states(doc), (std::map<std::string, std::string>{{"prep", "succeeded"},
                                                                  {"left", "succeeded"},
                                                                  {"right", "failed"},
                                                                  {"merge", "skipped"}}));
  EXPECT_EQ(step_of(doc, "right")["error"], "right broke");
  EXPECT_EQ(step_of(doc, "merge")["error"], "needs right, which failed");
  // Every staged step's Secret (BREAK) went, the skipped step's too: nothing is left behind.
  const nlohmann::json plan = nlohmann::json::parse(record_of(id, "plan.json"));
  ASSERT_EQ(plan["steps"].size(), 4u);
  for (const auto& s : plan["steps"]) {
    const std::string job = s["launch"]["job"];
    // right and merge take BREAK: theirs were staged.
    EXPECT_EQ(s["launch"]["secret"].get<std::string>().empty(),
              s["name"] == "prep" || s["name"] == "left")
        << s["name"];
    EXPECT_FALSE(exists("/api/v1/namespaces/default/secrets/kinetic-" + job)) << s["name"];
    EXPECT_FALSE(exists("/apis/batch/v1/namespaces/default/jobs/kinetic-" + job)) << s["name"];
  }
}

TEST_F(GkePipeline, CancelStopsADetachedRunsStepsInTheCluster) {
  // hold runs until the test says (a file appears); after needs it and never starts.
  const fs::path release = sb.root() / "release";
  sb.write("proj/hold.py",
           "import os, sys, time\n"
           "print('holding', flush=True)\n"
           "while not os.path.exists(sys.argv[1]):\n"
           "    time.sleep(0.05)\n");
  sb.write("proj/slow.yaml", "steps:\n  hold: {file: hold.py, args: [" + release.string() +
                                 "], env: [BREAK]}\n  after: {file: prep.py, needs: [hold]}\n");
  CliResult r = kin({"pipeline", "run", "-f", "slow.yaml", "--detach"},
                    {{"BREAK", "0"}, {"KINETIC_PIPELINE_POLL_SECONDS", "0.1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string id = r.out;
  while (!id.empty() && id.back() == '\n') id.pop_back();
  std::string hold_job;
  ASSERT_TRUE(eventually([&] {
    auto doc = nlohmann::json::parse(record_of(id), nullptr, false);
    if (doc.is_discarded() || step_of(doc, "hold").value("state", "") != "running") return false;
    hold_job = step_of(doc, "hold")["job"];
    return true;
  })) << record_of(id);
  // Its pod runs the job (it said so): the cancel stops a step at work.
  ASSERT_TRUE(eventually([&] {
    return kin({"logs", id, "--step", "hold"}).out.find("holding") != std::string::npos;
  }));

  CliResult c = kin({"cancel", id});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.err.find(id + " cancelled (1 step stopped, 1 skipped)"), std::string::npos) << c.err;
  ASSERT_TRUE(runner_succeeded(*cloud_, id)) << record_of(id);
  const nlohmann::json doc = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out);
  EXPECT_EQ(doc["state"], "cancelled");
  EXPECT_EQ(doc["exit_code"], 130);
  EXPECT_EQ(step_states(doc),
            (std::map<std::string, std::string>{{"hold", "cancelled"}, {"after", "skipped"}}));
  // The step's Job and Secret are gone, and its pod with them.
  EXPECT_FALSE(exists("/apis/batch/v1/namespaces/default/jobs/kinetic-" + hold_job));
  EXPECT_FALSE(exists("/api/v1/namespaces/default/secrets/kinetic-" + hold_job));
  EXPECT_TRUE(cloud_->kube().wait_idle(30000));
  EXPECT_FALSE(fs::exists(release));
}

TEST_F(GkePipeline, ARunnerRefusesAPlanRewrittenAfterTheCliWroteIt) {
  CliResult r;
  const std::string id = detached_and_held(&r, "kinetic.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A job pod may write the bucket: it gives a step another service account.
  std::string plan = record_of(id, "plan.json");
  const size_t at = plan.find("\"restartPolicy\"");
  ASSERT_NE(at, std::string::npos) << plan;
  plan.insert(at, "\"serviceAccountName\": \"kinetic-auto-down-kinetic\", ");
  cloud_->gcs().put_object(kGkeBucket, "pipelines/" + id + "/plan.json", plan);
  cloud_->kube().reset_counters();
  cloud_->kube().fail_pod_creates("");

  nlohmann::json doc;
  ASSERT_TRUE(eventually([&] {
    doc = nlohmann::json::parse(record_of(id), nullptr, false);
    return doc.is_object() && doc.value("state", "") == "failed";
  })) << record_of(id);
  EXPECT_EQ(doc["exit_code"], 125);
  EXPECT_NE(doc["error"].get<std::string>().find("its runner refused the plan: gs://" +
                                                 std::string(kGkeBucket) + "/pipelines/" + id +
                                                 "/plan.json has sha256 "),
            std::string::npos)
      << doc.dump(2);
  EXPECT_NE(doc["error"].get<std::string>().find("changed after `kinetic pipeline run --detach` "
                                                 "wrote it; nothing was launched"),
            std::string::npos)
      << doc.dump(2);
  // Not one step's workload was created.
  EXPECT_EQ(cloud_->kube().request_counts()["POST /apis/batch/v1/namespaces/{ns}/jobs"], 0);
  // `status` says why, and that the steps never ran.
  CliResult st = kin({"status", id});
  EXPECT_NE(st.err.find("its runner refused the plan: gs://"), std::string::npos) << st.err;
  EXPECT_NE(st.out.find("prep\tskipped\t"), std::string::npos) << st.out;
}

TEST_F(GkePipeline, ALaunchAsAnotherAccountOrWithAnotherStepsSecretIsRefused) {
  CliResult r;
  const std::string id = detached_and_held(&r, "kinetic.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // What a CLI that wrote a bad plan would have done (the digest then matches): left runs as
  // auto-down's account, right reads merge's Secret.
  nlohmann::ordered_json plan = nlohmann::ordered_json::parse(record_of(id, "plan.json"));
  std::map<std::string, nlohmann::ordered_json*> steps;
  for (auto& s : plan["steps"]) steps[s["name"]] = &s;
  auto pod_of = [](nlohmann::ordered_json& step) -> nlohmann::ordered_json& {
    return step["launch"]["manifest"]["spec"]["template"]["spec"];
  };
  pod_of(*steps["left"])["serviceAccountName"] = "kinetic-auto-down-kinetic";
  const std::string merge_secret =
      "kinetic-" + (*steps["merge"])["launch"]["job"].get<std::string>();
  pod_of(*steps["right"])["containers"][0]["env"].push_back(
      {{"name", "STOLEN"},
       {"valueFrom", {{"secretKeyRef", {{"name", merge_secret}, {"key", "BREAK"}}}}}});
  const std::string text = plan.dump(2) + "\n";
  cloud_->gcs().put_object(kGkeBucket, "pipelines/" + id + "/plan.json", text);
  const std::string runner = "/apis/batch/v1/namespaces/default/jobs/kinetic-" + id;
  nlohmann::json containers =
      (*cloud_->kube().object(runner))["spec"]["template"]["spec"]["containers"];
  containers[0]["env"][1]["value"] = sha256_hex(text);
  ASSERT_TRUE(cloud_->kube().merge_patch(
      runner, {{"spec", {{"template", {{"spec", {{"containers", containers}}}}}}}}));
  cloud_->kube().reset_counters();
  cloud_->kube().fail_pod_creates("");

  ASSERT_TRUE(runner_succeeded(*cloud_, id)) << record_of(id);
  const nlohmann::json doc = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out);
  EXPECT_EQ(
      step_states(doc),
      (std::map<std::string, std::string>{
          {"prep", "succeeded"}, {"left", "failed"}, {"right", "failed"}, {"merge", "skipped"}}));
  EXPECT_EQ(step_of(doc, "left")["error"],
            "kinetic refused to create its workload: its pods would run as service account "
            "kinetic-auto-down-kinetic; a step's run as kinetic-job");
  EXPECT_EQ(step_of(doc, "right")["error"],
            "kinetic refused to create its workload: its pods would use the Secret " +
                merge_secret + ", which is not the step's own");
  // prep's Job alone was created; the refused steps' Secrets stay for `cleanup`, merge's went
  // with its skip.
  EXPECT_EQ(cloud_->kube().request_counts()["POST /apis/batch/v1/namespaces/{ns}/jobs"], 1);
  EXPECT_FALSE(exists("/api/v1/namespaces/default/secrets/" + merge_secret));
}

TEST_F(GkePipeline, ARecordRewrittenBeforeTheRunnerStartsIsSetAsideForThePlans) {
  CliResult r;
  const std::string id = detached_and_held(&r, "kinetic.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  cloud_->gcs().put_object(kGkeBucket, "pipelines/" + id + "/pipeline.json",
                           R"({"id": ")" + id + R"(", "state": "running", "steps": 7})");
  // The CLI refuses to read it, naming what is wrong; the list of runs goes on without it.
  CliResult st = kin({"status", id});
  EXPECT_NE(st.exit_code, 0);
  EXPECT_NE(st.err.find("pipelines/" + id +
                        "/pipeline.json is not a pipeline record kinetic "
                        "wrote: steps is not an array"),
            std::string::npos)
      << st.err;
  EXPECT_EQ(kin({"status"}).exit_code, 0);
  cloud_->kube().fail_pod_creates("");
  ASSERT_TRUE(runner_succeeded(*cloud_, id)) << record_of(id);
  const nlohmann::json doc = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out);
  EXPECT_EQ(doc["state"], "succeeded") << doc.dump(2);
  EXPECT_EQ(step_states(doc).size(), 4u);
}

TEST_F(GkePipeline, CleanupKeepsARunningPipelinesStagedSecrets) {
  // right and merge take BREAK: their Secrets are staged, their Jobs not created yet when
  // cleanup runs (the runner's pod is held). Were their Secrets deleted, their pods could never
  // start; the short deadline makes that a quick failure rather than a hang.
  CliResult r;
  const std::string id =
      detached_and_held(&r, "kinetic.yaml", {{"KINETIC_PIPELINE_STEP_DEADLINE_SECONDS", "30"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliResult c = kin({"cleanup", "--older-than", "0s"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json plan = nlohmann::json::parse(record_of(id, "plan.json"));
  for (const auto& s : plan["steps"]) {
    const std::string secret = s["launch"]["secret"];
    if (!secret.empty()) {
      EXPECT_TRUE(exists(secret)) << s["name"] << "\n" << c.out;
    }
    EXPECT_TRUE(cloud_->gcs().object_data(
        kGkeBucket, "jobs/" + s["launch"]["job"].get<std::string>() + "/spec.json"))
        << s["name"];
  }
  // A plan a pod made unreadable: what its steps need is unknown, so every Secret stays.
  const std::string plan_text = record_of(id, "plan.json");
  cloud_->gcs().put_object(kGkeBucket, "pipelines/" + id + "/plan.json", "[]");
  ASSERT_EQ(kin({"cleanup", "--older-than", "0s"}).exit_code, 0);
  for (const auto& s : plan["steps"]) {
    const std::string secret = s["launch"]["secret"];
    if (!secret.empty()) {
      EXPECT_TRUE(exists(secret)) << s["name"];
    }
  }
  cloud_->gcs().put_object(kGkeBucket, "pipelines/" + id + "/plan.json", plan_text);
  cloud_->kube().fail_pod_creates("");
  ASSERT_TRUE(runner_succeeded(*cloud_, id)) << record_of(id);
  const nlohmann::json doc = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out);
  EXPECT_EQ(doc["state"], "succeeded") << doc.dump(2);
}

TEST_F(GkePipeline, AStepWhosePodCanNeverStartFailsAtItsDeadline) {
  // hold needs BREAK; its Secret goes before the runner creates its Job (what a cleanup from an
  // older kinetic did), so its pod waits for it forever; after never starts.
  sb.write("proj/short.yaml",
           "steps:\n  hold: {file: prep.py, env: [BREAK]}\n  after: {file: prep.py, needs: "
           "[hold]}\n");
  CliResult r;
  const std::string id =
      detached_and_held(&r, "short.yaml", {{"KINETIC_PIPELINE_STEP_DEADLINE_SECONDS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(record_of(id, "plan.json"));
  const std::string secret = plan["steps"][0]["launch"]["secret"];
  ASSERT_FALSE(secret.empty());
  auto curl = http::make_curl_transport({.ca_pem = cloud_->kube().ca_pem()});
  http::Request del;
  del.method = "DELETE";
  del.url = cloud_->kube().url() + secret;
  del.headers.push_back({"Authorization", "Bearer fake-access-token"});
  ASSERT_EQ(curl->send(del).status, 200);
  cloud_->kube().fail_pod_creates("");

  ASSERT_TRUE(runner_succeeded(*cloud_, id)) << record_of(id);
  const nlohmann::json doc = nlohmann::json::parse(kin({"status", id, "-o", "json"}).out);
  EXPECT_EQ(doc["state"], "failed") << doc.dump(2);
  EXPECT_EQ(doc["exit_code"], 124);
  EXPECT_EQ(step_of(doc, "hold")["state"], "failed");
  EXPECT_EQ(step_of(doc, "hold")["error"],
            "it did not finish within 1s of its start (the default for a step with no timeout); "
            "kinetic stopped waiting and deleted its workload");
  EXPECT_EQ(step_of(doc, "after")["error"], "needs hold, which timed out");
  EXPECT_FALSE(exists(plan["steps"][0]["launch"]["object"]));
}

}  // namespace
}  // namespace kinetic::test
