#include "backend/pipeline_cleanup.h"

#include <map>
#include <set>
#include <string>

#include "core/duration.h"

namespace kinetic {

std::vector<CleanupItem> prune_pipeline_records(PipelineRecords& records,
                                                const CleanupPolicy& policy, double now,
                                                bool dry_run) {
  std::vector<FinishedRecord> finished;
  std::map<std::string, std::string> states;
  for (const auto& doc : records.list()) {
    const double at = parse_rfc3339(doc.value("finished", ""));
    const std::string state = doc.value("state", "");
    if (state == "running" || at <= 0) continue;
    finished.push_back({doc.value("id", ""), at});
    states[doc.value("id", "")] = state;
  }
  std::vector<CleanupItem> items;
  for (const auto& id : records_to_remove(finished, policy, now)) {
    items.push_back({"pipeline", id, 0, states[id]});
    if (!dry_run) records.remove(id);
  }
  return items;
}

}  // namespace kinetic
