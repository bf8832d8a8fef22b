// Many objects at once: N threads, each with its own transport (transports and clients are not
// thread-safe; credentials are), sharing one queue.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gcp/storage.h"

namespace kinetic::gcp {

struct TransferTask {
  // remove: the object deleted (one gone already counts as done).
  enum class Kind { upload, download, remove } kind = Kind::upload;
  std::string bucket;
  std::string name;
  fs::path file;
  UploadOptions upload;  // for uploads (its progress callback is not used)
  // Set: an upload of only this byte range of FILE, [first, first + length), resumable.
  std::optional<std::pair<uint64_t, uint64_t>> range;
};

struct TransferSummary {
  size_t objects = 0;
  uint64_t bytes = 0;
};

// Runs TASKS on PARALLELISM threads. PROGRESS (optional, called from any thread but never
// concurrently) gets objects done and bytes so far; ON_OBJECT (likewise) each task's index and
// the object it uploaded or downloaded. The first failure stops the others from starting new
// tasks and is rethrown once all threads have stopped.
TransferSummary transfer_all(
    const std::vector<TransferTask>& tasks, const std::string& endpoint,
    const std::function<std::shared_ptr<http::Transport>()>& make_transport, int parallelism,
    const std::function<void(size_t objects, uint64_t bytes)>& progress = nullptr,
    const std::function<void(size_t task, const ObjectInfo& object)>& on_object = nullptr);

}  // namespace kinetic::gcp
