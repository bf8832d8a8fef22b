#include "config/paths.h"

#include <pwd.h>
#include <unistd.h>

namespace kinetic {

fs::path home_dir(const Env& env) {
  if (auto h = env.get_nonempty("HOME")) return *h;
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr)
    return pw->pw_dir;
  return "/";
}

fs::path config_file_path(const Env& env) {
  fs::path base;
  if (auto x = env.get_nonempty("XDG_CONFIG_HOME")) {
    base = *x;
  } else {
    base = home_dir(env) / ".config";
  }
  return base / "kinetic" / "config.yaml";
}

fs::path state_dir_path(const Env& env) {
  if (auto k = env.get_nonempty("KINETIC_HOME")) return *k;
  if (auto x = env.get_nonempty("XDG_STATE_HOME")) return fs::path(*x) / "kinetic";
  return home_dir(env) / ".local" / "state" / "kinetic";
}

}  // namespace kinetic
