// The stable schema (docs/schemas.md): every document kinetic prints with -o json, and the
// status.json and spec.json it writes, keep their shape (schema_check.h) and snake_case keys,
// and the printed ones begin with kind and schema_version. The cloud-only documents (PoolList,
// AuthStatus, a gke JobList) are checked where their e2e tests run them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "core/schema.h"
#include "schema_check.h"

namespace kinetic::test {
namespace {

class Schema : public ::testing::Test {
 protected:
  void SetUp() override {
    proj = sb.project();
    sb.write("proj/ok.sh", "echo done\n");
  }

  // The -o json document of ARGS, checked to begin with KIND and the schema version.
  nlohmann::json document(const std::vector<std::string>& args, const std::string& kind) {
    auto r = sb.run(args, proj);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::ordered_json::parse(r.out);
    auto it = doc.begin();
    EXPECT_EQ(it.key(), "kind");
    EXPECT_EQ(it.value(), kind);
    ++it;
    EXPECT_EQ(it.key(), "schema_version");
    EXPECT_EQ(it.value(), kSchemaVersion);
    return nlohmann::json::parse(r.out);
  }

  Sandbox sb;
  fs::path proj;
};

TEST_F(Schema, EveryPrintedDocumentKeepsItsShape) {
  expect_schema("Version", document({"version", "-o", "json"}, "Version"));
  expect_schema("AcceleratorList", document({"accelerators", "-o", "json"}, "AcceleratorList"));
  expect_schema("Config", document({"config", "view", "-o", "json"}, "Config"));
  expect_schema("ContextList", document({"config", "get-contexts", "-o", "json"}, "ContextList"));
  expect_schema("RunPlan", document({"run", "ok.sh", "--dry-run", "-o", "json"}, "RunPlan"));

  auto detached = document({"run", "ok.sh", "--detach", "-o", "json"}, "SubmittedJob");
  expect_schema("SubmittedJob", detached);
  const std::string id = detached["id"];
  ASSERT_TRUE(eventually([&] {
    return sb.run({"status", id, "-o", "json"}, proj).out.find("\"succeeded\"") !=
           std::string::npos;
  }));
  expect_schema("Job", document({"status", id, "-o", "json"}, "Job"));
  expect_schema("WaitResult", document({"wait", id, "-o", "json"}, "WaitResult"));
  expect_schema("JobList.local", document({"status", "-o", "json"}, "JobList"));
  expect_schema(
      "CleanupList",
      document({"cleanup", "--older-than", "0s", "--dry-run", "-o", "json"}, "CleanupList"));
}

TEST_F(Schema, TheRecordsOnDiskKeepTheirShape) {
  auto r = sb.run({"run", "ok.sh"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = job_id_in(r.err);
  ASSERT_FALSE(id.empty()) << r.err;
  auto status = nlohmann::json::parse(slurp(proj / "kinetic-out" / id / "status.json"));
  EXPECT_EQ(status["schema_version"], kSchemaVersion);
  expect_schema("status.json.local", status);
  auto spec = nlohmann::json::parse(slurp(sb.state() / "jobs" / id / "spec.json"));
  EXPECT_EQ(spec["schema_version"], kSchemaVersion);
  expect_schema("spec.json.local", spec);
}

TEST(SchemaCheck, ShapesMergeItemsAndCatchEveryKindOfChange) {
  auto shape = shape_of(nlohmann::json::parse(
      R"({"a": 1, "b": [{"x": "s", "y": null}, {"x": "t", "y": 2}], "c": []})"));
  EXPECT_EQ(shape, nlohmann::json::parse(
                       R"({"a": "number", "b": [{"x": "string", "y": "null|number"}], "c": []})"));
  EXPECT_EQ(first_non_snake_key(nlohmann::json::parse(R"({"ok_key": {"badKey": 1}})")),
            "ok_key.badKey");
  EXPECT_EQ(first_non_snake_key(nlohmann::json::parse(R"({"node_selector": {"a.b/c": "x"}})")), "");
}

}  // namespace
}  // namespace kinetic::test
