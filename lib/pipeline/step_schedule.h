// Which steps of a pipeline run start next, and which can never run: the pure decision the
// runner's loop (pipeline_runner.cpp) takes each time a step ends, so it is tested without jobs
// or threads.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kinetic {

enum class StepState { waiting, running, succeeded, reused, failed, skipped };

std::string_view state_name(StepState s);

// What the schedule knows of a step.
struct StepSlot {
  std::string name;
  std::vector<std::string> needs;
  StepState state = StepState::waiting;
};

struct ScheduleDecision {
  // Waiting steps whose needs all succeeded or were reused, in the run's order, as many as
  // max_parallel leaves room for beside the steps running.
  std::vector<std::string> start;
  // Waiting steps that can never run, in the run's order, each with the need that stops it (a
  // failed or skipped one, this decision's skips included); "" when the run was interrupted.
  std::vector<std::pair<std::string, std::string>> skip;
};

// STEPS in dependency order (step_graph.h); a need that is not among them counts as done.
ScheduleDecision schedule(const std::vector<StepSlot>& steps, int max_parallel, bool interrupted);

}  // namespace kinetic
