// `kinetic pipeline run` on GKE against the fake cloud (docs/pipelines.md "On GKE"): each step a
// Job of its own, a step's outputs reaching the steps that need it through the bucket (the pod
// downloads them; nothing passes through the laptop), the cache kept in the bucket, a second run
// reusing every step, a change rerunning one step and its dependents, and a failure stopping its
// dependents, then a resume.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gke_fixture.h"
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
    "  merge: {file: merge.py, needs: [left, right]}\n";

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
      EXPECT_FALSE(exists("/apis/batch/v1/namespaces/default/jobs/" + name)) << name;
      EXPECT_FALSE(exists("/api/v1/namespaces/default/secrets/" + name)) << name;
    }
}

TEST_F(GkePipeline, DetachedIsRefusedBeforeAnythingIsStaged) {
  // The bucket is the suite's: what earlier tests cached there stays as it was.
  const auto before = cloud_->gcs().object_names(kGkeBucket, "pipelines/");
  auto r = kin({"pipeline", "run", "--detach"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("pipeline run --detach runs on the local backend in this build"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(proj / "kinetic-out"));
  EXPECT_EQ(cloud_->gcs().object_names(kGkeBucket, "pipelines/"), before);
}

}  // namespace
}  // namespace kinetic::test
