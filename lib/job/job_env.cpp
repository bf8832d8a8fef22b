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

// Variables that steer kinetic, gcloud or Google's libraries: in the pod they would redirect or
// re-credential the bootstrap (where it reads and writes the job's record, which token it
// uses). A wildcard never takes them; named exactly they pass, with a warning.
bool google_control_variable(const std::string& n) {
  static const std::vector<std::string> names = {"STORAGE_EMULATOR_HOST", "GCE_METADATA_HOST",
                                                 "GCE_METADATA_IP", "GCE_METADATA_ROOT",
                                                 "GOOGLE_APPLICATION_CREDENTIALS"};
  return std::find(names.begin(), names.end(), n) != names.end() || starts_with(n, "CLOUDSDK_") ||
         starts_with(n, "KINETIC_");
}

// Variables that decide how the pod reaches the network, whom it trusts and which Python runs:
// a laptop's proxy would carry the bootstrap's metadata-token request and the bucket's traffic
// (or fail them: the proxy is not reachable from the cluster), its CA bundle is a path on the
// laptop, and its PYTHONHOME breaks the image's python3, the bootstrap's included. Same rule as
// above: never by wildcard, by exact name with a warning (a corporate proxy the cluster does
// reach is a reason to name one).
bool network_control_variable(const std::string& n) {
  static const std::vector<std::string> names = {
      "HTTP_PROXY",         "http_proxy",     "HTTPS_PROXY",
      "https_proxy",        "NO_PROXY",       "no_proxy",
      "ALL_PROXY",          "all_proxy",      "GRPC_PROXY",
      "grpc_proxy",         "SSL_CERT_FILE",  "SSL_CERT_DIR",
      "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
      "PYTHONHOME",         "PYTHONUSERBASE"};
  return std::find(names.begin(), names.end(), n) != names.end();
}

bool control_variable(const std::string& n) {
  return google_control_variable(n) || network_control_variable(n);
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

// A control variable named exactly: passed, since the user asked, but said aloud.
void add_named(JobEnv& out, const std::string& flag, const std::string& name,
               const std::string& value) {
  add(out, name, value);
  if (google_control_variable(name)) {
    out.warnings.push_back(flag + " " + name +
                           ": passing a variable that steers Google's tools in " +
                           "the job (where its record is stored, which credentials it uses); " +
                           "drop it unless that is what you want");
  } else if (network_control_variable(name)) {
    out.warnings.push_back(flag + " " + name +
                           ": passing a variable that decides how the job's pod reaches the " +
                           "network or which Python runs (the bootstrap's requests for its " +
                           "token and record use it too); drop it unless the cluster needs it");
  }
}

}  // namespace

JobEnv build_job_env(const std::vector<std::string>& env_flags,
                     const std::vector<std::string>& capture_globs, const Env& caller) {
  JobEnv out;
  for (const auto& glob : capture_globs) {
    bool exact = glob.find_first_of("*?[") == std::string::npos;
    size_t before = out.names.size();
    std::vector<std::string> skipped;
    if (exact) {
      if (auto v = caller.get(glob)) add_named(out, "--capture-env", glob, *v);
    } else {
      auto all = caller.all();
      std::sort(all.begin(), all.end());
      for (const auto& [k, v] : all) {
        if (::fnmatch(glob.c_str(), k.c_str(), 0) != 0) continue;
        if (control_variable(k)) {
          skipped.push_back(k);
        } else if (!host_specific(k)) {
          add(out, k, v);
        }
      }
    }
    if (!skipped.empty()) {
      std::string list;
      for (const auto& k : skipped) list += (list.empty() ? "" : ", ") + k;
      out.warnings.push_back("--capture-env '" + glob + "' left out " + list +
                             ": they steer kinetic, Google's tools, the pod's proxy, trusted CAs "
                             "or Python, and a wildcard never takes them; name one with --env "
                             "NAME to pass it");
    } else if (out.names.size() == before) {
      out.warnings.push_back("--capture-env '" + glob + "' matched no variable");
    }
  }
  for (const auto& flag : env_flags) {
    auto eq = flag.find('=');
    if (eq == std::string::npos) {
      auto v = caller.get(flag);
      if (!v)
        throw Error(Errc::usage, "--env " + flag + ": " + flag +
                                     " is not set in your environment; set it or pass --env " +
                                     flag + "=VALUE");
      add_named(out, "--env", flag, *v);
    } else {
      add_named(out, "--env", flag.substr(0, eq), flag.substr(eq + 1));
    }
  }
  return out;
}

}  // namespace kinetic
