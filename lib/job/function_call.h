// `kinetic run --function CALL`: a pickled Python call, written by the Python package
// (python/kinetic), run in the job by the embedded function runner (lib/job/function_runner.py).
// The engine reads only the call file's header; the pickle is the Python side's business. The
// whole contract (the header, the runner's arguments, the result file) is in docs/python.md.
#pragma once

#include <string>
#include <string_view>

#include "core/fs.h"
#include "job/spec.h"

namespace kinetic {

// Where the runner leaves the call's outcome, relative to the job's outputs directory.
inline constexpr const char* kFunctionResultPath = ".kinetic/result.pkl";

// Reads CALL's header (its first line, JSON: {"kinetic_call": 1, "name": ...}) and hashes it.
// FLAG names the option in errors. Throws Error(Errc::usage), one line naming the file and
// what is wrong with it, for a missing file, a directory, or a file that is not a call file.
FunctionCall read_function_call(const fs::path& call, std::string_view flag);

// The runner's Python source, as embedded, and its sha256 (what a job checks it against).
std::string_view function_runner_source();
std::string function_runner_sha256();

}  // namespace kinetic
