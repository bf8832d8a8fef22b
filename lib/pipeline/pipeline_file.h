// A pipeline file (kinetic.yaml; docs/pipelines.md): named steps, each with the fields of
// `kinetic run` and the steps it needs. Parsed whole before anything runs; every mistake is one
// line naming the file, the line and the step (Error(Errc::usage)).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"

namespace kinetic {

struct PipelineStep {
  std::string name;
  int line = 0;      // where the step is defined (1-based), for messages
  std::string file;  // as written: relative to the pipeline file's directory
  std::vector<std::string> args;
  std::string accelerator;  // empty: cpu
  bool spot = false;
  bool flex_start = false;  // `flex-start: true`, as run --flex-start (docs/capacity.md)
  // As --env: NAME takes the caller's value (a secret: never in a key or a record), NAME=VALUE
  // is written in the pipeline file (so it is not a secret, and its value is part of the key).
  std::vector<std::string> env;
  std::vector<std::string> capture_env;  // as --capture-env: globs, their values secret
  std::optional<long> timeout_seconds;
  int retries = 0;
  int slices = 1;  // multislice (`run --slices`)
  // `run --priority` (low, normal, high; empty: normal): the step's turn in a cluster's queue.
  // Not part of its key: it changes when the step runs, not what it makes.
  std::string priority;
  std::vector<std::string> needs;  // names of the steps whose outputs are this step's inputs
};

struct PipelineFile {
  std::string display_name;         // the file as messages name it, e.g. "kinetic.yaml"
  fs::path path;                    // absolute (empty when parsed from text)
  fs::path dir;                     // where step files are looked for (absolute)
  std::vector<PipelineStep> steps;  // in the file's order

  const PipelineStep* find(std::string_view name) const;
  // The line of step NAME, for messages ("kinetic.yaml:4: step train: ...").
  std::string where(const PipelineStep& step) const;
};

// TEXT as a pipeline file named DISPLAY_NAME whose steps' files are relative to DIR. Checks the
// fields and their types, not the graph (step_graph.h) nor the files.
PipelineFile parse_pipeline(std::string_view text, const std::string& display_name,
                            const fs::path& dir);

// Reads PATH (relative to CWD unless absolute) and parses it; a missing file is a usage error
// saying how to name one.
PipelineFile load_pipeline_file(const std::string& path, const fs::path& cwd);

// The fields a step may have, as the file spells them.
const std::vector<std::string>& pipeline_step_fields();

}  // namespace kinetic
