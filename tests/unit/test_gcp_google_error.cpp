#include <gtest/gtest.h>

#include "gcp/google_error.h"

using kinetic::Errc;
using kinetic::gcp::google_error;

namespace {

const char* kServiceDisabled = R"({"error": {
  "code": 403,
  "message": "Kubernetes Engine API has not been used in project 123 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/container.googleapis.com/overview?project=123 then retry. If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.",
  "status": "PERMISSION_DENIED",
  "details": [
    {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "SERVICE_DISABLED", "domain": "googleapis.com",
     "metadata": {"service": "container.googleapis.com", "consumer": "projects/123",
                  "activationUrl": "https://console.developers.google.com/apis/api/container.googleapis.com/overview?project=123",
                  "serviceTitle": "Kubernetes Engine API", "containerInfo": "123"}},
    {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": "..."},
    {"@type": "type.googleapis.com/google.rpc.Help", "links": [{"description": "Google developers console API activation", "url": "https://console.developers.google.com/apis/api/container.googleapis.com/overview?project=123"}]}
  ]}})";

bool one_line(const std::string& s) {
  return s.find('\n') == std::string::npos;
}

}  // namespace

TEST(GoogleError, ServiceDisabledFromErrorInfo) {
  auto e = google_error(403, kServiceDisabled);
  EXPECT_EQ(e.code(), Errc::api);
  EXPECT_STREQ(
      e.what(),
      "the container.googleapis.com API is not enabled in project 123; enable it with `gcloud "
      "services enable container.googleapis.com --project 123` (or run `kinetic up`)");
}

TEST(GoogleError, ServiceDisabledFromMessageOnly) {
  auto e = google_error(
      403,
      R"({"error":{"code":403,"status":"PERMISSION_DENIED","message":"Cloud Build API has not been used in project my-proj before or it is disabled. Enable it by visiting https://console.cloud.google.com/apis/api/cloudbuild.googleapis.com/overview?project=my-proj then retry."}})");
  EXPECT_NE(std::string(e.what()).find(
                "the cloudbuild.googleapis.com API is not enabled in project my-proj"),
            std::string::npos)
      << e.what();
}

TEST(GoogleError, PermissionDeniedNamesPermission) {
  auto e = google_error(
      403,
      R"({"error":{"code":403,"message":"Permission 'container.clusters.create' denied on resource '//container.googleapis.com/projects/p/locations/us-central1' (or it may not exist).","status":"PERMISSION_DENIED"}})",
      "creating cluster kinetic");
  EXPECT_EQ(e.code(), Errc::auth);
  std::string m = e.what();
  EXPECT_TRUE(
      m.starts_with("creating cluster kinetic: permission container.clusters.create denied"))
      << m;
  EXPECT_NE(m.find("ask for role roles/container.admin or run `gcloud auth application-default "
                   "login` with an account that has it"),
            std::string::npos)
      << m;
  EXPECT_TRUE(one_line(m));
}

TEST(GoogleError, GcsForbiddenLegacyShape) {
  auto e = google_error(
      403,
      R"({"error":{"code":403,"message":"me@x.iam.gserviceaccount.com does not have storage.objects.create access to the Google Cloud Storage object. Permission 'storage.objects.create' denied on resource (or it may not exist).","errors":[{"message":"...","domain":"global","reason":"forbidden"}]}})");
  EXPECT_EQ(e.code(), Errc::auth);
  EXPECT_TRUE(std::string(e.what()).starts_with("permission storage.objects.create denied"))
      << e.what();
  EXPECT_NE(std::string(e.what()).find("roles/storage.admin"), std::string::npos);
}

TEST(GoogleError, PermissionDeniedWithoutPermissionName) {
  auto e = google_error(
      403,
      R"({"error":{"code":403,"message":"The caller does not have permission","status":"PERMISSION_DENIED"}})");
  EXPECT_EQ(e.code(), Errc::auth);
  EXPECT_STREQ(
      e.what(),
      "permission denied (The caller does not have permission); ask for a role that grants it or "
      "run `gcloud auth application-default login` with an account that has it");
}

TEST(GoogleError, Unauthenticated) {
  auto e = google_error(
      401,
      R"({"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.","status":"UNAUTHENTICATED"}})");
  EXPECT_EQ(e.code(), Errc::auth);
  std::string m = e.what();
  EXPECT_TRUE(
      m.starts_with("credentials were rejected (Request had invalid authentication credentials"))
      << m;
  EXPECT_TRUE(m.ends_with(
      "; run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"));
}

TEST(GoogleError, QuotaFailureNamesQuota) {
  auto e = google_error(
      429,
      R"({"error":{"code":429,"message":"Quota exceeded for quota metric 'Build requests' and limit 'Build requests per minute' of service 'cloudbuild.googleapis.com' for consumer 'project_number:123'.","status":"RESOURCE_EXHAUSTED","details":[
    {"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":{"quota_metric":"cloudbuild.googleapis.com/build_requests","quota_limit":"BuildRequestsPerMinute","consumer":"projects/123","service":"cloudbuild.googleapis.com"}},
    {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"subject":"project:123","description":"Build requests per minute exceeded."}]},
    {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"4s"}]}})");
  EXPECT_EQ(e.code(), Errc::api);
  std::string m = e.what();
  EXPECT_TRUE(m.starts_with("quota exceeded: project:123: Build requests per minute exceeded"))
      << m;
  EXPECT_TRUE(one_line(m));
}

