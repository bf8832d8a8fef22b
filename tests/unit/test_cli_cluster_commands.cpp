// `up`, `down`, `pool`, `config` and `status` in-process, as gh tests every command: the Factory
// hands them a recording Cluster (backend/cluster.h), and each case asserts what reached the
// cluster, what the command printed and its exit code, for good input, bad input and a cluster
// that fails. The GKE side of the same commands runs against the fakes in tests/e2e.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app.h"
#include "config/config_file.h"
#include "config/paths.h"
#include "core/error.h"
#include "unit/cli_sandbox.h"
#include "unit/memory_streams.h"

namespace kinetic::cli {
namespace {

// What the commands asked of the cluster, and what it answers: each call is recorded by name,
// its arguments kept, and FAIL makes the named call throw.
struct ClusterScript {
  std::vector<std::string> calls;
  UpOptions up;
  DownOptions down;
  Accelerator pool_accelerator;
  PoolOptions pool;
  std::string jobset_manifests;
  std::string removed;

  std::vector<ClusterChange> changes;
  std::vector<PoolRow> pools;
  std::optional<ClusterDescription> description;
  std::string fail;  // the call that throws
  Error failure{Errc::api, "GKE said no"};
};

class RecordingCluster : public Cluster {
 public:
  explicit RecordingCluster(ClusterScript& script) : s_(script) {}
  ClusterPlace place() const override {
    return {"acme-ml", "us-central1-a", "us-central1", "kinetic", "acme-ml"};
  }
  std::vector<ClusterChange> up(const UpOptions& options) override {
    called("up");
    s_.up = options;
    return s_.changes;
  }
  std::vector<ClusterChange> down(const DownOptions& options) override {
    called("down");
    s_.down = options;
    return s_.changes;
  }
  std::vector<ClusterChange> add_pool(const Accelerator& accelerator, const PoolOptions& options,
                                      const std::string& jobset_manifests) override {
    called("add_pool");
    s_.pool_accelerator = accelerator;
    s_.pool = options;
    s_.jobset_manifests = jobset_manifests;
    return s_.changes;
  }
  ClusterChange remove_pool(const std::string& name) override {
    called("remove_pool");
    s_.removed = name;
    return {"node pool", name, "deleted"};
  }
  std::vector<PoolRow> pools() override {
    called("pools");
    return s_.pools;
  }
  std::optional<ClusterDescription> describe() override {
    called("describe");
    return s_.description;
  }

 private:
  void called(const std::string& what) {
    s_.calls.push_back(what);
    if (s_.fail == what) throw s_.failure;
  }
  ClusterScript& s_;
};

PoolRow pool_row(const std::string& name, const std::string& accelerator,
                 const std::string& machine_type, int nodes) {
  PoolRow row;
  row.pool.name = name;
  row.pool.machine_type = machine_type;
  row.pool.status = "RUNNING";
  row.pool.min_nodes = 0;
  row.pool.max_nodes = 4;
  row.accelerator = accelerator;
  row.nodes = nodes;
  return row;
}

struct Ran {
  int code;
  std::string out;
  std::string err;
};

class ClusterCommands : public ::testing::Test {
 protected:
  Ran run(const std::vector<std::string>& args, bool with_cluster = true) {
    test::CapturedIO captured;
    Factory f(sandbox_.env(), captured.io);
    if (with_cluster) f.use_cluster(std::make_unique<RecordingCluster>(script_));
    const int code = sandbox_.run(f, args);
    return {code, captured.out(), captured.err()};
  }
  bool wrote_config() const { return fs::exists(config_file_path(sandbox_.env())); }
  ConfigFile config() const { return ConfigFile::load(config_file_path(sandbox_.env())); }
  static bool has(const std::string& text, const std::string& piece) {
    return text.find(piece) != std::string::npos;
  }

