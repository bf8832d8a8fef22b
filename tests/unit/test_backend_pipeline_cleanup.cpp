#include "backend/pipeline_cleanup.h"

#include <gtest/gtest.h>

#include <map>

#include "core/duration.h"

namespace kinetic {
namespace {

// Records in memory: what prune_pipeline_records lists and removes.
class MemoryRecords : public PipelineRecords {
 public:
  std::map<std::string, PipelineDocument> docs;
  std::optional<PipelineDocument> load(const std::string& id) override {
    auto it = docs.find(id);
    return it == docs.end() ? std::nullopt : std::optional(it->second);
  }
  void save(const std::string& id, const PipelineDocument& doc) override { docs[id] = doc; }
  std::vector<PipelineDocument> list() override {
    std::vector<PipelineDocument> out;
    for (const auto& [id, doc] : docs) out.push_back(doc);
    return out;
  }
  void remove(const std::string& id) override { docs.erase(id); }
  void request_cancel(const std::string&) override {}
  bool cancel_requested(const std::string&) override { return false; }
  nlohmann::ordered_json this_runner() override { return {}; }
  bool runner_alive(const PipelineDocument&) override { return false; }
  bool wake_runner(const PipelineDocument&) override { return false; }

  void add(const std::string& id, const std::string& state, double finished) {
    docs[id] = {{"id", id}, {"state", state}, {"finished", finished > 0 ? rfc3339(finished) : ""}};
  }
};

constexpr double kNow = 2'000'000'000;
constexpr long kDay = 24 * 3600;

TEST(PipelineCleanup, FinishedRunsGoByTheJobsRuleAndUnfinishedOnesStay) {
  MemoryRecords records;
  records.add("pipe-00000001", "succeeded", kNow - 10 * kDay);
  records.add("pipe-00000002", "failed", kNow - 9 * kDay);
  records.add("pipe-00000003", "cancelled", kNow - 60);
  records.add("pipe-00000004", "running", 0);  // still running, or lost: when it ended is unknown

  auto dry = prune_pipeline_records(records, {}, kNow, /*dry_run=*/true);
  ASSERT_EQ(dry.size(), 2u);
  EXPECT_EQ(dry[0].kind, "pipeline");
  EXPECT_EQ(dry[0].name, "pipe-00000001");
  EXPECT_EQ(dry[0].detail, "succeeded");
  EXPECT_EQ(dry[1].name, "pipe-00000002");
  EXPECT_EQ(records.docs.size(), 4u) << "a dry run removes nothing";

  const CleanupPolicy last1{.keep_last = 1, .records_by_age = false};
  auto removed = prune_pipeline_records(records, last1, kNow, /*dry_run=*/false);
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_EQ(records.docs.size(), 2u);
  EXPECT_TRUE(records.docs.count("pipe-00000003"));
  EXPECT_TRUE(records.docs.count("pipe-00000004"));
}

}  // namespace
}  // namespace kinetic
