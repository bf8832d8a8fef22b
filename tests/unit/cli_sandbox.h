// The CLI in-process on a sandbox: HOME, the state directory and both config directories under
// a fresh temporary directory, which is also the working directory while a command runs.
#pragma once

#include <string>
#include <vector>

#include "app.h"
#include "core/env.h"
#include "core/fs.h"

namespace kinetic::test {

class CliSandbox {
 public:
  explicit CliSandbox(const char* prefix) : root_(fs::temp_directory_path(), prefix) {}

  const fs::path& root() const { return root_.path(); }

  // A fixed environment pointing everything kinetic and gcloud read into the sandbox.
  Env env() const {
    const std::string r = root_.path().string();
    return Env::from_map({{"HOME", r + "/home"},
                          {"KINETIC_HOME", r + "/state"},
                          {"XDG_CONFIG_HOME", r + "/config"},
                          {"CLOUDSDK_CONFIG", r + "/gcloud"},
                          {"PATH", "/usr/bin:/bin"}});
  }

  // cli::run with ARGS, from inside the sandbox.
  int run(cli::Factory& f, const std::vector<std::string>& args) const {
    const fs::path before = fs::current_path();
    fs::current_path(root_.path());
    const int code = cli::run(f, args);
    fs::current_path(before);
    return code;
  }

 private:
  TempDir root_;
};

}  // namespace kinetic::test
