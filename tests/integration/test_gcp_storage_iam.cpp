// Bucket IAM through kinetic's GCS client against the fake GCS: the default policy of a new
// bucket, an idempotent grant to a Workload Identity Federation principal, a grant racing a
// concurrent change (412 on a stale etag, redone on a fresh read), and a missing bucket.
#include <gtest/gtest.h>

#include <algorithm>

#include "fakes/fake_gcs.h"
#include "gcp/storage.h"
#include "http/retry.h"

namespace kinetic::gcp {
namespace {

constexpr const char* kStorageRole = "roles/storage.objectUser";

class StorageIamTest : public ::testing::Test {
 protected:
  fakes::FakeGcs fake;
  std::unique_ptr<http::Transport> transport =
      http::retried(http::make_curl_transport(), http::RetryPolicy{},
                    http::RetryEnv{[](std::chrono::milliseconds) {}, nullptr, [] { return 0.5; }});
  StorageClient client{*transport, fake.url()};

  // A Workload Identity Federation principal (a KSA default/default), as `kinetic up` grants one.
  static std::string ksa_principal(const std::string& number, const std::string& project) {
    return "principal://iam.googleapis.com/projects/" + number +
           "/locations/global/workloadIdentityPools/" + project +
           ".svc.id.goog/subject/ns/default/sa/default";
  }

