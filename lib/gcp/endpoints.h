// Where each Google API lives, with gcloud's endpoint overrides and the storage emulator.
#pragma once

#include <string>
#include <string_view>

#include "core/env.h"

namespace kinetic::gcp {

// The ROOT URL of SERVICE (container, cloudbuild, artifactregistry, serviceusage, storage),
// without a trailing slash; callers append the full method path ("/v1/projects/...",
// "/storage/v1/b/...", "/upload/storage/v1/b/...").
//
//   1. CLOUDSDK_API_ENDPOINT_OVERRIDES_<SERVICE> (as gcloud): a base URL such as
//      "http://127.0.0.1:8123/". gcloud bases end with "/" and, for storage, may carry the
//      default path "/storage/v1/"; the trailing slash is dropped and, for storage, a trailing
//      "/storage/v1" too, so "http://h:1/", "http://h:1" and "http://h:1/storage/v1/" all give
//      "http://h:1". A different path is kept as a prefix ("http://h/proxy/" -> "http://h/proxy").
//   2. storage only: STORAGE_EMULATOR_HOST, as Google's client libraries read it: "host:port" or
//      a URL; without a scheme "http://" is prepended.
//   3. https://SERVICE.googleapis.com
// An unknown SERVICE is an internal error.
std::string api_endpoint(std::string_view service, const Env& env);

}  // namespace kinetic::gcp
