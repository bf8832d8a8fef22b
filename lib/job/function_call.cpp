#include "job/function_call.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "pack/sha256.h"

namespace kinetic {

// The source: lib/job/function_runner.py, embedded at build time without its comments
// (cmake/embed_python.cmake).
extern const std::string_view kFunctionRunnerSource;

namespace {

// The header is one short line; a file whose first 64 KiB hold no newline is no call file.
constexpr size_t kMaxHeaderBytes = 64 * 1024;

[[noreturn]] void not_a_call(const fs::path& call, std::string_view flag, const std::string& why) {
  throw Error(Errc::usage, std::string(flag) + " " + call.string() + ": not a kinetic call file (" +
                               why + "); it is written by the Python package (@kinetic.run)");
}

}  // namespace

FunctionCall read_function_call(const fs::path& call, std::string_view flag) {
  std::error_code ec;
  const auto st = fs::status(call, ec);
  if (ec || !fs::exists(st))
    throw Error(Errc::usage, std::string(flag) + " " + call.string() + ": no such file");
  if (!fs::is_regular_file(st))
    throw Error(Errc::usage, std::string(flag) + " " + call.string() + ": not a regular file");
  std::ifstream in(call, std::ios::binary);
  std::string header;
  char c = 0;
  while (header.size() < kMaxHeaderBytes && in.get(c) && c != '\n') header += c;
  if (c != '\n') not_a_call(call, flag, "no header line");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception&) {
    not_a_call(call, flag, "its first line is not JSON");
  }
  if (!j.is_object() || !j.contains("kinetic_call") || !j["kinetic_call"].is_number_integer())
    not_a_call(call, flag, "no kinetic_call in its header");
  if (j["kinetic_call"].get<long long>() != 1)
    not_a_call(call, flag,
               "format " + j["kinetic_call"].dump() +
                   ", this kinetic reads format 1: use the Python package installed with it");
  if (j.contains("name") && !j["name"].is_string()) not_a_call(call, flag, "its name is not text");
  FunctionCall f;
  f.name = j.value("name", "");
  f.sha256 = sha256_file(call);
  f.bytes = static_cast<long long>(fs::file_size(call, ec));
  f.runner_sha256 = function_runner_sha256();
  f.local_path = call.string();
  return f;
}

std::string_view function_runner_source() {
  return kFunctionRunnerSource;
}

std::string function_runner_sha256() {
  return sha256_hex(kFunctionRunnerSource);
}

}  // namespace kinetic
