// The project IAM client (gcp/project_iam.h) against FakeGcp's Resource Manager and IAM: the
// custom role made or brought to its permissions, the conditional grant as a read-modify-write
// that survives another writer and a role IAM has not propagated yet, and the revocation that
// touches nothing else. Waits go through an injected sleeper: nothing here sleeps.
#include <gtest/gtest.h>

#include "auth/authed.h"
#include "fakes/fake_gcp.h"
#include "gcp/project_iam.h"
#include "http/retry.h"

using namespace std::chrono_literals;
using nlohmann::json;

namespace kinetic::gcp {
namespace {

constexpr const char* kIamProject = "acme";
constexpr const char* kIamRole = "projects/acme/roles/kineticAutoDown";
const std::string kMember =
    "principal://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/"
    "acme.svc.id.goog/subject/ns/default/sa/kinetic-auto-down-kinetic";

struct IamFixedToken : auth::TokenProvider {
  std::string token() override { return "test-token"; }
  void invalidate() override {}
};

class ProjectIamTest : public ::testing::Test {
 protected:
  static fakes::FakeGcpOptions options() {
    fakes::FakeGcpOptions o;
    o.enabled_services = {"serviceusage.googleapis.com", "cloudresourcemanager.googleapis.com",
                          "iam.googleapis.com"};
    return o;
  }
  PollOptions poll() {
    PollOptions p;
    p.initial = 1000ms;
    p.factor = 2.0;
    p.sleep = [this](std::chrono::milliseconds d) { waits.push_back(d); };
    return p;
  }
  ConditionalGrant grant(const std::string& cluster = "kinetic") const {
    return {
        kIamRole,
        kMember,
        {"kinetic auto-down of " + cluster + " in us-central1-a", "only this cluster",
         "resource.name == \"projects/acme/locations/us-central1-a/clusters/" + cluster + "\""}};
  }
  std::vector<json> bindings_of(const std::string& role) const {
    std::vector<json> out;
    for (const auto& b : fake.project_iam_policy(kIamProject).value("bindings", json::array()))
      if (b.value("role", "") == role) out.push_back(b);
    return out;
  }
  std::string make_role() {
    return client.ensure_custom_role(kIamProject, "kineticAutoDown", "kinetic auto-down", "d",
                                     {"container.clusters.delete"});
  }

  fakes::FakeGcp fake{options()};
  std::vector<std::chrono::milliseconds> waits;
  std::unique_ptr<http::Transport> transport =
      http::retried(auth::authed(http::make_curl_transport(), std::make_shared<IamFixedToken>()),
                    http::RetryPolicy{},
                    http::RetryEnv{[](std::chrono::milliseconds) {}, nullptr, [] { return 0.5; }});
  ProjectIamClient client{*transport, fake.url("cloudresourcemanager"), fake.url("iam"), poll()};
};

TEST_F(ProjectIamTest, TheRoleIsCreatedOnceAndBroughtBackToItsPermissions) {
  EXPECT_EQ(make_role(), "created");
  EXPECT_EQ(make_role(), "exists");
  auto role = fake.custom_role(kIamProject, "kineticAutoDown");
  ASSERT_TRUE(role.has_value());
  EXPECT_EQ((*role)["includedPermissions"], json({"container.clusters.delete"}));
  // Someone widened it: the next ensure narrows it again.
  EXPECT_EQ(client.ensure_custom_role(kIamProject, "kineticAutoDown", "kinetic auto-down", "d",
                                      {"container.clusters.delete", "container.clusters.get"}),
            "updated");
  EXPECT_EQ(make_role(), "updated");
  EXPECT_EQ((*fake.custom_role(kIamProject, "kineticAutoDown"))["includedPermissions"],
            json({"container.clusters.delete"}));
}

TEST_F(ProjectIamTest, AGrantIsOneConditionalBindingKeptAcrossAnotherWriter) {
  make_role();
  // Another writer changes the policy between our read and our write: the write gets 409 and
  // the whole read-modify-write is redone, keeping both changes.
  fake.concurrent_project_iam_change_after_next_get(kIamProject, "roles/viewer",
                                                    "user:bo@acme.com");
  EXPECT_TRUE(client.grant(kIamProject, grant()));
  EXPECT_EQ(fake.pending_faults(), 0);
  auto ours = bindings_of(kIamRole);
  ASSERT_EQ(ours.size(), 1u);
  EXPECT_EQ(ours[0]["members"], json({kMember}));
  EXPECT_EQ(ours[0]["condition"]["expression"],
            "resource.name == \"projects/acme/locations/us-central1-a/clusters/kinetic\"");
  EXPECT_EQ(bindings_of("roles/viewer").size(), 1u) << "the other writer's change was lost";
  EXPECT_EQ(fake.project_iam_policy(kIamProject)["version"], 3);
  // Granting again changes nothing.
  EXPECT_FALSE(client.grant(kIamProject, grant()));
  EXPECT_EQ(bindings_of(kIamRole).size(), 1u);
}

TEST_F(ProjectIamTest, ARoleIamHasNotPropagatedYetIsWaitedOut) {
  make_role();
  fake.unseen_roles_for_next(2);
  EXPECT_TRUE(client.grant(kIamProject, grant()));
  EXPECT_EQ(waits, (std::vector<std::chrono::milliseconds>{1000ms, 2000ms}));
  EXPECT_EQ(bindings_of(kIamRole).size(), 1u);
}

TEST_F(ProjectIamTest, ARoleThatNeverAppearsFailsWithIamsMessage) {
  // Never created: after the waits, the one-line error quotes IAM.
  try {
    client.grant(kIamProject, grant());
    ADD_FAILURE() << "granted a role that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist in the resource's hierarchy"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(waits.empty());
}

TEST_F(ProjectIamTest, RevokingRemovesThisClustersBindingAndNothingElse) {
  make_role();
  ASSERT_TRUE(client.grant(kIamProject, grant("kinetic")));
  ASSERT_TRUE(client.grant(kIamProject, grant("big")));
  EXPECT_TRUE(
      client.revoke(kIamProject, kIamRole, "kinetic auto-down of kinetic in us-central1-a"));
  auto left = bindings_of(kIamRole);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0]["condition"]["title"], "kinetic auto-down of big in us-central1-a");
  EXPECT_EQ(bindings_of("roles/owner").size(), 1u);
  EXPECT_FALSE(
      client.revoke(kIamProject, kIamRole, "kinetic auto-down of kinetic in us-central1-a"));
}

}  // namespace
}  // namespace kinetic::gcp
