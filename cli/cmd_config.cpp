// kinetic config view | get-contexts | use-context NAME | set KEY VALUE
#include "app.h"
#include "core/error.h"
#include "core/strings.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

nlohmann::ordered_json context_json(const Context& c) {
  nlohmann::ordered_json j = {{"name", c.name}, {"backend", c.backend}};
  if (!c.project.empty()) j["project"] = c.project;
  if (!c.zone.empty()) j["zone"] = c.zone;
  if (!c.region.empty()) j["region"] = c.region;
  if (!c.cluster.empty()) j["cluster"] = c.cluster;
  if (!c.namespace_.empty()) j["namespace"] = c.namespace_;
  if (!c.base_image.empty()) j["base_image"] = c.base_image;
  return j;
}

int run_view(Factory& f) {
  const auto format = f.format({OutputFormat::table, OutputFormat::json, OutputFormat::yaml});
  ConfigFile& cfg = f.config();
  const Settings& s = f.settings();
  std::vector<std::pair<std::string, const Setting*>> rows = {
      {"context", &s.context},      {"project", &s.project}, {"zone", &s.zone},
      {"region", &s.region},        {"cluster", &s.cluster}, {"namespace", &s.namespace_},
      {"base-image", &s.base_image}};
  IOStreams& io = f.io();
  Printable p{.kind = "Config"};
  // Keyed by setting name, as `kinetic config set` takes them.
  nlohmann::ordered_json resolved = nlohmann::ordered_json::object();
  resolved["backend"] = s.backend;
  for (const auto& [k, v] : rows) resolved[k] = {{"value", v->value}, {"source", v->source}};
  nlohmann::ordered_json contexts = nlohmann::ordered_json::array();
  for (const auto& c : cfg.contexts()) contexts.push_back(context_json(c));
  p.fields = {{"config_file", cfg.path().string()},
              {"current_context", cfg.current_context()},
              {"contexts", contexts},
              {"resolved", resolved}};
  p.table = [&](bool) {
    Table t({"SETTING", "VALUE", "SOURCE"});
    t.add_row({"backend", s.backend, "context " + s.context.value});
    for (const auto& [k, v] : rows)
      t.add_row({k, v->value.empty() ? "-" : v->value, v->source.empty() ? "-" : v->source});
    return t;
  };
  print(io, format, p);
  if (format != OutputFormat::table) return 0;
  io.info("config file: " + cfg.path().string() +
          "; precedence: flag > KINETIC_* environment > context > gcloud config > default");
  return 0;
}

int run_get_contexts(Factory& f) {
  const auto format =
      f.format({OutputFormat::table, OutputFormat::json, OutputFormat::yaml, OutputFormat::name});
  ConfigFile& cfg = f.config();
  const std::string current = f.settings().context.value;
  IOStreams& io = f.io();
  Printable p{.kind = "ContextList"};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& c : cfg.contexts()) {
    auto j = context_json(c);
    j["current"] = c.name == current;
    list.push_back(j);
    p.names.push_back(c.name);
  }
  p.fields = {{"contexts", list}};
  p.table = [&](bool) {
    Table t({"CURRENT", "NAME", "BACKEND", "PROJECT", "LOCATION", "CLUSTER"});
    for (const auto& c : cfg.contexts()) {
      std::string loc = !c.zone.empty() ? c.zone : c.region;
      t.add_row({c.name == current ? "*" : "", c.name, c.backend,
                 c.project.empty() ? "-" : c.project, loc.empty() ? "-" : loc,
                 c.cluster.empty() ? "-" : c.cluster});
    }
    return t;
  };
  print(io, format, p);
  return 0;
}

int run_use_context(Factory& f, const std::string& name) {
  ConfigFile& cfg = f.config();
  cfg.set_current_context(name);
  cfg.save();
  f.io().info("switched to context \"" + name + "\"");
  return 0;
}

int run_set(Factory& f, const std::string& key, const std::string& value) {
  ConfigFile& cfg = f.config();
  if (key == "current-context") return run_use_context(f, value);
  std::string context = f.settings().context.value;
  std::string field = key;
  if (starts_with(key, "contexts.")) {
    auto parts = split(key, '.');
    if (parts.size() != 3 || parts[1].empty())
      throw Error(Errc::usage, "bad key '" + key +
                                   "'; use contexts.NAME.KEY, e.g. "
                                   "contexts.acme.project");
    context = parts[1];
    field = parts[2];
  }
  if (context == kLocalContext && field == "backend" && value != "local")
    throw Error(Errc::usage,
                "the built-in local context always uses the local backend; "
                "create another one, e.g. `kinetic config set contexts.NAME."
                "backend gke`");
  cfg.set(context, field, value);
  cfg.save();
  f.io().info("set " + field + " = " + value + " on context \"" + context + "\"");
  return 0;
}

}  // namespace

void add_config(CLI::App& root, Factory& f, Action& action) {
  CLI::App* c = root.add_subcommand("config", "View and change contexts and settings");
  c->require_subcommand(0, 1);
  c->footer(
      "Examples:\n"
      "  kinetic config view\n"
      "  kinetic config get-contexts\n"
      "  kinetic config set contexts.acme.backend gke\n"
      "  kinetic config set contexts.acme.project acme-ml\n"
      "  kinetic config use-context acme");

  CLI::App* view =
      c->add_subcommand("view",
                        "Show each setting, its value and where it came from (flag, environment, "
                        "context, gcloud config)");
  view->callback([&f, &action] { action = [&f] { return run_view(f); }; });

  CLI::App* get = c->add_subcommand("get-contexts", "List the contexts; * marks the current one");
  get->callback([&f, &action] { action = [&f] { return run_get_contexts(f); }; });

  auto name = std::make_shared<std::string>();
  CLI::App* use = c->add_subcommand("use-context", "Make NAME the current context");
  use->add_option("name", *name, "Context name")->required();
  use->callback([&f, &action, name] { action = [&f, name] { return run_use_context(f, *name); }; });

  auto kv = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* set = c->add_subcommand(
      "set",
      "Set KEY to VALUE: current-context, a key of the current context (backend, project, "
      "zone, region, cluster, namespace, base-image) or contexts.NAME.KEY (creates NAME)");
  set->add_option("key", kv->first, "Key")->required();
  set->add_option("value", kv->second, "Value")->required();
  set->callback(
      [&f, &action, kv] { action = [&f, kv] { return run_set(f, kv->first, kv->second); }; });
}

}  // namespace kinetic::cli
