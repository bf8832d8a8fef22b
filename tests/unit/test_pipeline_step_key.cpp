// lib/pipeline/step_key.h: every input of a step changes its key; a secret's value cannot.
#include <gtest/gtest.h>

#include <functional>

#include "pipeline/step_key.h"

namespace kinetic {
namespace {

StepKeyInputs base() {
  PipelineStep step;
  step.name = "train";
  step.file = "train.py";
  step.args = {"--epochs", "3"};
  step.env = {"WANDB_API_KEY", "MODE=fast"};
  step.capture_env = {"KAGGLE_*"};
  return step_key_inputs(step, std::string(64, 'a'), "py3.12-abc", "train.py", "", "cpu",
                         {{"prep", std::string(64, 'b')}});
}

TEST(StepKey, IsStableAndHex) {
  const std::string key = step_key(base());
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(step_key(base()), key);
}

TEST(StepKey, EachInputChangesIt) {
  const std::string key = step_key(base());
  const std::vector<std::pair<const char*, std::function<void(StepKeyInputs&)>>> changes = {
      {"context", [](StepKeyInputs& in) { in.context_sha256 = std::string(64, 'c'); }},
      {"image", [](StepKeyInputs& in) { in.image = "py3.11-abc"; }},
      {"file", [](StepKeyInputs& in) { in.file = "train2.py"; }},
      {"workdir", [](StepKeyInputs& in) { in.workdir = "sub"; }},
      {"args", [](StepKeyInputs& in) { in.args.back() = "4"; }},
      {"args split differently", [](StepKeyInputs& in) { in.args = {"--epochs 3"}; }},
      {"accelerator", [](StepKeyInputs& in) { in.accelerator = "v5litepod-1"; }},
      {"spot", [](StepKeyInputs& in) { in.accelerator = "cpu:spot"; }},
      {"env value written in the file", [](StepKeyInputs& in) { in.env["MODE"] = "slow"; }},
      {"another secret", [](StepKeyInputs& in) { in.secret_env.push_back("HF_TOKEN"); }},
      {"capture glob", [](StepKeyInputs& in) { in.capture_env = {"HF_*"}; }},
      {"a need's key", [](StepKeyInputs& in) { in.needs["prep"] = std::string(64, 'd'); }},
      {"another need", [](StepKeyInputs& in) { in.needs["data"] = std::string(64, 'e'); }},
  };
  for (const auto& [what, change] : changes) {
    StepKeyInputs in = base();
    change(in);
    EXPECT_NE(step_key(in), key) << what;
  }
}

TEST(StepKey, SecretsCountByNameNeverByValue) {
  const StepKeyInputs in = base();
  // NAME is a secret (the caller's value); NAME=VALUE was written in the file.
  EXPECT_EQ(in.secret_env, (std::vector<std::string>{"WANDB_API_KEY"}));
  EXPECT_EQ(in.env, (std::map<std::string, std::string>{{"MODE", "fast"}}));
  // The order the file lists them in is not an input.
  PipelineStep step;
  step.env = {"MODE=fast", "WANDB_API_KEY"};
  step.args = {"--epochs", "3"};
  step.capture_env = {"KAGGLE_*"};
  EXPECT_EQ(step_key(step_key_inputs(step, std::string(64, 'a'), "py3.12-abc", "train.py", "",
                                     "cpu", {{"prep", std::string(64, 'b')}})),
            step_key(in));
}

}  // namespace
}  // namespace kinetic
