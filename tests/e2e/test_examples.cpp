// The examples are real jobs (issue #13): each script compiles, each dry run on a gke context is
// what its README promises (golden: tests/golden/examples/NAME.txt), and jax-smoke runs here on
// the local backend, with its CPU fallback when jax is not installed. After an intended change:
//   KINETIC_UPDATE_GOLDEN=1 ./build/tests/kinetic_e2e_tests --gtest_filter='Examples*'
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>

#include "cli_harness.h"
#include "integration/command_output.h"

namespace kinetic::test {
namespace {

const fs::path kExamples = fs::path(KINETIC_SOURCE_DIR) / "examples";

class Examples : public ::testing::Test {
 protected:
  // A copy of examples/NAME in the sandbox (the repository must not be the job's context).
  fs::path copy(const std::string& name) {
    const fs::path to = sb.root() / name;
    fs::copy(kExamples / name, to, fs::copy_options::recursive);
    return to;
  }
  void gke_context() {
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"backend", "gke"}, {"project", "acme-ml"}, {"zone", "us-central1-a"}})
      ASSERT_EQ(sb.run({"config", "set", "contexts.acme." + k, v}).exit_code, 0);
  }
  // The dry run's text with what changes from run to run masked: the job id, the sandbox, the
  // archive's compressed size and digest (the compressor's version decides them).
  std::string normalized(std::string text) const {
    text = std::regex_replace(text, std::regex("job-[0-9a-f]{8}"), "job-XXXXXXXX");
    text =
        std::regex_replace(text,
                           std::regex(std::regex_replace(
                               sb.root().string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)")),
                           "$$ROOT");
    return std::regex_replace(text, std::regex(R"(KiB -> [0-9.]+ [KM]iB, sha256 [0-9a-f]+)"),
                              "KiB -> (compressed), sha256 (of the archive)");
  }
  void expect_golden(const std::string& name, const std::string& actual) {
    const fs::path path = fs::path(KINETIC_SOURCE_DIR) / "tests/golden/examples" / (name + ".txt");
    if (std::getenv("KINETIC_UPDATE_GOLDEN")) {
      fs::create_directories(path.parent_path());
      FILE* f = std::fopen(path.c_str(), "wb");
      std::fwrite(actual.data(), 1, actual.size(), f);
      std::fclose(f);
      return;
    }
    EXPECT_EQ(slurp(path), actual)
        << "differs from " << path << "; rerun with KINETIC_UPDATE_GOLDEN=1 if intended";
  }

  Sandbox sb;
};

TEST_F(Examples, EveryScriptCompiles) {
  std::string files;
  for (const auto& e : fs::recursive_directory_iterator(kExamples))
    if (e.path().extension() == ".py") files += " '" + e.path().string() + "'";
  ASSERT_FALSE(files.empty());
  // compile() only: no __pycache__ written into the repository.
  const std::string cmd =
      "python3 -c 'import sys\nfor f in sys.argv[1:]: compile(open(f).read(), f, \"exec\")'" +
      files + " 2>&1";
  const auto run = command_output(cmd);
  EXPECT_EQ(run.status, 0) << run.out;
}

TEST_F(Examples, GemmaSftDryRunTakesTheKaggleCredentialsAsSecrets) {
  const fs::path dir = copy("gemma-sft");
  gke_context();
  const std::map<std::string, std::string> kaggle = {{"KAGGLE_USERNAME", "someone"},
                                                     {"KAGGLE_KEY", "k4ggle-s3cret"}};
  const std::vector<std::string> args = {
      "run",           "train.py", "--context", "acme", "--accelerator", "v5litepod-8",
      "--capture-env", "KAGGLE_*", "--dry-run", "--",   "--epochs",      "3"};
  auto r = sb.run(args, dir, kaggle);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("gemma-sft", normalized(r.out));
  auto yaml_args = args;
  yaml_args.insert(yaml_args.begin() + 9, {"-o", "yaml"});
  auto yaml = sb.run(yaml_args, dir, kaggle);
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_EQ(yaml.out.find("k4ggle-s3cret"), std::string::npos) << "a credential was printed";
  EXPECT_NE(yaml.out.find("name: KAGGLE_KEY"), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("secretKeyRef"), std::string::npos) << yaml.out;
}

TEST_F(Examples, JaxSmokeDryRunOnAMultiHostSlice) {
  const fs::path dir = copy("jax-smoke");
  gke_context();
  auto r = sb.run(
      {"run", "smoke.py", "--context", "acme", "--accelerator", "v5litepod-16", "--dry-run"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden("jax-smoke", normalized(r.out));
}

TEST_F(Examples, JaxSmokeRunsHereWithTheCpuFallbackWhenJaxIsMissing) {
  const fs::path dir = copy("jax-smoke");
  auto r = sb.run({"run", "smoke.py"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(": ok\n"), std::string::npos) << r.out;
  if (r.out.find("jax is not installed") != std::string::npos) {
    EXPECT_NE(r.out.find("CPU fallback: "), std::string::npos) << r.out;
  }
  const std::string job = job_id_in(r.err);
  EXPECT_NE(slurp(dir / "kinetic-out" / job / "smoke.txt").find("devices="), std::string::npos);
}

}  // namespace
}  // namespace kinetic::test