  static std::vector<std::string> members_of(const nlohmann::json& policy,
                                             const std::string& role) {
    std::vector<std::string> out;
    for (const auto& b : policy["bindings"])
      if (b["role"] == role && !b.contains("condition"))
        for (const auto& m : b["members"]) out.push_back(m.get<std::string>());
    return out;
  }
  static bool has(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }
};

TEST_F(StorageIamTest, BucketsCarryTheirProjectNumber) {
  auto created =
      client.ensure_bucket("acme", "acme-kinetic-k", "US-CENTRAL1", {{7, false, {"jobs/"}}});
  ASSERT_FALSE(created.project_number.empty());
  EXPECT_TRUE(std::all_of(created.project_number.begin(), created.project_number.end(),
                          [](unsigned char c) { return std::isdigit(c); }))
      << created.project_number;
  auto read = client.get_bucket("acme-kinetic-k");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->project_number, created.project_number);
  EXPECT_EQ(client.ensure_bucket("acme", "acme-kinetic-k", "US-CENTRAL1", {}).project_number,
            created.project_number);
  // Deterministic per project; a numeric project stays as it is.
  fake.create_bucket("other", "acme");
  EXPECT_EQ(client.get_bucket("other")->project_number, created.project_number);
  fake.create_bucket("numbered", "987654321098");
  EXPECT_EQ(client.get_bucket("numbered")->project_number, "987654321098");
  fake.create_bucket("elsewhere", "globex");
  EXPECT_NE(client.get_bucket("elsewhere")->project_number, created.project_number);
}

TEST_F(StorageIamTest, ANewBucketHasGcsDefaultPolicy) {
  client.ensure_bucket("acme", "b", "US", {{7, false, {"jobs/"}}});  // uniform bucket-level access
  auto p = client.get_bucket_iam_policy("b");
  EXPECT_EQ(p["kind"], "storage#policy");
  EXPECT_EQ(p["resourceId"], "projects/_/buckets/b");
  EXPECT_EQ(p["version"], 1);
  EXPECT_EQ(p["etag"], "CAE=");
  EXPECT_EQ(members_of(p, "roles/storage.legacyBucketOwner"),
            (std::vector<std::string>{"projectEditor:acme", "projectOwner:acme"}));
  EXPECT_EQ(members_of(p, "roles/storage.legacyBucketReader"),
            (std::vector<std::string>{"projectViewer:acme"}));
  EXPECT_EQ(members_of(p, "roles/storage.legacyObjectOwner"),
            (std::vector<std::string>{"projectEditor:acme", "projectOwner:acme"}));
  EXPECT_EQ(members_of(p, "roles/storage.legacyObjectReader"),
            (std::vector<std::string>{"projectViewer:acme"}));
  EXPECT_EQ(fake.request_count("buckets.getIamPolicy"), 1);
  EXPECT_EQ(p, *fake.bucket_iam_policy("b"));
}

TEST_F(StorageIamTest, GrantingIsIdempotent) {
  auto bucket = client.ensure_bucket("acme", "b", "US", {{7, false, {"jobs/"}}});
  const auto member = ksa_principal(bucket.project_number, "acme");
  fake.reset_counters();

  EXPECT_TRUE(client.add_bucket_iam_member("b", kStorageRole, member));
  EXPECT_EQ(fake.request_count("buckets.getIamPolicy"), 1);
  EXPECT_EQ(fake.request_count("buckets.setIamPolicy"), 1);
  auto p = *fake.bucket_iam_policy("b");
  EXPECT_EQ(members_of(p, kStorageRole), (std::vector<std::string>{member}));
  EXPECT_NE(p["etag"], "CAE=") << "a change must give the policy a new etag";
  EXPECT_TRUE(has(members_of(p, "roles/storage.legacyBucketOwner"), "projectOwner:acme"))
      << "the other bindings are kept";

  EXPECT_FALSE(client.add_bucket_iam_member("b", kStorageRole, member));
  EXPECT_EQ(fake.request_count("buckets.getIamPolicy"), 2);
  EXPECT_EQ(fake.request_count("buckets.setIamPolicy"), 1) << "no write when already granted";
  EXPECT_EQ(*fake.bucket_iam_policy("b"), p);

  // Another member joins the existing binding rather than adding a second one.
  EXPECT_TRUE(client.add_bucket_iam_member("b", kStorageRole, "user:ops@example.com"));
  p = *fake.bucket_iam_policy("b");
  EXPECT_EQ(members_of(p, kStorageRole),
            (std::vector<std::string>{member, "user:ops@example.com"}));
  EXPECT_EQ(std::count_if(p["bindings"].begin(), p["bindings"].end(),
                          [](const nlohmann::json& b) { return b["role"] == kStorageRole; }),
            1);
}

TEST_F(StorageIamTest, AGrantRacingAnotherChangeIsRedoneWithoutLosingIt) {
  fake.create_bucket("b", "acme");
  const auto member = ksa_principal("123", "acme");
  // Someone else grants a role right after our read: our write carries a stale etag.
  fake.change_iam_policy_after_next_read("b", "roles/storage.objectViewer",
                                         "user:auditor@example.com");
  EXPECT_TRUE(client.add_bucket_iam_member("b", kStorageRole, member));
  EXPECT_EQ(fake.request_count("buckets.getIamPolicy"), 2);
  EXPECT_EQ(fake.request_count("buckets.setIamPolicy"), 2) << "412 once, then success";
  auto p = *fake.bucket_iam_policy("b");
  EXPECT_EQ(members_of(p, kStorageRole), (std::vector<std::string>{member}));
  EXPECT_EQ(members_of(p, "roles/storage.objectViewer"),
            (std::vector<std::string>{"user:auditor@example.com"}))
      << "the concurrent change must survive";

  // The racing writer may also have granted exactly what we wanted: then nothing is left to do.
  fake.reset_counters();
  fake.change_iam_policy_after_next_read("b", kStorageRole, "user:dev@example.com");
  EXPECT_FALSE(client.add_bucket_iam_member("b", kStorageRole, "user:dev@example.com"));
  EXPECT_EQ(fake.request_count("buckets.setIamPolicy"), 1);  // the 412
  EXPECT_EQ(fake.request_count("buckets.getIamPolicy"), 2);
}

TEST_F(StorageIamTest, AnInjectedPreconditionFailureIsRetriedAndPersistentOnesGiveUp) {
  fake.create_bucket("b", "acme");
  fake.fail_precondition_next();
  EXPECT_TRUE(client.add_bucket_iam_member("b", kStorageRole, "user:a@example.com"));
  EXPECT_EQ(fake.request_count("buckets.setIamPolicy"), 2);

  fake.reset_counters();
  for (int i = 0; i < 10; ++i)
    fake.change_iam_policy_after_next_read("b", "roles/storage.objectViewer",
                                           "user:u" + std::to_string(i) + "@example.com");
  try {
    client.add_bucket_iam_member("b", kStorageRole, "user:b@example.com");
    FAIL() << "a policy that changes under every write must give up";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::api);
    EXPECT_NE(std::string(e.what()).find("granting roles/storage.objectUser on gs://b to "
                                         "user:b@example.com"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fake.request_count("buckets.setIamPolicy"), 5);
  EXPECT_FALSE(has(members_of(*fake.bucket_iam_policy("b"), kStorageRole), "user:b@example.com"));
  fake.clear_faults();
}

TEST_F(StorageIamTest, ConditionalBindingsAreKeptAndNotMistakenForTheGrant) {
  fake.create_bucket("b", "acme");
  // Seed a conditional grant of the same role through the API, as another tool would.
  auto p = client.get_bucket_iam_policy("b");
  p["version"] = 3;
  p["bindings"].push_back(
      {{"role", kStorageRole},
       {"members", nlohmann::json::array({"user:a@example.com"})},
       {"condition",
        {{"title", "jobs only"},
         {"expression", "resource.name.startsWith(\"projects/_/buckets/b/objects/jobs/\")"}}}});
  auto transport2 = http::make_curl_transport();
  http::Request put;
  put.method = "PUT";
  put.url = fake.url() + "/storage/v1/b/b/iam";
  put.headers = {{"Content-Type", "application/json"}};
  put.body = p.dump();
  ASSERT_EQ(transport2->send(put).status, 200);

  EXPECT_TRUE(client.add_bucket_iam_member("b", kStorageRole, "user:a@example.com"));
  auto after = *fake.bucket_iam_policy("b");
  EXPECT_EQ(after["version"], 3);
  EXPECT_EQ(members_of(after, kStorageRole), (std::vector<std::string>{"user:a@example.com"}));
  EXPECT_EQ(std::count_if(after["bindings"].begin(), after["bindings"].end(),
                          [](const nlohmann::json& b) { return b.contains("condition"); }),
            1);
}

// What `down` does to a bucket it keeps (#28 point 4): the members it names leave their
// bindings, a binding left empty goes, everyone else's grants stay, and a write that loses a race
// with another change is redone on a fresh read without undoing that change.
TEST_F(StorageIamTest, RevokingRemovesOnlyTheMembersNamedAndSurvivesARace) {
  fake.create_bucket("b", "acme");
  const std::string job = ksa_principal("1", "acme");
  ASSERT_TRUE(client.add_bucket_iam_member("b", kStorageRole, job));
  ASSERT_TRUE(client.add_bucket_iam_member("b", "roles/storage.objectViewer", job));
  ASSERT_TRUE(
      client.add_bucket_iam_member("b", "roles/storage.objectViewer", "user:a@example.com"));
  fake.change_iam_policy_after_next_read("b", "roles/storage.objectViewer", "user:b@example.com");
  const auto removed =
      client.remove_bucket_iam_members("b", [&](const std::string& m) { return m == job; });
  EXPECT_EQ(removed.size(), 2u);
  auto after = *fake.bucket_iam_policy("b");
  EXPECT_FALSE(has(members_of(after, kStorageRole), job)) << after.dump();
  EXPECT_FALSE(has(members_of(after, "roles/storage.objectViewer"), job)) << after.dump();
  EXPECT_TRUE(has(members_of(after, "roles/storage.objectViewer"), "user:a@example.com"));
  EXPECT_TRUE(has(members_of(after, "roles/storage.objectViewer"), "user:b@example.com"));
  for (const auto& b : after["bindings"]) EXPECT_FALSE(b["members"].empty()) << after.dump();
  // Nothing left to remove: nothing is written.
  fake.reset_counters();
  EXPECT_TRUE(client.remove_bucket_iam_members("b", [&](const std::string& m) { return m == job; })
                  .empty());
  EXPECT_EQ(fake.request_count("buckets.setIamPolicy"), 0);
}

TEST_F(StorageIamTest, AStaleEtagIsRefusedWith412) {
  fake.create_bucket("b", "acme");
  auto stale = client.get_bucket_iam_policy("b");
  ASSERT_TRUE(client.add_bucket_iam_member("b", kStorageRole, "user:a@example.com"));
  auto transport2 = http::make_curl_transport();
  http::Request put;
  put.method = "PUT";
  put.url = fake.url() + "/storage/v1/b/b/iam";
  put.headers = {{"Content-Type", "application/json"}};
  put.body = stale.dump();
  auto r = transport2->send(put);
  EXPECT_EQ(r.status, 412);
  EXPECT_NE(r.body.find("conditionNotMet"), std::string::npos) << r.body;
  // An invalid member is a 400 that names it.
  stale = client.get_bucket_iam_policy("b");
  stale["bindings"].push_back(
      {{"role", kStorageRole}, {"members", nlohmann::json::array({"alice@example.com"})}});
  put.body = stale.dump();
  r = transport2->send(put);
  EXPECT_EQ(r.status, 400);
  // Bucket metadata and its IAM policy share the etag, as in GCS.
  EXPECT_EQ(fake.bucket_resource("b")->at("etag"), fake.bucket_iam_policy("b")->at("etag"));
}

TEST_F(StorageIamTest, AMissingBucketIsNotFound) {
  try {
    client.get_bucket_iam_policy("nope");
    FAIL() << "reading the policy of a missing bucket must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found) << e.what();
  }
  try {
    client.add_bucket_iam_member("nope", kStorageRole, "user:a@example.com");
    FAIL() << "granting on a missing bucket must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found) << e.what();
    EXPECT_NE(std::string(e.what()).find(
                  "granting roles/storage.objectUser on gs://nope to user:a@example.com"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fake.request_count("buckets.setIamPolicy"), 0);
  EXPECT_FALSE(fake.bucket_iam_policy("nope").has_value());
}

}  // namespace
}  // namespace kinetic::gcp