  test::CliSandbox sandbox_{"kinetic-cli-cluster-"};
  ClusterScript script_;
};

// --- up

TEST_F(ClusterCommands, UpPassesEveryFlagToTheClusterAndRecordsTheContext) {
  script_.changes = {{"cluster", "kinetic", "created"}, {"node pool", "v5litepod-4", "created"}};
  script_.pools = {pool_row("default", "", "e2-standard-4", 1)};
  const Ran r = run({"up", "-a", "v5litepod-4", "--spot", "--min-nodes", "1", "--max-nodes", "2",
                     "--release-channel", "stable", "--machine-type", "n2-standard-4",
                     "--jobset-manifests", "js.yaml", "--auto-down", "2h"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(script_.calls, (std::vector<std::string>{"up", "pools"}));
  ASSERT_EQ(script_.up.accelerators.size(), 1u);
  EXPECT_EQ(script_.up.accelerators[0].name, "v5litepod-4");
  EXPECT_TRUE(script_.up.pool.spot);
  EXPECT_EQ(script_.up.pool.min_nodes, 1);
  EXPECT_EQ(script_.up.pool.max_nodes, 2);
  EXPECT_EQ(script_.up.release_channel, "STABLE");
  EXPECT_EQ(script_.up.default_machine_type, "n2-standard-4");
  EXPECT_EQ(script_.up.jobset_manifests, "js.yaml");  // as given: the cluster resolves it
  EXPECT_EQ(script_.up.auto_down, 7200);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(has(r.err, "kinetic up: project acme-ml, us-central1-a, cluster kinetic\n")) << r.err;
  EXPECT_TRUE(has(r.err, "the cluster costs $0.23/h (the control plane and 1 node)")) << r.err;
  EXPECT_TRUE(has(r.err, "kinetic up: ready; context acme-ml is current")) << r.err;
  const ConfigFile cfg = config();
  EXPECT_EQ(cfg.current_context(), "acme-ml");
  const Context* ctx = cfg.find("acme-ml");
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ctx->backend, "gke");
  EXPECT_EQ(ctx->project, "acme-ml");
  EXPECT_EQ(ctx->zone, "us-central1-a");
  EXPECT_EQ(ctx->region, "");
  EXPECT_EQ(ctx->cluster, "kinetic");
  EXPECT_EQ(ctx->auto_down, "2h");
}

TEST_F(ClusterCommands, UpWithoutAutoDownLeavesItAsItIsAndSaysWhenEverythingExisted) {
  script_.changes = {{"cluster", "kinetic", "exists"}};
  const Ran r = run({"up", "--context-name", "lab"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(script_.up.auto_down.has_value());
  EXPECT_TRUE(script_.up.accelerators.empty());
  EXPECT_EQ(script_.up.release_channel, "REGULAR");
  EXPECT_TRUE(has(r.err, "kinetic up: everything already existed; context lab is current"))
      << r.err;
  EXPECT_EQ(config().current_context(), "lab");
}

TEST_F(ClusterCommands, UpTakesTheAutoDownOfTheContext) {
  ASSERT_EQ(run({"config", "set", "contexts.local.auto-down", "3h"}).code, 0);
  ASSERT_EQ(run({"up"}).code, 0);
  EXPECT_EQ(script_.up.auto_down, 3 * 3600);
}

TEST_F(ClusterCommands, UpRefusesBadFlagsBeforeTheClusterIsAsked) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"up", "--auto-down", "5m"},
           {"up", "-a", "h100x9"},
           {"up", "-a", "v5litepod-4", "--min-nodes", "3", "--max-nodes", "1"}}) {
    const Ran r = run(args);
    EXPECT_EQ(r.code, 2) << args.back() << ": " << r.err;
    EXPECT_TRUE(has(r.err, "error: ")) << r.err;
  }
  EXPECT_TRUE(script_.calls.empty()) << script_.calls.front();
  EXPECT_FALSE(wrote_config());
}

TEST_F(ClusterCommands, UpThatFailsRecordsNoContext) {
  script_.fail = "up";
  const Ran r = run({"up"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.err, "error: GKE said no\n")) << r.err;
  EXPECT_FALSE(wrote_config());
}

TEST_F(ClusterCommands, UpGoesOnWithoutTheCostWhenThePoolsCannotBeRead) {
  script_.fail = "pools";
  const Ran r = run({"up"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has(r.err, "costs")) << r.err;
  EXPECT_EQ(config().current_context(), "acme-ml");
}

// --- down

TEST_F(ClusterCommands, DownPassesWhatToKeepAndCountsWhatWent) {
  script_.pools = {pool_row("default", "", "e2-standard-4", 1)};
  script_.changes = {{"cluster", "kinetic (with its node pools)", "deleted"},
                     {"repository", "r", "kept"},
                     {"bucket", "gs://b", "deleted"}};
  const Ran r = run({"down", "--yes", "--keep-images"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(script_.calls, (std::vector<std::string>{"pools", "down"}));
  EXPECT_TRUE(script_.down.keep_images);
  EXPECT_FALSE(script_.down.keep_bucket);
  EXPECT_EQ(r.err,
            "kinetic down: deleted 2 resources; $0.23/h (the control plane and 1 node) stops\n");
}

TEST_F(ClusterCommands, DownOfNothingSucceedsAndSaysSo) {
  script_.fail = "pools";
  script_.failure = Error(Errc::not_found, "no cluster");
  const Ran r = run({"down", "--yes", "--keep-bucket"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(script_.down.keep_bucket);
  EXPECT_EQ(r.err, "kinetic down: nothing to delete in project acme-ml\n");
}

TEST_F(ClusterCommands, DownWithoutYesOffATerminalAsksNothingOfTheCluster) {
  if (::isatty(0) == 1) GTEST_SKIP() << "down asks for confirmation on a terminal";
  const Ran r = run({"down"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "pass --yes")) << r.err;
  EXPECT_TRUE(script_.calls.empty());
}

TEST_F(ClusterCommands, DownThatFailsIsAnError) {
  script_.fail = "down";
  const Ran r = run({"down", "--yes"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: GKE said no\n");
}

// --- pool

TEST_F(ClusterCommands, PoolAddPassesTheAcceleratorAndItsOptions) {
  const Ran r = run({"pool", "add", "-a", "v5litepod-16", "--spot", "--reservation", "res-1",
                     "--min-nodes", "0", "--max-nodes", "4", "--jobset-manifests", "js.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(script_.calls, std::vector<std::string>{"add_pool"});
  EXPECT_EQ(script_.pool_accelerator.name, "v5litepod-16");
  EXPECT_GT(script_.pool_accelerator.hosts, 1);  // a slice: the cluster brings JobSet
  EXPECT_TRUE(script_.pool.spot);
  EXPECT_EQ(script_.pool.reservation, "res-1");
  EXPECT_EQ(script_.pool.max_nodes, 4);
  EXPECT_EQ(script_.jobset_manifests, "js.yaml");
}

TEST_F(ClusterCommands, PoolAddRefusesAnImpossibleSizeBeforeTheClusterIsAsked) {
  const Ran r = run({"pool", "add", "-a", "l4", "--min-nodes", "5", "--max-nodes", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "--min-nodes")) << r.err;
  EXPECT_TRUE(script_.calls.empty());
}

TEST_F(ClusterCommands, PoolRemovePassesTheNameAndFailsWithTheCluster) {
  ASSERT_EQ(run({"pool", "remove", "l4-spot"}).code, 0);
  EXPECT_EQ(script_.removed, "l4-spot");
  script_.fail = "remove_pool";
  script_.failure = Error(Errc::not_found, "no node pool 'l5'");
  const Ran r = run({"pool", "remove", "l5"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: no node pool 'l5'\n");
}

TEST_F(ClusterCommands, PoolListPrintsThePoolsInEachFormat) {
  script_.pools = {pool_row("default", "", "e2-standard-4", 1),
                   pool_row("v5litepod-4", "v5litepod-4", "ct5lp-hightpu-4t", 0)};
  Ran r = run({"pool", "list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "NAME")) << r.out;
  EXPECT_TRUE(has(r.out, "v5litepod-4")) << r.out;
  EXPECT_TRUE(has(r.out, "0-4")) << r.out;

  r = run({"pool", "list", "-o", "name"});
  EXPECT_EQ(r.out, "default\nv5litepod-4\n");

  r = run({"pool", "list", "-o", "json"});
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["kind"], "PoolList");
  EXPECT_EQ(doc["cluster"], "kinetic");
  ASSERT_EQ(doc["pools"].size(), 2u);
  EXPECT_EQ(doc["pools"][0]["accelerator"], "cpu");
  EXPECT_EQ(doc["pools"][1]["machine_type"], "ct5lp-hightpu-4t");
}

TEST_F(ClusterCommands, PoolListFailsWithTheCluster) {
  script_.fail = "pools";
  const Ran r = run({"pool", "list"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: GKE said no\n");
}

// The local context's cluster (backend/local/local_cluster.h): there is none to manage.
TEST_F(ClusterCommands, PoolOnALocalContextSaysHowToGetACluster) {
  const Ran r = run({"pool", "list"}, /*with_cluster=*/false);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "error: `kinetic pool list` works on a gke context; context 'local' is local (create "
            "one with `kinetic up`)\n");
}

// --- config (the cluster's settings: auto-down)

TEST_F(ClusterCommands, ConfigSetAutoDownIsCheckedSavedAndShown) {
  Ran r = run({"config", "set", "auto-down", "5m"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "auto-down 5m is too short")) << r.err;
  EXPECT_FALSE(wrote_config());

  r = run({"config", "set", "auto-down", "2h"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "set auto-down = 2h on context \"local\"\n");

  r = run({"config", "view", "-o", "json"});
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["resolved"]["auto-down"]["value"], "2h");
  EXPECT_EQ(doc["resolved"]["auto-down"]["source"], "context local");
  EXPECT_TRUE(script_.calls.empty());  // config never asks the cluster
}

TEST_F(ClusterCommands, ConfigUseContextSwitchesToTheContextUpRecorded) {
  ASSERT_EQ(run({"up"}).code, 0);
  ASSERT_EQ(run({"config", "use-context", "local"}).code, 0);
  const Ran r = run({"config", "get-contexts", "-o", "json"});
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["contexts"].size(), 2u) << r.out;
  for (const auto& c : doc["contexts"]) EXPECT_EQ(c["current"], c["name"] == "local") << c;
}

// --- status

TEST_F(ClusterCommands, StatusShowsTheClusterItsCostAndTheIdleReminder) {
  ClusterDescription d{"kinetic", "us-central1-a", {pool_row("default", "", "e2-standard-4", 1)}};
  script_.description = d;
  const Ran r = run({"status"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(script_.calls, std::vector<std::string>{"describe"});
  EXPECT_TRUE(has(r.out, "POOL")) << r.out;
  EXPECT_TRUE(has(r.out, "default")) << r.out;
  EXPECT_TRUE(has(r.err,
                  "cluster kinetic (us-central1-a): costs $0.23/h (the control plane and "
                  "1 node) now\n"))
      << r.err;
  EXPECT_TRUE(has(r.err, "no job is pending or running, and cluster kinetic still costs")) << r.err;
  EXPECT_TRUE(has(r.err, "`kinetic up --auto-down 2h`")) << r.err;
}

TEST_F(ClusterCommands, StatusJsonCarriesTheClusterAndItsAutoDown) {
  ClusterDescription d{"kinetic", "us-central1-a", {pool_row("default", "", "e2-standard-4", 2)}};
  d.auto_down = AutoDownState{.idle_seconds = 7200, .state = "active"};
  script_.description = d;
  const Ran r = run({"status", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["kind"], "JobList");
  EXPECT_EQ(doc["cluster"]["name"], "kinetic");
  EXPECT_EQ(doc["cluster"]["exists"], true);
  EXPECT_EQ(doc["cluster"]["pools"][0]["nodes"], 2);
  EXPECT_EQ(doc["cluster"]["auto_down"]["state"], "active");
  EXPECT_EQ(doc["cluster"]["auto_down"]["idle_after_seconds"], 7200);
  EXPECT_EQ(doc["jobs"], nlohmann::json::array());
  EXPECT_EQ(r.err, "");
}

TEST_F(ClusterCommands, StatusOfAClusterThatIsGoneSaysHowToMakeItAgain) {
  ClusterDescription d{"kinetic", "us-central1-a"};
  d.missing = true;
  script_.description = d;
  const Ran r = run({"status"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has(r.out, "POOL")) << r.out;
  EXPECT_TRUE(has(r.err,
                  "cluster kinetic (us-central1-a): not found (deleted by its auto-down or "
                  "by `kinetic down`)"))
      << r.err;
  EXPECT_FALSE(has(r.err, "still costs")) << r.err;
}

TEST_F(ClusterCommands, StatusFailsWithTheCluster) {
  script_.fail = "describe";
  const Ran r = run({"status"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: GKE said no\n");
}

TEST_F(ClusterCommands, StatusAsksNoClusterForJobIdsOrAJob) {
  EXPECT_EQ(run({"status", "-o", "name"}).code, 0);
  EXPECT_EQ(run({"status", "job-1a2b3c4d"}).code, 1);  // no such job
  EXPECT_TRUE(script_.calls.empty()) << script_.calls.front();
}

TEST_F(ClusterCommands, StatusOnALocalContextHasNoCluster) {
  const Ran r = run({"status"}, /*with_cluster=*/false);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "context local (backend local): 0 jobs\n");
}

}  // namespace
}  // namespace kinetic::cli
