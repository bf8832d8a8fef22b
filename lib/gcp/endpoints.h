// Where each Google API lives, with gcloud's endpoint overrides and the storage emulator.
#pragma once

#include <string>
#include <string_view>

#include "core/env.h"

namespace kinetic::gcp {

// The Google APIs kinetic calls, by their endpoint names.
inline constexpr const char* kServices[] = {"container",    "cloudbuild", "artifactregistry",
                                            "serviceusage", "storage",    "cloudresourcemanager",
                                            "iam",          "compute"};

// The ROOT URL of SERVICE (container, cloudbuild, artifactregistry, serviceusage, storage,
// cloudresourcemanager, iam, compute),
// without a trailing slash; callers append the full method path ("/v1/projects/...",
// "/storage/v1/b/...", "/upload/storage/v1/b/...").
//
//   1. CLOUDSDK_API_ENDPOINT_OVERRIDES_<SERVICE> (as gcloud): an http(s) base URL such as
//      "http://127.0.0.1:8123/". gcloud bases end with "/" and, for storage, may carry the
//      default path "/storage/v1/"; the trailing slash is dropped and, for storage, a trailing
//      "/storage/v1" too, so "http://h:1/", "http://h:1" and "http://h:1/storage/v1/" all give
//      "http://h:1". A different path is kept as a prefix ("http://h/proxy/" -> "http://h/proxy").
//      Likewise gcloud's compute base ends with "/compute/v1/", which is dropped.
//   2. storage only: STORAGE_EMULATOR_HOST, as Google's client libraries read it: "host:port" or
//      a URL; without a scheme "http://" is prepended.
//   3. https://SERVICE.googleapis.com
// An unknown SERVICE is an internal error. An override is sent the user's token (as gcloud
// does), so one that is not http(s), or is plain http:// to a host other than this machine, is
// a config error: the token and the cluster's CA would cross the network in clear.
std::string api_endpoint(std::string_view service, const Env& env);

// The storage emulator's base URL when storage resolves to STORAGE_EMULATOR_HOST (no storage
// override set), else "". Google's client libraries send no credentials there, and neither
// does kinetic: an emulator needs none, and it is usually plain HTTP.
std::string storage_emulator(const Env& env);

// Whether URL's host is this machine: 127.0.0.0/8, [::1] or localhost.
bool is_loopback_url(std::string_view url);

}  // namespace kinetic::gcp
