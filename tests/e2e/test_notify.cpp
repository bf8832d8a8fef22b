// --notify (issue #13): one JSON summary POSTed to a loopback webhook when a job ends, by the
// runner that sees the verdict: the local runner, the GKE pod's bootstrap (final verdicts only:
// once per run, never per attempt), and kinetic itself for a cancel. The URL is a secret: never
// in the job's environment, its spec, `ps` or `config view`; a hook that fails is a warning.
#include <gtest/gtest.h>

#include <httplib.h>

#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_harness.h"
#include "gke_fixture.h"

namespace kinetic::test {
namespace {

using nlohmann::json;

// A webhook on 127.0.0.1: records each POST; answers the scripted statuses in turn, then 200.
class HookReceiver {
 public:
  HookReceiver() {
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      posts_.push_back({req.path, req.body, req.get_header_value("Content-Type")});
      int status = 200;
      if (!script_.empty()) {
        status = script_.front();
        script_.pop_front();
      }
      res.status = status;
      // A redirect points at this same hook, over plain http: following it would be a second
      // request, which the receiver records.
      if (status / 100 == 3)
        res.set_header("Location", "http://127.0.0.1:" + std::to_string(port_) + "/redirected");
      res.set_content("{}", "application/json");
    });
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      posts_.push_back({req.path, req.body, "GET"});
      res.status = 200;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    // Bound and listening already: a POST before the accept loop starts waits in the backlog.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~HookReceiver() {
    server_.stop();
    thread_.join();
  }
  // A URL whose path is the hook's secret, as a chat webhook's is.
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + kPath; }
  void answer(std::initializer_list<int> statuses) {
    std::lock_guard lock(mu_);
    script_.insert(script_.end(), statuses);
  }
  struct Post {
    std::string path, body, content_type;
  };
  std::vector<Post> posts() const {
    std::lock_guard lock(mu_);
    return posts_;
  }
  // The only payload received, once one has arrived (a failure is recorded otherwise).
  json payload() const {
    if (!eventually([&] { return !posts().empty(); })) {
      ADD_FAILURE() << "the hook got nothing";
      return json();
    }
    auto p = posts();
    EXPECT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].path, kPath);
    EXPECT_EQ(p[0].content_type, "application/json");
    return json::parse(p[0].body);
  }
  static constexpr const char* kPath = "/hooks/T0/s3cr3t-token";

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<Post> posts_;
  std::deque<int> script_;
};

class NotifyLocal : public ::testing::Test {
 protected:
  Sandbox sb;
  fs::path proj = sb.project("proj");
  HookReceiver hook;
};

TEST_F(NotifyLocal, AFailureIsPostedWithItsCauseAndTheUrlStaysSecret) {
  sb.write("proj/boom.py",
           "import os\n"
           "print('notify in env:', 'KINETIC_NOTIFY' in os.environ, flush=True)\n"
           "raise ValueError('boom')\n");
  auto r = sb.run({"run", "boom.py", "--notify", hook.url()}, proj);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("notify in env: False"), std::string::npos) << r.out;
  const std::string id = job_id_in(r.err);
  json p = hook.payload();
  EXPECT_EQ(p["job"], id);
  EXPECT_EQ(p["state"], "failed");
  EXPECT_EQ(p["exit_code"], 1);
  EXPECT_EQ(p["error"], "ValueError: boom");
  EXPECT_EQ(p["backend"], "local");
  EXPECT_EQ(p["attempts"], 1);
  EXPECT_TRUE(p["cost_usd"].is_null()) << "the local backend costs nothing kinetic knows of";
  EXPECT_EQ(p["outputs"], (proj / "kinetic-out" / id).string() + "/");
  EXPECT_EQ(p["text"].get<std::string>().rfind("kinetic: " + id + " failed (exit 1) after ", 0), 0u)
      << p["text"];
  const std::string spec = slurp(sb.state() / "jobs" / id / "spec.json");
  ASSERT_FALSE(spec.empty());
  EXPECT_EQ(spec.find("s3cr3t"), std::string::npos) << spec;
  EXPECT_EQ(r.err.find("s3cr3t"), std::string::npos) << r.err;
}

