#include "pipeline/step_schedule.h"

#include <map>

namespace kinetic {

std::string_view state_name(StepState s) {
  switch (s) {
    case StepState::waiting:
      return "waiting";
    case StepState::running:
      return "running";
    case StepState::succeeded:
      return "succeeded";
    case StepState::reused:
      return "reused";
    case StepState::failed:
      return "failed";
    case StepState::skipped:
      return "skipped";
  }
  return "waiting";
}

ScheduleDecision schedule(const std::vector<StepSlot>& steps, int max_parallel, bool interrupted) {
  ScheduleDecision d;
  // The states as this decision leaves them: a skip stops the steps after it in the same pass.
  std::map<std::string, StepState> state;
  int running = 0;
  for (const auto& s : steps) {
    state[s.name] = s.state;
    running += s.state == StepState::running ? 1 : 0;
  }
  for (const auto& s : steps) {
    if (s.state != StepState::waiting) continue;
    if (interrupted) {
      d.skip.emplace_back(s.name, "");
      state[s.name] = StepState::skipped;
      continue;
    }
    std::string blocker;
    bool ready = true;
    for (const auto& need : s.needs) {
      auto it = state.find(need);
      if (it == state.end()) continue;
      if (it->second == StepState::failed || it->second == StepState::skipped) {
        blocker = need;
        break;
      }
      ready = ready && (it->second == StepState::succeeded || it->second == StepState::reused);
    }
    if (!blocker.empty()) {
      d.skip.emplace_back(s.name, blocker);
      state[s.name] = StepState::skipped;
      continue;
    }
    if (!ready || running >= max_parallel) continue;
    d.start.push_back(s.name);
    state[s.name] = StepState::running;
    ++running;
  }
  return d;
}

}  // namespace kinetic