TEST(GoogleError, QuotaFromErrorInfoMetadata) {
  auto e = google_error(
      429,
      R"({"error":{"code":429,"message":"Rate exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_metric":"container.googleapis.com/requests","quota_limit":"RequestsPerMinute"}}]}})");
  EXPECT_TRUE(std::string(e.what()).starts_with(
      "quota exceeded: RequestsPerMinute of container.googleapis.com/requests (Rate exceeded)"))
      << e.what();
}

// What a sweep meets when the retry layer has waited out GCS's rate limit (issue #30 point 3):
// a limit to keep to, not a quota to ask more of.
TEST(GoogleError, GcsRateLimitSaysKineticWaitedAndWhatToDo) {
  auto e = google_error(
      429,
      R"({"error":{"code":429,"message":"The object b/jobs/x/spec.json exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.","errors":[{"message":"The object b/jobs/x/spec.json exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.","domain":"usageLimits","reason":"rateLimitExceeded"}]}})",
      "uploading gs://b/jobs/x/spec.json");
  EXPECT_EQ(e.code(), Errc::api);
  EXPECT_EQ(kinetic::exit_code_for(e.code(), /*is_run_command=*/true), 125);  // kinetic failed
  std::string m = e.what();
  EXPECT_TRUE(
      m.starts_with("uploading gs://b/jobs/x/spec.json: rate limit exceeded: 429 Too Many "
                    "Requests (The object b/jobs/x/spec.json exceeded the rate limit"))
      << m;
  EXPECT_TRUE(
      m.ends_with("after kinetic retried for up to 5 minutes; submit fewer jobs at once, or "
                  "retry later"))
      << m;
  EXPECT_TRUE(one_line(m));
}

TEST(GoogleError, GkeRegionalQuotaIs403ButNotAuth) {
  auto e = google_error(
      403,
      R"({"error":{"code":403,"message":"Insufficient regional quota to satisfy request: resource \"CPUS\": request requires '48.0' and is short '24.0'. project has a quota of '24.0' with '24.0' available. View and manage quotas at https://console.cloud.google.com/iam-admin/quotas?usage=USED&project=p.","status":"PERMISSION_DENIED"}})");
  EXPECT_EQ(e.code(), Errc::api);
  EXPECT_TRUE(std::string(e.what()).starts_with("quota exceeded (Insufficient regional quota"))
      << e.what();
}

TEST(GoogleError, NotFoundAndConflict) {
  auto nf = google_error(
      404,
      R"({"error":{"code":404,"message":"Not found: projects/p/locations/us-central1/clusters/kinetic.","status":"NOT_FOUND"}})");
  EXPECT_EQ(nf.code(), Errc::not_found);
  EXPECT_STREQ(nf.what(),
               "not found (Not found: projects/p/locations/us-central1/clusters/kinetic)");

  auto gcs = google_error(
      409,
      R"({"error":{"code":409,"message":"Your previous request to create the named bucket succeeded and you already own it.","errors":[{"message":"Your previous request to create the named bucket succeeded and you already own it.","domain":"global","reason":"conflict"}]}})");
  EXPECT_EQ(gcs.code(), Errc::api);
  EXPECT_TRUE(std::string(gcs.what()).starts_with("conflict (Your previous request")) << gcs.what();

  auto exists = google_error(
      409,
      R"({"error":{"code":409,"message":"Already exists: projects/p/locations/l/clusters/kinetic.","status":"ALREADY_EXISTS"}})");
  EXPECT_TRUE(std::string(exists.what()).starts_with("already exists (")) << exists.what();
}

TEST(GoogleError, PreconditionFailedGcs) {
  auto e = google_error(
      412,
      R"({"error": {"code": 412, "message": "At least one of the pre-conditions you specified did not hold.",
  "errors": [{"message": "At least one of the pre-conditions you specified did not hold.", "domain": "global",
              "reason": "conditionNotMet", "locationType": "header", "location": "If-Match"}]}})");
  EXPECT_STREQ(
      e.what(),
      "precondition failed (At least one of the pre-conditions you specified did not hold)");
  auto parsed = kinetic::gcp::parse_google_error(
      412, R"({"error":{"code":412,"errors":[{"reason":"conditionNotMet"}]}})");
  EXPECT_EQ(parsed.reason, "conditionNotMet");
}

