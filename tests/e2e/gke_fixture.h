// A fake cloud and `kinetic up` per test, in a fresh sandbox: the set-up of the gke end-to-end
// suites.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "fakes/fake_cloud.h"

namespace kinetic::test {

inline const std::vector<std::string> kGkeUp = {
    "up", "--project", "acme-ml", "--zone", "us-central1-a", "--accelerator", "v5litepod-1"};
inline constexpr const char* kGkeBucket = "acme-ml-kinetic-kinetic";

class GkeFixture : public ::testing::Test {
 protected:
  static void TearDownTestSuite() {
    delete cloud_;
    cloud_ = nullptr;
  }
  // A fresh fake cloud (one test's nodes, auto-down or held exit reports never reach the next
  // when a suite runs in one process), a project with a standard job (train.py: prints its
  // arguments, writes model.txt), then `up`.
  void SetUp() override {
    delete cloud_;
    cloud_ = new fakes::FakeCloud(fakes::FakeCloudOptions{});
    sb.write("proj/train.py",
             "import os, sys\n"
             "print('training', ' '.join(sys.argv[1:]))\n"
             "open(os.path.join(os.environ['KINETIC_OUTPUT_DIR'], 'model.txt'), 'w')"
             ".write('weights\\n')\n");
    auto r = kin(kGkeUp);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Whether job ID's Job is Complete or Failed in the cluster: a run returns once the log has
  // ended, which may come before the kubelet reports the container's exit (the Job is then
  // still active, and what reads the cluster, such as cleanup, sees a live job).
  bool job_finished_in_cluster(const std::string& id) const {
    auto job = cloud_->kube().object("/apis/batch/v1/namespaces/default/jobs/kinetic-" + id);
    if (!job) return false;
    for (const auto& c : (*job)["status"].value("conditions", nlohmann::json::array()))
      if ((c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True") return true;
    return false;
  }

  // The fake cloud's environment, with the waits for a verdict from the cluster at zero.
  std::map<std::string, std::string> env(std::map<std::string, std::string> extra = {}) const {
    auto e = cloud_->client_env();
    e["KINETIC_SCHEDULING_GRACE_SECONDS"] = "0";
    e["KINETIC_FAILED_CREATE_GRACE_SECONDS"] = "0";
    for (auto& [k, v] : extra) e[k] = v;
    return e;
  }
  CliResult kin(const std::vector<std::string>& args,
                const std::map<std::string, std::string>& extra = {}) const {
    return sb.run(args, proj, env(extra));
  }
  int spawn(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) const {
    return sb.spawn(args, proj, out, err, env());
  }
  // Starts `kinetic ARGS` in the background (stdout into `out`, stderr into `err`) and waits
  // until its stdout shows LINE; its pid, or -1 (with a failure recorded) when it never does.
  int spawn_until_output(const std::vector<std::string>& args, const std::string& line,
                         const std::map<std::string, std::string>& extra = {}) const {
    int pid = sb.spawn(args, proj, out, err, env(extra));
    if (!eventually([&] { return slurp(out).find(line) != std::string::npos; })) {
      ADD_FAILURE() << "never printed " << line << ": " << slurp(err);
      return -1;
    }
    return pid;
  }
  // Whether the Kubernetes object at PATH exists.
  bool exists(const std::string& path) const { return cloud_->kube().object(path).has_value(); }

  inline static fakes::FakeCloud* cloud_ = nullptr;
  Sandbox sb;
  fs::path proj = sb.project("proj");
  fs::path out = sb.root() / "run.out", err = sb.root() / "run.err";
};

}  // namespace kinetic::test
