// A step's cache key (docs/pipelines.md "Cache"): the sha256 of everything that decides what the
// step produces, so an unchanged key with its outputs still there means the step need not run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pipeline/pipeline_file.h"

namespace kinetic {

struct StepKeyInputs {
  std::string context_sha256;  // the project folder as packed
  std::string image;           // the image recipe's tag (or --image)
  std::string file;            // relative to the context root
  std::string workdir;
  std::vector<std::string> args;
  std::string accelerator;  // canonical name, ":spot" when spot, " xN" for N slices
  // Variables written in the pipeline file (NAME=VALUE): not secrets, so their values count.
  std::map<std::string, std::string> env;
  // Variables whose values are secrets (taken from the caller's environment, or captured by
  // glob): their names and globs count, never their values.
  std::vector<std::string> secret_env;
  std::vector<std::string> capture_env;
  // The keys of the steps it needs, by name: a change upstream reruns everything downstream.
  std::map<std::string, std::string> needs;
};

// What STEP's key covers, from its prepared job's facts. Takes no environment values at all:
// only the step's own text decides which variables are written in the file.
StepKeyInputs step_key_inputs(const PipelineStep& step, const std::string& context_sha256,
                              const std::string& image, const std::string& file,
                              const std::string& workdir, const std::string& accelerator,
                              const std::map<std::string, std::string>& needs_keys);

// 64 hex digits over a canonical JSON encoding of INPUTS (versioned, so a change of what keys
// cover never reuses an older step's outputs).
std::string step_key(const StepKeyInputs& inputs);

}  // namespace kinetic
