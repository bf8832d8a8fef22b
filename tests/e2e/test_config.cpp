// Contexts and configuration precedence through the CLI, and the dry-run manifests.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_harness.h"

namespace kinetic::test {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  Sandbox sb;
  fs::path proj = sb.project("proj");

  nlohmann::json view(const std::vector<std::string>& extra = {},
                      const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> args = {"config", "view", "-o", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = sb.run(args, proj, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
};

TEST_F(ConfigTest, FreshMachineHasTheLocalContextCurrent) {
  auto v = view();
  EXPECT_EQ(v["current_context"], "local");
  EXPECT_EQ(v["resolved"]["backend"], "local");
  EXPECT_EQ(v["resolved"]["context"]["source"], "config file");
  EXPECT_FALSE(fs::exists(sb.config_file())) << "reading must not write";
  auto ctx = sb.run({"config", "get-contexts", "-o", "name"}, proj);
  EXPECT_EQ(ctx.out, "local\n");
}

TEST_F(ConfigTest, SetCreatesContextsAndUseContextSwitches) {
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.backend", "gke"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.project", "acme-ml"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.zone", "us-central1-a"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"config", "use-context", "acme"}, proj).exit_code, 0);
  auto v = view();
  EXPECT_EQ(v["current_context"], "acme");
  EXPECT_EQ(v["resolved"]["project"]["value"], "acme-ml");
  EXPECT_EQ(v["resolved"]["project"]["source"], "context acme");
  EXPECT_EQ(v["resolved"]["region"]["value"], "us-central1");
  EXPECT_EQ(v["resolved"]["cluster"]["value"], "kinetic");
  // The file is private: contexts may name accounts.
  EXPECT_EQ(fs::status(sb.config_file()).permissions() & fs::perms::others_read, fs::perms::none);
  auto bad = sb.run({"config", "set", "projet", "x"}, proj);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("did you mean project?"), std::string::npos) << bad.err;
}

TEST_F(ConfigTest, PrecedenceIsFlagThenEnvironmentThenContextThenGcloud) {
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.backend", "gke"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"config", "use-context", "acme"}, proj).exit_code, 0);
  sb.write("home/.config/gcloud/configurations/config_default",
           "[core]\nproject = from-gcloud\n[compute]\nzone = europe-west4-b\n");
  EXPECT_EQ(view()["resolved"]["project"]["value"], "from-gcloud");
  EXPECT_EQ(view()["resolved"]["zone"]["source"], "gcloud config");
  ASSERT_EQ(sb.run({"config", "set", "project", "from-context"}, proj).exit_code, 0);
  EXPECT_EQ(view()["resolved"]["project"]["value"], "from-context");
  auto env = view({}, {{"KINETIC_PROJECT", "from-env"}});
  EXPECT_EQ(env["resolved"]["project"]["value"], "from-env");
  EXPECT_EQ(env["resolved"]["project"]["source"], "env KINETIC_PROJECT");
  auto flag = view({"--project", "from-flag"}, {{"KINETIC_PROJECT", "from-env"}});
  EXPECT_EQ(flag["resolved"]["project"]["value"], "from-flag");
  EXPECT_EQ(flag["resolved"]["project"]["source"], "flag --project");
}

TEST_F(ConfigTest, LocalContextIgnoresGcloudsProject) {
  sb.write("home/.config/gcloud/configurations/config_default", "[core]\nproject = g\n");
  EXPECT_EQ(view()["resolved"]["project"]["value"], "");
}

TEST_F(ConfigTest, DryRunOnGkePrintsTheManifestsWithoutSubmittingAnything) {
  sb.write("proj/requirements.txt", "jax[tpu]\n");
  sb.write("proj/train.py", "print(1)\n");
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.backend", "gke"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.project", "acme-ml"}, proj).exit_code, 0);
  ASSERT_EQ(sb.run({"config", "set", "contexts.acme.zone", "us-west4-a"}, proj).exit_code, 0);
  auto r = sb.run({"run", "train.py", "--context", "acme", "-a", "v5litepod-16", "--dry-run", "-o",
                   "json", "--env", "TOKEN=hunter2", "--timeout", "2h"},
                  proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto list = nlohmann::json::parse(r.out);
  ASSERT_EQ(list["kind"], "List");
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0]["kind"], "Secret");
  const auto& js = list["items"][1];
  EXPECT_EQ(js["kind"], "JobSet");
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos) << "a secret value was printed";
  auto pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/gke-tpu-topology"], "4x4");
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["google.com/tpu"], "4");
  std::string image = pod["containers"][0]["image"];
  EXPECT_EQ(image.rfind("us-west4-docker.pkg.dev/acme-ml/kinetic/base:tpu-", 0), 0u) << image;
  EXPECT_FALSE(fs::exists(sb.state() / "jobs"));
  EXPECT_FALSE(fs::exists(sb.state() / "store"));

  auto yaml =
      sb.run({"run", "train.py", "--context", "acme", "-a", "l4", "--dry-run", "-o", "yaml"}, proj);
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_NE(yaml.out.find("kind: Job\n"), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("cloud.google.com/gke-accelerator: nvidia-l4"), std::string::npos);
}

TEST_F(ConfigTest, DryRunShowsTheJobsArgumentsAsAShellWouldNeedThem) {
  sb.write("proj/train.py", "print(1)\n");
  auto r = sb.run({"run", "train.py", "--dry-run", "--", "--lr", "0.1 0.2", "it's", "$HOME"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("args:         --lr '0.1 0.2' 'it'\\''s' '$HOME'\n"), std::string::npos)
      << r.out;
}

TEST_F(ConfigTest, DryRunOnLocalDescribesThePlan) {
  sb.write("proj/requirements.txt", "numpy\n");
  sb.write("proj/train.py", "print(1)\n");
  auto r = sb.run({"run", "train.py", "--dry-run", "-o", "json"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto plan = nlohmann::json::parse(r.out);
  EXPECT_EQ(plan["backend"], "local");
  EXPECT_EQ(plan["file"], "train.py");
  EXPECT_EQ(plan["context_files"], 2);  // requirements.txt, train.py
  EXPECT_EQ(plan["image_tag"].get<std::string>().rfind("cpu-", 0), 0u);
  EXPECT_FALSE(fs::exists(sb.state() / "jobs"));
}

TEST_F(ConfigTest, AcceleratorsNeedNoConfigAtAll) {
  sb.write("config/kinetic/config.yaml", "{{{ broken");
  auto r = sb.run({"accelerators", "-o", "json"}, proj);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_GT(doc["accelerators"].size(), 40u);
  auto v = sb.run({"version"}, proj);
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("kinetic ", 0), 0u);
}

}  // namespace
}  // namespace kinetic::test
