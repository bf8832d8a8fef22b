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
                     {"CLOUDSDK_API_ENDPOINT_OVERRIDES_ARTIFACTREGISTRY", "https://h/proxy/"},
                     {"CLOUDSDK_API_ENDPOINT_OVERRIDES_SERVICEUSAGE", ""},
                     {"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "http://[::1]:9000/storage/v1/"}});
  EXPECT_EQ(api_endpoint("container", env), "http://127.0.0.1:8123");
  EXPECT_EQ(api_endpoint("cloudbuild", env), "http://127.0.0.1:8124");
  EXPECT_EQ(api_endpoint("artifactregistry", env), "https://h/proxy");
  EXPECT_EQ(api_endpoint("serviceusage", env),
            "https://serviceusage.googleapis.com");  // empty = unset
  EXPECT_EQ(api_endpoint("storage", env), "http://[::1]:9000");
}

// The user's token goes to an override (as gcloud's does): plain HTTP only to this machine.
TEST(Endpoint, PlainHttpOverrideToAnotherMachineIsRefused) {
  for (const char* url :
       {"http://10.0.0.5:8080/", "http://h/proxy/", "HTTP://example.com",
        "http://127.0.0.1.evil.com/", "http://127.0.0.1@evil.com/", "http://[::2]:1/",
        "http://localhost.evil.com/", "ftp://127.0.0.1/", "127.0.0.1:8123"}) {
    Env env = Env::from_map({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", url}});
    try {
      api_endpoint("container", env);
      ADD_FAILURE() << url << " was accepted";
    } catch (const kinetic::Error& e) {
      EXPECT_EQ(e.code(), kinetic::Errc::config) << url;
      EXPECT_NE(std::string(e.what()).find("CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER"),
                std::string::npos)
          << e.what();
    }
  }
  for (const char* url : {"http://127.0.0.1:1/", "http://127.9.8.7/", "http://LocalHost:9/",
                          "http://[::1]:4/x", "https://10.0.0.5/", "http://u:p@127.0.0.1:5/"}) {
    Env env = Env::from_map({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", url}});
    EXPECT_NO_THROW(api_endpoint("container", env)) << url;
  }
}

TEST(Endpoint, StorageEmulatorIsNamedOnlyWhenStorageGoesThere) {
  using kinetic::gcp::storage_emulator;
  EXPECT_EQ(storage_emulator(Env::from_map({})), "");
  EXPECT_EQ(storage_emulator(Env::from_map({{"STORAGE_EMULATOR_HOST", "10.1.1.1:9023/"}})),
            "http://10.1.1.1:9023");  // no token goes there, so plain HTTP anywhere is allowed
  EXPECT_EQ(storage_emulator(Env::from_map(
                {{"STORAGE_EMULATOR_HOST", "localhost:9023"},
                 {"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "https://proxy.example/"}})),
            "");
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
  EXPECT_EQ(api_endpoint("storage", Env::from_map({{"STORAGE_EMULATOR_HOST", "localhost:9023"},
                                                   {"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE",
                                                    "http://127.0.0.1:1/"}})),
            "http://127.0.0.1:1");
}

TEST(Endpoint, UnknownService) {
  EXPECT_THROW(api_endpoint("bigquery", Env::from_map({})), kinetic::Error);
}

// gcloud's compute base carries the API's own path, as its default does
// (https://compute.googleapis.com/compute/v1/): kinetic appends /compute/v1/... itself.
TEST(Endpoint, ComputeOverrideDropsTheApiPath) {
  EXPECT_EQ(api_endpoint("compute", Env::from_map({})), "https://compute.googleapis.com");
  EXPECT_EQ(api_endpoint("compute", Env::from_map({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE",
                                                    "http://127.0.0.1:9/compute/v1/"}})),
            "http://127.0.0.1:9");
  EXPECT_EQ(api_endpoint("compute", Env::from_map({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE",
                                                    "http://127.0.0.1:9/"}})),
            "http://127.0.0.1:9");
}
