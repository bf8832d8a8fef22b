// The process environment behind a seam, so configuration precedence can be tested with a map.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kinetic {

class Env {
 public:
  using Getter = std::function<std::optional<std::string>(const std::string&)>;
  using Lister = std::function<std::vector<std::pair<std::string, std::string>>()>;

  // The real environment of this process.
  static Env process();
  // A fixed environment, for tests.
  static Env from_map(std::map<std::string, std::string> vars);

  // The value of NAME, or nullopt when unset. An empty value counts as set.
  std::optional<std::string> get(const std::string& name) const { return get_(name); }
  // The value of NAME when set and non-empty.
  std::optional<std::string> get_nonempty(const std::string& name) const;
  // Every NAME=VALUE pair, in the environment's order.
  std::vector<std::pair<std::string, std::string>> all() const { return list_(); }

 private:
  Env(Getter get, Lister list) : get_(std::move(get)), list_(std::move(list)) {}
  Getter get_;
  Lister list_;
};

// A number of seconds from NAME (KINETIC_*_SECONDS knobs), FALLBACK when unset; anything but a
// non-negative number throws Error(Errc::config) naming the variable and the default.
double seconds_from_env(const Env& env, const std::string& name, double fallback);

}  // namespace kinetic
