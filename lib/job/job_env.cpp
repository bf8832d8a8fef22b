#include "job/job_env.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

namespace {

bool valid_name(const std::string& n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Variables that describe this machine, not the job: a wildcard never takes them.
bool host_specific(const std::string& n) {
  static const std::vector<std::string> names = {"PATH",
                                                 "HOME",
                                                 "PYTHONPATH",
                                                 "LD_LIBRARY_PATH",
                                                 "LD_PRELOAD",
                                                 "VIRTUAL_ENV",
                                                 "CONDA_PREFIX",
                                                 "CONDA_DEFAULT_ENV",
                                                 "SHELL",
                                                 "TMPDIR",
                                                 "TEMP",
                                                 "TMP",
                                                 "HOSTNAME",
                                                 "USER",
                                                 "LOGNAME",
                                                 "SSH_AUTH_SOCK",
                                                 "KUBERNETES_SERVICE_HOST",
                                                 "PWD",
                                                 "OLDPWD",
                                                 "SHLVL",
                                                 "_",
                                                 "TERM",
                                                 "DISPLAY",
                                                 "XDG_RUNTIME_DIR"};
  return std::find(names.begin(), names.end(), n) != names.end() || starts_with(n, "KINETIC_");
}

void add(JobEnv& out, const std::string& name, const std::string& value) {
  if (!valid_name(name))
    throw Error(Errc::usage, "invalid environment variable name '" + name +
                                 "'; names are letters, digits and '_', not starting with a digit");
  if (starts_with(name, "KINETIC_"))
    throw Error(Errc::usage, "'" + name + "' is set by kinetic itself; choose another name");
  if (!out.values.count(name)) out.names.push_back(name);
  out.values[name] = value;
}

}  // namespace

JobEnv build_job_env(const std::vector<std::string>& env_flags,
                     const std::vector<std::string>& capture_globs, const Env& caller) {
  JobEnv out;
  for (const auto& glob : capture_globs) {
    bool exact = glob.find_first_of("*?[") == std::string::npos;
    size_t before = out.names.size();
    if (exact) {
      if (auto v = caller.get(glob)) add(out, glob, *v);
    } else {
      auto all = caller.all();
      std::sort(all.begin(), all.end());
      for (const auto& [k, v] : all)
        if (::fnmatch(glob.c_str(), k.c_str(), 0) == 0 && !host_specific(k)) add(out, k, v);
    }
    if (out.names.size() == before)
      out.warnings.push_back("--capture-env '" + glob + "' matched no variable");
  }
  for (const auto& flag : env_flags) {
    auto eq = flag.find('=');
    if (eq == std::string::npos) {
      auto v = caller.get(flag);
      if (!v)
        throw Error(Errc::usage, "--env " + flag + ": " + flag +
                                     " is not set in your environment; set it or pass --env " +
                                     flag + "=VALUE");
      add(out, flag, *v);
    } else {
      add(out, flag.substr(0, eq), flag.substr(eq + 1));
    }
  }
  return out;
}

}  // namespace kinetic
