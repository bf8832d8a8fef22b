// Which finished records `kinetic cleanup` removes: --older-than and --keep-last, the same rule
// on every backend (docs/run-record.md "How long a record is kept").
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kinetic {

constexpr long kDefaultKeepSeconds = 7L * 24 * 3600;  // a week: `logs` and `status` after the fact

struct CleanupPolicy {
  // Staging objects and temporaries unused this long go; so do finished records, unless
  // --keep-last was given alone.
  long older_than_seconds = kDefaultKeepSeconds;
  // The N latest finished records stay whatever their age.
  std::optional<size_t> keep_last;
  // False for --keep-last alone: records then go by count only, not by age.
  bool records_by_age = true;
};

// A finished job's record: its id and when it finished (Unix seconds).
struct FinishedRecord {
  std::string id;
  double finished = 0;
};

// The ids of RECORDS that POLICY removes at NOW: those not among the keep_last latest and, when
// records go by age too, finished at least older_than_seconds ago. Ties in time keep the greater
// id, so the choice does not depend on the order records were listed in.
std::set<std::string> records_to_remove(std::vector<FinishedRecord> records,
                                        const CleanupPolicy& policy, double now);

}  // namespace kinetic