TEST_F(NotifyLocal, AHookThatKeepsFailingIsAWarningNotTheJobsExitCode) {
  sb.write("proj/ok.py", "print('fine')\n");
  hook.answer({500, 500, 500, 500});
  auto r = sb.run({"run", "ok.py", "--notify", hook.url()}, proj);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hook.posts().size(), 4u) << "tried, then retried three times";
  const std::string shown = "could not notify http://127.0.0.1:";
  EXPECT_NE((r.out + r.err).find(shown), std::string::npos) << r.out << r.err;
  EXPECT_EQ((r.out + r.err).find("s3cr3t"), std::string::npos) << r.out << r.err;
}

TEST_F(NotifyLocal, ARedirectIsAFailedNotifyNotFollowed) {
  sb.write("proj/ok.py", "print('fine')\n");
  hook.answer({302});
  auto r = sb.run({"run", "ok.py", "--notify", hook.url()}, proj);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hook.posts().size(), 1u);
  EXPECT_NE(r.err.find("HTTP 302"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find("s3cr3t"), std::string::npos) << r.out << r.err;
}

TEST_F(NotifyLocal, ARetriedHookGetsTheSummaryOnce) {
  sb.write("proj/ok.py", "print('fine')\n");
  hook.answer({503});
  auto r = sb.run({"run", "ok.py", "--notify", hook.url()}, proj);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto posts = hook.posts();
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[0].body, posts[1].body);
  EXPECT_EQ(json::parse(posts[1].body)["state"], "succeeded");
  EXPECT_EQ((r.out + r.err).find("could not notify"), std::string::npos) << r.err;
}

TEST_F(NotifyLocal, TheContextSettingNotifiesEveryRunAndIsShownRedacted) {
  sb.write("proj/ok.py", "print('fine')\n");
  auto set = sb.run({"config", "set", "notify", hook.url()}, proj);
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.err.find("s3cr3t"), std::string::npos) << "said as it was set: " << set.err;
  auto bad = sb.run({"config", "set", "notify", "http://example.com/hooks/s3cr3t"}, proj);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.err.find("s3cr3t"), std::string::npos) << bad.err;
  auto view = sb.run({"config", "view"}, proj);
  EXPECT_EQ(view.exit_code, 0) << view.err;
  EXPECT_NE(view.out.find("http://127.0.0.1:"), std::string::npos) << view.out;
  EXPECT_EQ(view.out.find("s3cr3t"), std::string::npos) << view.out;
  auto r = sb.run({"run", "ok.py"}, proj);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hook.payload()["state"], "succeeded");
}

TEST_F(NotifyLocal, ACancelledJobIsPosted) {
  sb.write("proj/wait.py", "import time\nprint('up', flush=True)\ntime.sleep(120)\n");
  auto d = sb.run({"run", "wait.py", "--detach", "--notify", hook.url()}, proj);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string id = first_line(d.out);
  auto c = sb.run({"cancel", id}, proj);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  json p = hook.payload();
  EXPECT_EQ(p["job"], id);
  EXPECT_EQ(p["state"], "cancelled");
}

