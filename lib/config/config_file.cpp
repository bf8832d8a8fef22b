#include "config/config_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

namespace {

[[noreturn]] void malformed(const fs::path& path, int line, const std::string& what) {
  throw Error(Errc::config, "malformed config file " + path.string() + " line " +
                                std::to_string(line + 1) + ": " + what +
                                "; fix it or move it away to start from the defaults");
}

std::string scalar(const fs::path& path, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) malformed(path, node.Mark().line, "'" + key + "' must be a string");
  return node.Scalar();
}

Context local_context() {
  Context c;
  c.name = kLocalContext;
  c.backend = "local";
  return c;
}

}  // namespace

const std::vector<std::string>& context_keys() {
  static const std::vector<std::string> keys = {"backend",   "project",   "zone",       "region",
                                                "cluster",   "namespace", "base-image", "prices",
                                                "auto-down", "notify"};
  return keys;
}

ConfigFile ConfigFile::load(const fs::path& path) {
  ConfigFile cfg;
  cfg.path_ = path;
  cfg.contexts_.push_back(local_context());
  auto text = read_file(path);
  if (!text) return cfg;

  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::ParserException& e) {
    malformed(path, e.mark.line, e.msg);
  }
  if (root.IsNull()) return cfg;
  if (!root.IsMap()) malformed(path, root.Mark().line, "expected a mapping at the top level");

  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>("");
    const YAML::Node& value = kv.second;
    if (key == "current-context") {
      cfg.current_ = scalar(path, value, key);
    } else if (key == "contexts") {
      if (value.IsNull()) continue;
      if (!value.IsSequence()) malformed(path, value.Mark().line, "'contexts' must be a list");
      for (const auto& item : value) {
        if (!item.IsMap()) malformed(path, item.Mark().line, "each context must be a mapping");
        Context c;
        for (const auto& f : item) {
          const std::string fk = f.first.as<std::string>("");
          const std::string fv = scalar(path, f.second, fk);
          if (fk == "name") {
            c.name = fv;
          } else if (fk == "backend") {
            c.backend = fv;
          } else if (fk == "project") {
            c.project = fv;
          } else if (fk == "zone") {
            c.zone = fv;
          } else if (fk == "region") {
            c.region = fv;
          } else if (fk == "cluster") {
            c.cluster = fv;
          } else if (fk == "namespace") {
            c.namespace_ = fv;
          } else if (fk == "base-image") {
            c.base_image = fv;
          } else if (fk == "prices") {
            c.prices = fv;
          } else if (fk == "auto-down") {
            c.auto_down = fv;
          } else if (fk == "notify") {
            c.notify = fv;
          } else {
            auto near = closest_matches(fk, context_keys(), 1);
            malformed(path, f.first.Mark().line,
                      "unknown context key '" + fk + "'" +
                          (near.empty() ? "" : "; did you mean " + near[0] + "?"));
          }
        }
        if (c.name.empty()) malformed(path, item.Mark().line, "a context has no 'name'");
        if (c.backend != "local" && c.backend != "gke")
          malformed(path, item.Mark().line,
                    "context '" + c.name + "' has unknown backend '" + c.backend +
                        "' (expected local or gke)");
        if (c.name == kLocalContext) {
          cfg.contexts_[0] = c;
        } else if (cfg.find(c.name) != nullptr) {
          malformed(path, item.Mark().line, "context '" + c.name + "' is defined twice");
        } else {
          cfg.contexts_.push_back(c);
        }
      }
    } else {
      malformed(path, kv.first.Mark().line,
                "unknown key '" + key + "' (expected current-context or contexts)");
    }
  }
  return cfg;
}

void ConfigFile::save() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "current-context" << YAML::Value << current_;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq;
  for (const auto& c : contexts_) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << c.name;
    out << YAML::Key << "backend" << YAML::Value << c.backend;
    auto field = [&](const char* k, const std::string& v) {
      if (!v.empty()) out << YAML::Key << k << YAML::Value << v;
    };
    field("project", c.project);
    field("zone", c.zone);
    field("region", c.region);
    field("cluster", c.cluster);
    field("namespace", c.namespace_);
    field("base-image", c.base_image);
    field("prices", c.prices);
    field("auto-down", c.auto_down);
    field("notify", c.notify);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  atomic_write(path_, std::string(out.c_str()) + "\n", 0600);
}

void ConfigFile::set_current_context(const std::string& name) {
  (void)get(name);
  current_ = name;
}

const Context* ConfigFile::find(const std::string& name) const {
  auto it = std::find_if(contexts_.begin(), contexts_.end(),
                         [&](const Context& c) { return c.name == name; });
  return it == contexts_.end() ? nullptr : &*it;
}

const Context& ConfigFile::get(const std::string& name) const {
  if (const Context* c = find(name)) return *c;
  std::vector<std::string> names;
  for (const auto& c : contexts_) names.push_back(c.name);
  auto near = closest_matches(name, names);
  throw Error(Errc::not_found, "no context named '" + name + "'" +
                                   (near.empty() ? "" : "; did you mean " + join_or(near) + "?") +
                                   " (run `kinetic config get-contexts` to list them)");
}

Context& ConfigFile::upsert(const std::string& name) {
  for (auto& c : contexts_)
    if (c.name == name) return c;
  Context c;
  c.name = name;
  contexts_.push_back(c);
  return contexts_.back();
}

void ConfigFile::set(const std::string& name, const std::string& key, const std::string& value) {
  const auto& keys = context_keys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    auto near = closest_matches(key, keys);
    throw Error(
        Errc::usage, "unknown config key '" + key + "'" +
                         (near.empty() ? "" : "; did you mean " + join_or(near) + "?") +
                         " (keys: current-context, or " +
                         [&] {
                           std::string s;
                           for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
                           return s;
                         }() +
                         ")");
  }
  if (key == "backend" && value != "local" && value != "gke")
    throw Error(Errc::usage, "unknown backend '" + value + "'; expected local or gke");
  Context& c = upsert(name);
  if (key == "backend") c.backend = value;
  if (key == "project") c.project = value;
  if (key == "zone") c.zone = value;
  if (key == "region") c.region = value;
  if (key == "cluster") c.cluster = value;
  if (key == "namespace") c.namespace_ = value;
  if (key == "base-image") c.base_image = value;
  if (key == "prices") c.prices = value;
  if (key == "auto-down") c.auto_down = value;
  if (key == "notify") c.notify = value;
}

}  // namespace kinetic
