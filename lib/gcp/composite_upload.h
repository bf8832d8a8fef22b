// A large file as one object, uploaded as parallel parts: components (byte ranges of the file,
// each its own resumable upload on its own thread and connection) composed into the object in
// one objects.compose, then deleted. gcloud storage's parallel composite upload, for the same
// reason: one stream is bound by one connection's window and one round trip per chunk.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gcp/storage.h"

namespace kinetic::gcp {

struct CompositePlan {
  // Files from this size go up in parts; smaller ones as one upload. gcloud storage's default
  // (storage/parallel_composite_upload_threshold: 150M).
  uint64_t threshold = 150ull << 20;
  // Parts are at least this large, and at most 32: one compose.
  uint64_t min_component = 32ull << 20;
  int parallelism = 8;
  // Components are named TEMP_PREFIX + the object's name + "." + a random tag + "/NN", under a
  // prefix the bucket's lifecycle empties in case a crash leaves some behind.
  std::string temp_prefix = "uploads/";
};

// The byte ranges [first, first + length) a file of SIZE bytes is cut into: as many as
// MIN_COMPONENT allows, up to 32, of equal size (the last may be smaller). A part is an object
// of its own, so only its chunks keep to 256 KiB multiples.
std::vector<std::pair<uint64_t, uint64_t>> component_ranges(uint64_t size, uint64_t min_component);

// Uploads FILE as BUCKET/NAME with OPTIONS (content type, customTime, ifGenerationMatch apply
// to the composed object); from PLAN.threshold on, in parts on PLAN.parallelism threads, each
// with a transport from MAKE_TRANSPORT; CLIENT (this thread's) composes and deletes. The
// composite's CRC32C is checked against the file's, combined from the parts'. A failure deletes
// the parts uploaded so far and is rethrown. OPTIONS.progress gets the bytes of all parts.
ObjectInfo upload_file_in_parts(
    StorageClient& client, const std::string& bucket, const std::string& name, const fs::path& file,
    const UploadOptions& options, const CompositePlan& plan, const std::string& endpoint,
    const std::function<std::shared_ptr<http::Transport>()>& make_transport);

}  // namespace kinetic::gcp