TEST_F(NotifyLocal, AUrlThatIsNotHttpsIsRefusedBeforeAnythingRuns) {
  sb.write("proj/ok.py", "print('fine')\n");
  auto r = sb.run({"run", "ok.py", "--notify", "http://hooks.example.com/T0/s3cr3t"}, proj);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("use https"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("s3cr3t"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(sb.state() / "jobs")) << "nothing was submitted";
}

class NotifyGke : public GkeFixture {
 protected:
  HookReceiver hook;
};

TEST_F(NotifyGke, ThePodPostsTheVerdictWithItsCost) {
  // The job's parent is the bootstrap (PID 1 in a real pod): what it started with shows in its
  // /proc/PID/environ to the job, which must not find the URL there (issue #28 point 9).
  sb.write("proj/check.py",
           "import os\nprint('notify in env:', 'KINETIC_NOTIFY' in os.environ, flush=True)\n"
           "initial = open('/proc/%d/environ' % os.getppid(), 'rb').read()\n"
           "print('secret in initial env:', b's3cr3t' in initial, flush=True)\n");
  auto r = kin({"run", "check.py", "--accelerator", "v5litepod-1", "--notify", hook.url()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("notify in env: False"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("secret in initial env: False"), std::string::npos) << r.out;
  const std::string id = job_id_in(r.err);
  json p = hook.payload();
  EXPECT_EQ(p["job"], id);
  EXPECT_EQ(p["state"], "succeeded");
  EXPECT_EQ(p["exit_code"], 0);
  EXPECT_EQ(p["backend"], "gke");
  EXPECT_EQ(p["accelerator"], "v5litepod-1");
  EXPECT_TRUE(p["cost_usd"].is_number()) << p;
  EXPECT_EQ(p["outputs"], std::string("gs://") + kGkeBucket + "/jobs/" + id + "/results/");
  const auto spec = cloud_->gcs().object_data(kGkeBucket, "jobs/" + id + "/spec.json");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->find("s3cr3t"), std::string::npos) << *spec;
}

// A hook's redirect is a failed notify, never followed: the summary would go wherever the
// answer points, https to http included (issue #28 point 9).
TEST_F(NotifyGke, ARedirectIsAFailedNotifyNotFollowed) {
  sb.write("proj/ok.py", "print('fine')\n");
  hook.answer({302});
  auto r = kin({"run", "ok.py", "--accelerator", "v5litepod-1", "--notify", hook.url()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto posts = hook.posts();
  ASSERT_EQ(posts.size(), 1u) << "followed to " << posts.back().path;
  EXPECT_EQ(posts[0].path, HookReceiver::kPath);
  const std::string shown = "could not notify http://127.0.0.1:";
  EXPECT_NE((r.out + r.err).find(shown), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("HTTP 302"), std::string::npos) << r.out << r.err;
  EXPECT_EQ((r.out + r.err).find("s3cr3t"), std::string::npos) << r.out << r.err;
}

TEST_F(NotifyGke, ARetriedFailureIsPostedOnceAtTheEnd) {
  sb.write("proj/flaky.py", "import sys\nprint('trying', flush=True)\nsys.exit(4)\n");
  auto r = kin({"run", "flaky.py", "--accelerator", "v5litepod-1", "--retries", "1", "--notify",
                hook.url()});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  json p = hook.payload();
  EXPECT_EQ(p["state"], "failed");
  EXPECT_EQ(p["exit_code"], 4);
  EXPECT_EQ(p["attempts"], 2);
}

TEST_F(NotifyGke, ATimeoutIsPostedByThePod) {
  sb.write("proj/slow.py", "import time\nprint('started', flush=True)\ntime.sleep(120)\n");
  auto r = kin({"run", "slow.py", "--accelerator", "v5litepod-1", "--timeout", "1s", "--notify",
                hook.url()});
  EXPECT_EQ(r.exit_code, 124) << r.err;
  json p = hook.payload();
  EXPECT_EQ(p["state"], "timeout");
  EXPECT_EQ(p["exit_code"], 124);
  EXPECT_EQ(p["error"], "timed out after 1s (--timeout)");
}

TEST_F(NotifyGke, ACancelIsPostedByKineticFromTheJobsSecret) {
  sb.write("proj/loop.py", "import time\nprint('up', flush=True)\ntime.sleep(120)\n");
  auto d =
      kin({"run", "loop.py", "--accelerator", "v5litepod-1", "--detach", "--notify", hook.url()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string id = first_line(d.out);
  // `cancel` is another process: the URL comes from the job's Secret, read before it goes.
  auto c = kin({"cancel", id});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  json p = hook.payload();
  EXPECT_EQ(p["job"], id);
  EXPECT_EQ(p["state"], "cancelled");
  EXPECT_TRUE(cloud_->kube().wait_idle(30000));  // the pod has ended
  EXPECT_EQ(hook.posts().size(), 1u) << "the pod, stopped by a SIGTERM, does not post";
}

}  // namespace
}  // namespace kinetic::test
