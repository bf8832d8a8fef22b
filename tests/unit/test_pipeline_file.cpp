// lib/pipeline/pipeline_file.h: the fields of a step, and every mistake as one line naming the
// file, the line and the step.
#include <gtest/gtest.h>

#include "core/error.h"
#include "pipeline/pipeline_file.h"

namespace kinetic {
namespace {

PipelineFile parse(const std::string& text) {
  return parse_pipeline(text, "kinetic.yaml", "/proj");
}

// The message of the usage error parsing TEXT throws ("" when it parses).
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << e.what();
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  return "";
}

TEST(PipelineFile, ReadsEveryFieldOfAStepInTheFilesOrder) {
  const auto file = parse(
      "steps:\n"
      "  prep: {file: prep.py}\n"
      "  train:\n"
      "    file: train.py\n"
      "    args: [\"--epochs\", 3]\n"
      "    accelerator: v5litepod-1\n"
      "    spot: true\n"
      "    flex-start: true\n"
      "    env: [WANDB_API_KEY, MODE=fast]\n"
      "    capture-env: [\"KAGGLE_*\"]\n"
      "    timeout: 30m\n"
      "    retries: 2\n"
      "    slices: 2\n"
      "    priority: high\n"
      "    needs: [prep]\n");
  ASSERT_EQ(file.steps.size(), 2u);
  EXPECT_EQ(file.steps[0].name, "prep");
  EXPECT_EQ(file.steps[0].line, 2);
  const PipelineStep& train = file.steps[1];
  EXPECT_EQ(train.name, "train");
  EXPECT_EQ(train.line, 3);
  EXPECT_EQ(train.file, "train.py");
  EXPECT_EQ(train.args, (std::vector<std::string>{"--epochs", "3"}));
  EXPECT_EQ(train.accelerator, "v5litepod-1");
  EXPECT_TRUE(train.spot);
  EXPECT_TRUE(train.flex_start);
  EXPECT_FALSE(file.steps[0].flex_start);
  EXPECT_EQ(train.env, (std::vector<std::string>{"WANDB_API_KEY", "MODE=fast"}));
  EXPECT_EQ(train.capture_env, (std::vector<std::string>{"KAGGLE_*"}));
  EXPECT_EQ(train.timeout_seconds, 1800);
  EXPECT_EQ(train.retries, 2);
  EXPECT_EQ(train.slices, 2);
  EXPECT_EQ(file.steps[0].slices, 1) << "one slice unless given";
  EXPECT_EQ(train.priority, "high");
  EXPECT_EQ(file.steps[0].priority, "") << "normal unless given";
  EXPECT_EQ(train.needs, (std::vector<std::string>{"prep"}));
  EXPECT_EQ(file.where(train), "kinetic.yaml:3: step train");
  EXPECT_EQ(file.find("prep"), &file.steps[0]);
  EXPECT_EQ(file.find("nope"), nullptr);
}

TEST(PipelineFile, AnUnknownFieldNamesItsLineItsStepAndTheFieldMeant) {
  EXPECT_EQ(error_of("steps:\n"
                     "  prep: {file: prep.py}\n"
                     "  train:\n"
                     "    file: train.py\n"
                     "    acelerator: v5litepod-1\n"),
            "kinetic.yaml:5: step train: unknown field 'acelerator'; did you mean accelerator?");
  const std::string far = error_of("steps:\n  prep: {file: prep.py, colour: blue}\n");
  EXPECT_NE(far.find("kinetic.yaml:2: step prep: unknown field 'colour'; the fields are file"),
            std::string::npos)
      << far;
}

TEST(PipelineFile, MalformedYamlNamesTheLine) {
  const std::string e = error_of("steps:\n  prep: {file: prep.py\n  train: [\n");
  EXPECT_EQ(e.rfind("kinetic.yaml:", 0), 0u) << e;
  EXPECT_NE(e.find("not valid YAML"), std::string::npos) << e;
}

TEST(PipelineFile, WrongTypesAreRefusedWithAnExample) {
  EXPECT_EQ(error_of("steps:\n  train:\n    file: t.py\n    args: --epochs 3\n"),
            "kinetic.yaml:4: step train: args must be a list, e.g. args: [\"--epochs\", \"3\"]");
  EXPECT_EQ(error_of("steps:\n  train:\n    file: t.py\n    needs: prep\n"),
            "kinetic.yaml:4: step train: needs must be a list, e.g. needs: [prep]");
  EXPECT_EQ(error_of("steps:\n  train:\n    file: [a, b]\n"),
            "kinetic.yaml:3: step train: file must be a single value, not a list");
  EXPECT_EQ(error_of("steps:\n  train: {file: t.py, spot: maybe}\n"),
            "kinetic.yaml:2: step train: spot must be true or false, not 'maybe'");
  EXPECT_EQ(error_of("steps:\n  train: {file: t.py, retries: 1000}\n"),
            "kinetic.yaml:2: step train: retries must be a number between 0 and 100, not '1000'");
  EXPECT_EQ(error_of("steps:\n  train: {file: t.py, slices: 0}\n"),
            "kinetic.yaml:2: step train: slices must be a number of slices, 1 or more, not '0'");
  EXPECT_EQ(error_of("steps:\n  train: {file: t.py, priority: urgent}\n"),
            "kinetic.yaml:2: step train: priority must be low, normal or high, not 'urgent'");
  EXPECT_NE(error_of("steps:\n  train: {file: t.py, timeout: soon}\n")
                .find("kinetic.yaml:2: step train: invalid duration 'soon'"),
            std::string::npos);
}

TEST(PipelineFile, AStepNeedsAFileAndAUsableName) {
  EXPECT_EQ(error_of("steps:\n  prep:\n"),
            "kinetic.yaml:2: step prep: no file; give it one, e.g. {file: prep.py}");
  EXPECT_EQ(error_of("steps:\n  prep: {args: [a]}\n"),
            "kinetic.yaml:2: step prep: no file; give it one, e.g. file: prep.py");
  EXPECT_NE(error_of("steps:\n  ../up: {file: a.py}\n").find("kinetic.yaml:2: '../up' is not a"),
            std::string::npos);
  EXPECT_EQ(error_of("steps:\n  a: {file: a.py}\n  a: {file: b.py}\n"),
            "kinetic.yaml:3: step a: defined twice (first on line 2); rename one");
}

TEST(PipelineFile, TheTopLevelHoldsStepsAlone) {
  EXPECT_EQ(error_of(""),
            "kinetic.yaml: the file is empty; a pipeline has steps; e.g. steps: {prep: {file: "
            "prep.py}}");
  EXPECT_EQ(error_of("step:\n  prep: {file: p.py}\n"),
            "kinetic.yaml:1: unknown field 'step'; did you mean steps?");
  EXPECT_EQ(error_of("steps: [prep]\n"),
            "kinetic.yaml:1: steps must be a map of named steps; e.g. steps: {prep: {file: "
            "prep.py}}");
  EXPECT_NE(error_of("steps:\n  a: {file: a.py, data: [\"gs://b/x:/data\"]}\n")
                .find("step a: data in a pipeline step is not supported yet"),
            std::string::npos);
}

}  // namespace
}  // namespace kinetic
