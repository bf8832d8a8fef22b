// `run --debug` on a gke context (issue #31 point 2): the pod's bootstrap starts the job's Python
// under the debug launcher (staged beside the spec, checked by its sha256), kinetic forwards a
// local port to it through the API server's pods/portforward, and the job runs only once a
// debugger attached. On a slice, host 0 waits for the debugger and the other hosts for host 0.
#include <gtest/gtest.h>

#include "debug_job.h"
#include "gke_fixture.h"

namespace kinetic::test {
namespace {

class GkeDebug : public GkeFixture {
 protected:
  void SetUp() override {
    GkeFixture::SetUp();
    sb.write("proj/debugpy/__init__.py", debugpy_standin());
    sb.write("proj/debugged.py", debug_job_script());
  }
  int forwards() const {
    return cloud_->kube().request_counts()["GET /api/v1/namespaces/{ns}/pods/{name}/portforward"];
  }

  int port = unused_loopback_port();
  const std::string nonce = "nonce-" + std::to_string(::getpid());
};

TEST_F(GkeDebug, TheJobRunsOnlyOnceADebuggerAttachedThroughThePodsForward) {
  const int pid =
      spawn({"run", "debugged.py", "--debug", "--debug-port", std::to_string(port)}, out, err);
  const nlohmann::json launch = launch_when_listening(err, port);
  ASSERT_TRUE(launch.is_object()) << slurp(err);
  const std::string id = launch["name"].get<std::string>().substr(9);
  EXPECT_EQ(launch["pathMappings"][0]["localRoot"], proj.string());
  EXPECT_EQ(launch["pathMappings"][0]["remoteRoot"], "/tmp/kinetic-debug/" + id);
  EXPECT_EQ(slurp(out).find("job body ran"), std::string::npos);
  const int before = forwards();
  EXPECT_EQ(dap_attach(launch["connect"]["port"].get<int>(), nonce), "");
  EXPECT_EQ(forwards(), before + 1);  // the client's connection was one pods/portforward
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  EXPECT_NE(slurp(out).find("job body ran, attached with " + nonce + " from /tmp/kinetic-debug/" +
                            id + "/debugged.py"),
            std::string::npos)
      << slurp(out) << slurp(err);
  // The launcher travelled beside the spec.
  EXPECT_TRUE(
      cloud_->gcs().object_data(kGkeBucket, "jobs/" + id + "/debug_launcher.py").has_value());
}

TEST_F(GkeDebug, OnASliceHostZeroWaitsForTheDebuggerAndTheOtherHostsForHostZero) {
  auto r = kin({"pool", "add", "--accelerator", "v5litepod-16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  sb.write("proj/slice.py",
           "import os, debugpy\n"
           "print('job body ran on host', os.environ.get('TPU_WORKER_ID'), 'attached with',\n"
           "      debugpy.attach_arguments.get('kineticNonce'), flush=True)\n");
  const int pid = spawn({"run", "slice.py", "-a", "v5litepod-16", "--all-hosts", "--debug",
                         "--debug-port", std::to_string(port)},
                        out, err);
  const nlohmann::json launch = launch_when_listening(err, port);
  ASSERT_TRUE(launch.is_object()) << slurp(err);
  // Hosts 1-3 wait for host 0, which waits for the debugger: nobody has run the job's code.
  ASSERT_TRUE(eventually([&] {
    const std::string text = slurp(err);
    int waiting = 0;
    for (size_t at = text.find("waiting for host 0's debugger"); at != std::string::npos;
         at = text.find("waiting for host 0's debugger", at + 1))
      ++waiting;
    return waiting == 3;
  })) << slurp(err);
  EXPECT_EQ(slurp(out).find("job body ran"), std::string::npos);
  EXPECT_EQ(dap_attach(launch["connect"]["port"].get<int>(), nonce), "");
  EXPECT_EQ(Sandbox::wait(pid), 0) << slurp(err);
  const std::string log = slurp(out);
  EXPECT_NE(log.find("job body ran on host 0 attached with " + nonce), std::string::npos) << log;
  for (const char* host : {"1", "2", "3"})
    EXPECT_NE(log.find(std::string("job body ran on host ") + host + " attached with None"),
              std::string::npos)
        << log;
}

}  // namespace
}  // namespace kinetic::test
