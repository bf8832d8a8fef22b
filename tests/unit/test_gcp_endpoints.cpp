#include <gtest/gtest.h>

#include "core/error.h"
#include "gcp/endpoints.h"

using kinetic::Env;
using kinetic::gcp::api_endpoint;

TEST(Endpoint, Defaults) {
  Env env = Env::from_map({});
  EXPECT_EQ(api_endpoint("container", env), "https://container.googleapis.com");
  EXPECT_EQ(api_endpoint("cloudbuild", env), "https://cloudbuild.googleapis.com");
  EXPECT_EQ(api_endpoint("artifactregistry", env), "https://artifactregistry.googleapis.com");
  EXPECT_EQ(api_endpoint("serviceusage", env), "https://serviceusage.googleapis.com");
  EXPECT_EQ(api_endpoint("storage", env), "https://storage.googleapis.com");
}

TEST(Endpoint, GcloudOverrides) {
  Env env =
      Env::from_map({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", "http://127.0.0.1:8123/"},
                     {"CLOUDSDK_API_ENDPOINT_OVERRIDES_CLOUDBUILD", "http://127.0.0.1:8124"},
                     {"CLOUDSDK_API_ENDPOINT_OVERRIDES_ARTIFACTREGISTRY", "http://h/proxy/"},
                     {"CLOUDSDK_API_ENDPOINT_OVERRIDES_SERVICEUSAGE", ""},
                     {"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "http://h:9000/storage/v1/"}});
  EXPECT_EQ(api_endpoint("container", env), "http://127.0.0.1:8123");
  EXPECT_EQ(api_endpoint("cloudbuild", env), "http://127.0.0.1:8124");
  EXPECT_EQ(api_endpoint("artifactregistry", env), "http://h/proxy");
  EXPECT_EQ(api_endpoint("serviceusage", env),
            "https://serviceusage.googleapis.com");  // empty = unset
  EXPECT_EQ(api_endpoint("storage", env), "http://h:9000");
}

TEST(Endpoint, StorageEmulatorHost) {
  EXPECT_EQ(api_endpoint("storage", Env::from_map({{"STORAGE_EMULATOR_HOST", "localhost:9023"}})),
            "http://localhost:9023");
  EXPECT_EQ(
      api_endpoint("storage", Env::from_map({{"STORAGE_EMULATOR_HOST", "https://gcs.local:1/"}})),
      "https://gcs.local:1");
  // Only storage reads it; the gcloud override wins.
  EXPECT_EQ(api_endpoint("container", Env::from_map({{"STORAGE_EMULATOR_HOST", "localhost:9023"}})),
            "https://container.googleapis.com");
  EXPECT_EQ(
      api_endpoint("storage",
                   Env::from_map({{"STORAGE_EMULATOR_HOST", "localhost:9023"},
                                  {"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "http://o:1/"}})),
      "http://o:1");
}

TEST(Endpoint, UnknownService) {
  EXPECT_THROW(api_endpoint("compute", Env::from_map({})), kinetic::Error);
}