TEST(GoogleError, KubernetesStatus) {
  auto e = google_error(
      409, R"({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
 "message": "jobs.batch \"train-1\" already exists", "reason": "AlreadyExists",
 "details": {"name": "train-1", "group": "batch", "kind": "jobs"}, "code": 409})");
  EXPECT_STREQ(e.what(), "already exists (jobs.batch \"train-1\" already exists)");
}

TEST(GoogleError, NonJsonBodies) {
  auto html = google_error(502,
                           "<!DOCTYPE html>\n<html><head><title>Error 502 (Server "
                           "Error)!!1</title></head><body>...</body></html>");
  EXPECT_EQ(html.code(), Errc::api);
  EXPECT_STREQ(html.what(), "HTTP 502 (Error 502 (Server Error)!!1)");
  auto text = google_error(500, "\n  upstream connect error\nor disconnect\n");
  EXPECT_STREQ(text.what(), "HTTP 500 (upstream connect error)");
  auto empty = google_error(503, "");
  EXPECT_STREQ(empty.what(), "HTTP 503");
  auto unauth = google_error(401, "Unauthorized");
  EXPECT_EQ(unauth.code(), Errc::auth);
}

TEST(GoogleError, GenericKeepsStatusAndHelp) {
  auto e = google_error(
      400,
      R"({"error":{"code":400,"message":"Invalid value at 'cluster.node_pools[0].config.machine_type'\n(TYPE_STRING).","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.Help","links":[{"url":"https://cloud.google.com/x"}]}]}})");
  EXPECT_STREQ(
      e.what(),
      "HTTP 400 INVALID_ARGUMENT (Invalid value at 'cluster.node_pools[0].config.machine_type' "
      "(TYPE_STRING)); see https://cloud.google.com/x");
}

TEST(GoogleError, RetryInfoDelay) {
  using namespace std::chrono_literals;
  EXPECT_EQ(
      kinetic::gcp::retry_info_delay(
          R"({"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"4s"}]}})"),
      4000ms);
  EXPECT_EQ(
      kinetic::gcp::retry_info_delay(
          R"({"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}]}})"),
      1500ms);
  EXPECT_EQ(kinetic::gcp::retry_info_delay(R"({"error":{"code":429}})"), std::nullopt);
  EXPECT_EQ(kinetic::gcp::retry_info_delay("not json"), std::nullopt);
}

// Found by fuzzing (tests/fuzz/fuzz_google_error.cpp): delays that are not numbers, negative or
// too large to count in milliseconds were converted with undefined behaviour.
TEST(GoogleError, RetryInfoDelayOutOfRange) {
  using namespace std::chrono_literals;
  auto delay = [](const std::string& retry_delay) {
    return kinetic::gcp::retry_info_delay(
        R"({"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":)" +
        retry_delay + "}]}}");
  };
  EXPECT_EQ(delay(R"("nans")"), std::nullopt);
  EXPECT_EQ(delay(R"("-1s")"), std::nullopt);
  EXPECT_EQ(delay(R"({"seconds":-5})"), std::nullopt);
  EXPECT_EQ(delay(R"("1e300s")"), 86400s);
  EXPECT_EQ(delay(R"({"seconds":"9223372036854775807"})"), 86400s);
  EXPECT_EQ(delay(R"({"seconds":1e300})"), 86400s);
  EXPECT_EQ(delay(R"({"seconds":"2","nanos":500000000})"), 2500ms);
  EXPECT_EQ(delay(R"({"seconds":[]})"), std::nullopt);
}

// Found by fuzzing: a status, ErrorInfo metadata or help link with a newline made the message
// two lines.
TEST(GoogleError, FieldsQuotedFromTheBodyKeepTheMessageOneLine) {
  EXPECT_STREQ(google_error(500, R"({"error":{"code":500,"status":"A\nB"}})").what(),
               "HTTP 500 A B");
  auto disabled = google_error(
      403,
      R"({"error":{"code":403,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SERVICE_DISABLED","metadata":{"service":"x.googleapis.com\r\nfake","consumer":"projects/p\n"}}]}})");
  EXPECT_TRUE(one_line(disabled.what())) << disabled.what();
  auto help = google_error(
      400,
      R"({"error":{"code":400,"details":[{"@type":"type.googleapis.com/google.rpc.Help","links":[{"url":"https://x\n"}]}]}})");
  EXPECT_TRUE(one_line(help.what())) << help.what();
}
