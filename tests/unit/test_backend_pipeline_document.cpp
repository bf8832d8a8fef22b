// Reading a pipeline record someone else wrote (backend/pipeline_document.h): a record kinetic
// wrote reads as it is; one a pod rewrote with a field of another type is refused whole, naming
// the object and the field, so that `status`, `logs` and `cancel` never throw on it.
#include <gtest/gtest.h>

#include "backend/gke/gke_pipeline_records.h"
#include "backend/pipeline_document.h"
#include "core/error.h"

namespace kinetic {
namespace {

const char* kWhere = "gs://b/pipelines/pipe-1a2b3c4d/pipeline.json";

std::string refusal(const std::string& text) {
  try {
    read_pipeline_document(text, kWhere);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::api) << e.what();
    return e.what();
  }
  return "";
}

TEST(PipelineDocument, ARecordKineticWroteReadsAsItIs) {
  const std::string text =
      R"({"kind":"PipelineRun","id":"pipe-1a2b3c4d","state":"running","exit_code":null,)"
      R"("detached":true,"runner":{"job":"kinetic-pipe-1a2b3c4d","namespace":"default"},)"
      R"("steps":[{"name":"prep","state":"succeeded","reused":false,"needs":[],"exit_code":0,)"
      R"("duration_seconds":1.5,"job":"job-1"}]})";
  const auto doc = read_pipeline_document(text, kWhere);
  EXPECT_EQ(doc["steps"][0]["name"], "prep");
  // Missing fields stay missing: the readers default them.
  EXPECT_EQ(read_pipeline_document("{}", kWhere), nlohmann::ordered_json::object());
}

TEST(PipelineDocument, AFieldOfAnotherTypeRefusesTheRecordNamingIt) {
  EXPECT_EQ(refusal("[1]"), std::string(kWhere) +
                                " is not a pipeline record (not a JSON object); a job may have "
                                "overwritten it (`kinetic status` lists the others)");
  EXPECT_NE(refusal("{\"state\": 3}").find(": state is not a string;"), std::string::npos);
  EXPECT_NE(refusal("{\"steps\": {}}").find(": steps is not an array;"), std::string::npos);
  EXPECT_NE(refusal("{\"steps\": [{\"state\": \"running\"}, 7]}").find("steps[1] is not an object"),
            std::string::npos);
  EXPECT_NE(refusal("{\"steps\": [{\"exit_code\": \"1\"}]}")
                .find("steps[0].exit_code is not an integer or null"),
            std::string::npos);
  EXPECT_NE(refusal("{\"steps\": [{\"needs\": [1]}]}").find("steps[0].needs is not an array"),
            std::string::npos);
  EXPECT_NE(refusal("{\"runner\": {\"pid\": -1}}").find("runner.pid is not a positive integer"),
            std::string::npos);
  EXPECT_NE(refusal("{\"detached\": \"yes\"}").find("detached is not a boolean"),
            std::string::npos);
}

TEST(PlanLaunches, AreTheStepsToRunOfAPlanOrAnErrorNamingIt) {
  const auto launches = gke::plan_launches(
      R"({"steps":[{"name":"a","launch":{"job":"job-1"}},{"name":"b"}]})", "gs://b/plan.json");
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0]["job"], "job-1");
  for (const char* bad :
       {"", "[]", R"({"steps":{}})", R"({"steps":[1]})", R"({"steps":[{"launch":{"job":1}}]})"}) {
    try {
      gke::plan_launches(bad, "gs://b/plan.json");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::api) << bad;
      EXPECT_EQ(std::string(e.what()).rfind("gs://b/plan.json is not a pipeline plan", 0), 0u)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace kinetic
