#include "gcp/parallel_transfer.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace kinetic::gcp {

TransferSummary transfer_all(
    const std::vector<TransferTask>& tasks, const std::string& endpoint,
    const std::function<std::shared_ptr<http::Transport>()>& make_transport, int parallelism,
    const std::function<void(size_t, uint64_t)>& progress,
    const std::function<void(size_t, const ObjectInfo&)>& on_object) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;  // guards summary, first_error and progress calls
  TransferSummary summary;
  std::exception_ptr first_error;

  auto worker = [&] {
    try {
      auto transport = make_transport();
      StorageClient client(*transport, endpoint);
      for (;;) {
        if (failed) return;
        size_t i = next++;
        if (i >= tasks.size()) return;
        const TransferTask& t = tasks[i];
        ObjectInfo o;
        if (t.kind == TransferTask::Kind::upload) {
          UploadOptions opt = t.upload;
          opt.progress = nullptr;
          o = t.range ? client.upload_file_range(t.bucket, t.name, t.file, t.range->first,
                                                 t.range->second, opt)
                      : client.upload_file(t.bucket, t.name, t.file, opt);
        } else if (t.kind == TransferTask::Kind::download) {
          o = client.download_file(t.bucket, t.name, t.file);
        } else {
          client.delete_object(t.bucket, t.name);
        }
        std::lock_guard<std::mutex> lock(mu);
        summary.objects++;
        summary.bytes += o.size;
        if (progress) progress(summary.objects, summary.bytes);
        if (on_object) on_object(i, o);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!first_error) first_error = std::current_exception();
      failed = true;
    }
  };

  int n = std::max(1, std::min<int>(parallelism, static_cast<int>(tasks.size())));
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i) threads.emplace_back(worker);
  worker();  // the calling thread works too
  for (auto& th : threads) th.join();
  if (first_error) std::rethrow_exception(first_error);
  return summary;
}

}  // namespace kinetic::gcp
