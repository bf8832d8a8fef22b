// Wide sweeps (issue #30 point 3): many `run --detach` at once against services that refuse
// writes past a quota all get their jobs submitted, because every write that meets a 429 waits
// its turn (lib/http/retry.cpp) instead of failing the submission.
#include <set>
#include <string>
#include <vector>

#include "gke_fixture.h"

namespace kinetic::test {
namespace {

class GkeSweep : public GkeFixture {};

TEST_F(GkeSweep, ConcurrentDetachedSubmissionsAllSucceedUnderAWriteQuota) {
  constexpr int kSubmissions = 12;
  constexpr double kWritesPerSecond = 3;
  // One run first, unthrottled, builds the image and makes the job's ServiceAccount, as a
  // sweep's earlier runs have; a new file then makes the sweep's context one not uploaded yet.
  auto first = kin({"run", "train.py", "--accelerator", "v5litepod-1", "--detach"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  sb.write("proj/params.txt", "sweep\n");
  cloud_->gcs().set_write_quota(kWritesPerSecond);
  cloud_->kube().set_write_quota(kWritesPerSecond);
  // Each submission's first write reaches the bucket together with the eleven others', however
  // the processes were scheduled: the bucket holds three, so at least nine are refused first.
  cloud_->gcs().gather_next_writes(kSubmissions);

  std::vector<int> pids;
  for (int i = 0; i < kSubmissions; ++i) {
    auto tag = std::to_string(i);
    pids.push_back(sb.spawn({"run", "train.py", "--accelerator", "v5litepod-1", "--detach"}, proj,
                            sb.root() / ("sweep" + tag + ".out"),
                            sb.root() / ("sweep" + tag + ".err"), env()));
  }
  std::set<std::string> ids;
  for (int i = 0; i < kSubmissions; ++i) {
    auto tag = std::to_string(i);
    EXPECT_EQ(Sandbox::wait(pids[i]), 0) << slurp(sb.root() / ("sweep" + tag + ".err"));
    ids.insert(first_line(slurp(sb.root() / ("sweep" + tag + ".out"))));
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kSubmissions));
  EXPECT_GE(cloud_->gcs().request_count("rate_limited"), kSubmissions - 3);
  // The same project twelve times is one context (beside the first run's), uploaded by whichever
  // came first; the others' uploads of it at the same moment were refused by its precondition
  // and found it there.
  EXPECT_EQ(cloud_->gcs().object_names(kGkeBucket, "contexts/").size(), 2u);

  // Every job is there to see.
  auto status = kin({"status", "-o", "name"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  for (const auto& id : ids) EXPECT_NE(status.out.find(id), std::string::npos) << id;
}

}  // namespace
}  // namespace kinetic::test
