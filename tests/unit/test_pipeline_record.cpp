// lib/pipeline/pipeline_record.h: a pipeline's record saved and read back whole, listed newest
// first, and a run whose runner is gone read as lost.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/local/local_pipeline_records.h"
#include "core/error.h"
#include "core/fs.h"
#include "pipeline/pipeline_record.h"

namespace kinetic {
namespace {

class PipelineRecordTest : public ::testing::Test {
 protected:
  // A record of pipeline ID in STATE, created at CREATED, run by RUNNER.
  PipelineDocument doc(const std::string& id, const std::string& state,
                       const std::string& created = "2025-01-02T03:04:05Z",
                       nlohmann::ordered_json runner = nlohmann::ordered_json::object()) {
    return {{"kind", "PipelineRun"},
            {"schema_version", 1},
            {"id", id},
            {"state", state},
            {"exit_code", nullptr},
            {"created", created},
            {"runner", runner},
            {"steps", nlohmann::ordered_json::array({{{"name", "prep"}, {"state", "running"}}})}};
  }
  // A runner that is gone: a child that exited and was reaped.
  static nlohmann::ordered_json dead_runner(LocalPipelineRecords& records) {
    auto runner = records.this_runner();
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    ::waitpid(pid, nullptr, 0);
    runner["pid"] = pid;
    return runner;
  }

  TempDir root{fs::temp_directory_path(), "kinetic-pipeline-record-"};
  LocalPipelineRecords records{root.path() / "state"};
};

TEST_F(PipelineRecordTest, ARecordIsReadBackAsSaved) {
  EXPECT_FALSE(records.load("pipe-1a2b3c4d"));
  const auto saved = doc("pipe-1a2b3c4d", "running");
  records.save("pipe-1a2b3c4d", saved);
  const auto loaded = records.load("pipe-1a2b3c4d");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(*loaded, saved);
  EXPECT_TRUE(fs::exists(root.path() / "state" / "pipelines" / "runs" / "pipe-1a2b3c4d.json"));
  // Rewritten whole: the second save replaces the first.
  records.save("pipe-1a2b3c4d", doc("pipe-1a2b3c4d", "succeeded"));
  EXPECT_EQ(records.load("pipe-1a2b3c4d")->value("state", ""), "succeeded");
}

TEST_F(PipelineRecordTest, AnIdThatIsNotOneNamesNoFile) {
  EXPECT_THROW(records.load("../../etc/passwd"), Error);
  EXPECT_THROW(records.save("job-1a2b3c4d", doc("job-1a2b3c4d", "running")), Error);
  EXPECT_TRUE(looks_like_pipeline_id("pipe-0123abcd"));
  EXPECT_FALSE(looks_like_pipeline_id("pipe-0123ABCD"));
  EXPECT_FALSE(looks_like_pipeline_id("pipe-0123abc"));
  EXPECT_FALSE(looks_like_pipeline_id("job-0123abcd"));
}

TEST_F(PipelineRecordTest, TheListIsNewestFirstAndSkipsWhatIsNotARecord) {
  records.save("pipe-00000001", doc("pipe-00000001", "succeeded", "2025-01-01T00:00:00Z"));
  records.save("pipe-00000003", doc("pipe-00000003", "failed", "2025-03-01T00:00:00Z"));
  records.save("pipe-00000002", doc("pipe-00000002", "succeeded", "2025-02-01T00:00:00Z"));
  const fs::path dir = root.path() / "state" / "pipelines" / "runs";
  atomic_write(dir / "pipe-00000004.json", "{ torn");
  atomic_write(dir / "notes.json", "{}");
  atomic_write(dir / "pipe-00000002.log", "a runner's output\n");
  std::vector<std::string> ids;
  for (const auto& d : records.list()) ids.push_back(d.value("id", ""));
  EXPECT_EQ(ids, (std::vector<std::string>{"pipe-00000003", "pipe-00000002", "pipe-00000001"}));
}

TEST_F(PipelineRecordTest, CancelIsAMarkBesideTheRecord) {
  records.save("pipe-1a2b3c4d", doc("pipe-1a2b3c4d", "running"));
  EXPECT_FALSE(records.cancel_requested("pipe-1a2b3c4d"));
  records.request_cancel("pipe-1a2b3c4d");
  EXPECT_TRUE(records.cancel_requested("pipe-1a2b3c4d"));
  // The runner's next save keeps the mark: it is not a field the runner rewrites.
  records.save("pipe-1a2b3c4d", doc("pipe-1a2b3c4d", "running"));
  EXPECT_TRUE(records.cancel_requested("pipe-1a2b3c4d"));
}

TEST_F(PipelineRecordTest, ARunningRecordWhoseRunnerIsGoneIsLost) {
  // This process as the runner: alive.
  records.save("pipe-00000001",
               doc("pipe-00000001", "running", "2025-01-01T00:00:00Z", records.this_runner()));
  EXPECT_TRUE(records.runner_alive(*records.load("pipe-00000001")));
  EXPECT_EQ(pipeline_view(records, "pipe-00000001")->value("state", ""), "running");

  // A runner that exited without finishing the record.
  records.save("pipe-00000002",
               doc("pipe-00000002", "running", "2025-01-01T00:00:00Z", dead_runner(records)));
  const auto lost = pipeline_view(records, "pipe-00000002");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->value("state", ""), "lost");
  EXPECT_EQ(lost->value("exit_code", 0), 125);
  EXPECT_NE(lost->value("error", "").find("kinetic cancel pipe-00000002"), std::string::npos);
  // Read only: the record itself still says what the runner last wrote.
  EXPECT_EQ(records.load("pipe-00000002")->value("state", ""), "running");

  // This process's pid, but another start time: a reused pid is not the runner.
  auto stranger = records.this_runner();
  stranger["start_time"] = "1";
  records.save("pipe-00000003", doc("pipe-00000003", "running", "2025-01-01T00:00:00Z", stranger));
  EXPECT_EQ(pipeline_view(records, "pipe-00000003")->value("state", ""), "lost");
  EXPECT_FALSE(records.wake_runner(*records.load("pipe-00000003")));

  // A finished record stays as it is, runner or not.
  records.save("pipe-00000004",
               doc("pipe-00000004", "succeeded", "2025-01-01T00:00:00Z", dead_runner(records)));
  EXPECT_EQ(pipeline_view(records, "pipe-00000004")->value("state", ""), "succeeded");
}

TEST_F(PipelineRecordTest, AnUnknownIdIsNotFoundWithTheNearestOnes) {
  records.save("pipe-1a2b3c4d", doc("pipe-1a2b3c4d", "succeeded"));
  try {
    require_pipeline(records, "pipe-1a2b3c4e");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_EQ(std::string(e.what()),
              "no pipeline 'pipe-1a2b3c4e'; did you mean pipe-1a2b3c4d? (run `kinetic status` to "
              "list pipelines)");
  }
  EXPECT_EQ(require_pipeline(records, "pipe-1a2b3c4d").value("id", ""), "pipe-1a2b3c4d");
}

}  // namespace
}  // namespace kinetic
