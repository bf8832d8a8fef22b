#include "gcp/composite_upload.h"

#include <algorithm>
#include <random>

#include "core/checksum.h"
#include "core/error.h"
#include "gcp/parallel_transfer.h"

namespace kinetic::gcp {

namespace {

constexpr size_t kMaxComponents = 32;  // objects.compose's limit of sources

// A tag that keeps two uploads of the same name (two runs staging one context) apart.
std::string random_tag() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 12; ++i) out.push_back(kHex[rd() % 16]);
  return out;
}

std::string component_name(const std::string& prefix, size_t index) {
  const std::string digits = std::to_string(index);
  return prefix + std::string(digits.size() < 2 ? 2 - digits.size() : 0, '0') + digits;
}

// The parts uploaded, by index.
struct Uploaded {
  std::vector<ObjectInfo> parts;
  std::vector<bool> done;
};

// Uploads RANGES[i] of FILE as COMPONENT_PREFIX + i, PLAN.parallelism at once, each as a new
// object; OPTIONS.progress gets the bytes of the parts done. UPLOADED says which exist, also
// when one failed (rethrown).
void upload_components(const std::string& bucket, const std::string& component_prefix,
                       const fs::path& file,
                       const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                       const UploadOptions& options, const CompositePlan& plan,
                       const std::string& endpoint,
                       const std::function<std::shared_ptr<http::Transport>()>& make_transport,
                       Uploaded& uploaded) {
  std::vector<TransferTask> tasks;
  for (size_t i = 0; i < ranges.size(); ++i) {
    TransferTask t{.bucket = bucket, .name = component_name(component_prefix, i), .file = file};
    t.upload.content_type = "application/octet-stream";
    t.upload.if_generation_match = 0;
    t.upload.chunk_size = options.chunk_size;
    t.range = ranges[i];
    tasks.push_back(std::move(t));
  }
  const uint64_t total = ranges.back().first + ranges.back().second;
  transfer_all(
      tasks, endpoint, make_transport, plan.parallelism,
      [&](size_t, uint64_t bytes) {
        if (options.progress) options.progress(bytes, total);
      },
      [&](size_t i, const ObjectInfo& part) {
        uploaded.parts[i] = part;
        uploaded.done[i] = true;
      });
}

// Deletes the parts made, in parallel; a failure to delete one is left to the bucket's
// lifecycle rule on the temp prefix (the upload's own outcome matters more).
void delete_components(const std::string& bucket, const Uploaded& uploaded,
                       const CompositePlan& plan, const std::string& endpoint,
                       const std::function<std::shared_ptr<http::Transport>()>& make_transport) {
  std::vector<TransferTask> tasks;
  for (size_t i = 0; i < uploaded.parts.size(); ++i)
    if (uploaded.done[i])
      tasks.push_back(
          {.kind = TransferTask::Kind::remove, .bucket = bucket, .name = uploaded.parts[i].name});
  if (tasks.empty()) return;
  try {
    transfer_all(tasks, endpoint, make_transport, plan.parallelism);
  } catch (const Error&) {
  }
}

// The CRC32C GCS reports for PART (verified against the file as it was uploaded).
uint32_t stored_crc(const std::string& bucket, const ObjectInfo& part) {
  const auto bytes = base64_decode(part.crc32c);
  if (!bytes || bytes->size() != 4)
    throw Error(Errc::api, "uploading gs://" + bucket + "/" + part.name + ": it has no CRC32C");
  uint32_t crc = 0;
  for (unsigned char b : *bytes) crc = crc << 8 | b;
  return crc;
}

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> component_ranges(uint64_t size, uint64_t min_component) {
  const uint64_t count =
      std::clamp<uint64_t>(size / std::max<uint64_t>(1, min_component), 1, kMaxComponents);
  const uint64_t part = std::max<uint64_t>(1, (size + count - 1) / count);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (uint64_t first = 0; first < size; first += part)
    ranges.emplace_back(first, std::min(part, size - first));
  return ranges;
}

ObjectInfo upload_file_in_parts(
    StorageClient& client, const std::string& bucket, const std::string& name, const fs::path& file,
    const UploadOptions& options, const CompositePlan& plan, const std::string& endpoint,
    const std::function<std::shared_ptr<http::Transport>()>& make_transport) {
  std::error_code error;
  const uint64_t size = fs::file_size(file, error);
  if (error) throw Error(Errc::internal, "cannot read " + file.string() + ": " + error.message());
  const auto ranges = component_ranges(size, plan.min_component);
  if (size < plan.threshold || ranges.size() < 2 || !make_transport)
    return client.upload_file(bucket, name, file, options);

  const std::string prefix = plan.temp_prefix + name + "." + random_tag() + "/";
  Uploaded uploaded{std::vector<ObjectInfo>(ranges.size()), std::vector<bool>(ranges.size())};
  try {
    upload_components(bucket, prefix, file, ranges, options, plan, endpoint, make_transport,
                      uploaded);
    uint32_t crc = 0;
    for (size_t i = 0; i < ranges.size(); ++i)
      crc = crc32c_combine(crc, stored_crc(bucket, uploaded.parts[i]), ranges[i].second);
    ObjectInfo composed = client.compose(bucket, name, uploaded.parts, options);
    if (composed.crc32c != crc32c_base64(crc)) {
      client.delete_object(bucket, name);
      throw Error(Errc::api, "uploading gs://" + bucket + "/" + name +
                                 ": the composed object's CRC32C does not match the file's; it "
                                 "was deleted, try again");
    }
    delete_components(bucket, uploaded, plan, endpoint, make_transport);
    return composed;
  } catch (...) {
    delete_components(bucket, uploaded, plan, endpoint, make_transport);
    throw;
  }
}

}  // namespace kinetic::gcp
