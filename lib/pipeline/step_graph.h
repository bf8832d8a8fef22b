// The steps of a pipeline as a graph: each step after the steps it needs (docs/pipelines.md).
// Checked whole before anything runs: a need that names no step, or a cycle, is one line naming
// the file, the line and the step (Error(Errc::usage)).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "pipeline/pipeline_file.h"

namespace kinetic {

// Every step after the steps it needs; among steps ready at once, the file's order.
std::vector<const PipelineStep*> dependency_order(const PipelineFile& file);

// The steps a run selects: all of them; with ONLY, those alone; with FROM, that step and every
// step that needs it, directly or not. A name that is no step is a usage error (did you mean).
std::set<std::string> select_steps(const PipelineFile& file, const std::vector<std::string>& only,
                                   const std::string& from);

// The steps that need STEP, directly or not (STEP itself excluded).
std::set<std::string> dependents_of(const PipelineFile& file, const std::string& step);

// Whether two of STEPS could run at the same time: neither needs the other, directly or not.
bool may_overlap(const PipelineFile& file, const std::set<std::string>& steps);

// Checks that NAME is a step of FILE, for a flag such as --only: Error(Errc::usage) with
// "did you mean" otherwise.
void require_step(const PipelineFile& file, const std::string& name, const std::string& flag);

}  // namespace kinetic
