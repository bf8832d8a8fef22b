#include "core/env.h"

#include <cstdio>
#include <exception>

#include "core/error.h"

#include <cstdlib>
#include <cstring>
#include <memory>

extern char** environ;

namespace kinetic {

Env Env::process() {
  return Env(
      [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (v == nullptr) return std::nullopt;
        return std::string(v);
      },
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
          const char* eq = std::strchr(*e, '=');
          if (eq == nullptr) continue;
          out.emplace_back(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
        }
        return out;
      });
}

Env Env::from_map(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return Env(
      [shared](const std::string& name) -> std::optional<std::string> {
        auto it = shared->find(name);
        if (it == shared->end()) return std::nullopt;
        return it->second;
      },
      [shared] {
        return std::vector<std::pair<std::string, std::string>>(shared->begin(), shared->end());
      });
}

std::optional<std::string> Env::get_nonempty(const std::string& name) const {
  auto v = get(name);
  if (!v || v->empty()) return std::nullopt;
  return v;
}

double seconds_from_env(const Env& env, const std::string& name, double fallback) {
  auto v = env.get_nonempty(name);
  if (!v) return fallback;
  try {
    size_t used = 0;
    const double seconds = std::stod(*v, &used);
    if (used == v->size() && seconds >= 0) return seconds;
  } catch (const std::exception&) {
  }
  char def[32];
  std::snprintf(def, sizeof def, "%g", fallback);
  throw Error(Errc::config,
              name + "=" + *v + " is not a number of seconds; unset it for the default " + def);
}

}  // namespace kinetic
