#include "backend/cleanup_policy.h"

#include <algorithm>

namespace kinetic {

std::set<std::string> records_to_remove(std::vector<FinishedRecord> records,
                                        const CleanupPolicy& policy, double now) {
  std::sort(records.begin(), records.end(), [](const FinishedRecord& a, const FinishedRecord& b) {
    return a.finished != b.finished ? a.finished > b.finished : a.id > b.id;
  });
  const double cutoff = now - static_cast<double>(policy.older_than_seconds);
  std::set<std::string> doomed;
  for (size_t i = 0; i < records.size(); ++i) {
    if (policy.keep_last && i < *policy.keep_last) continue;
    if (!policy.keep_last || policy.records_by_age)
      if (records[i].finished > cutoff) continue;
    doomed.insert(records[i].id);
  }
  return doomed;
}

}  // namespace kinetic
