// kinetic config view | get-contexts | use-context NAME | set KEY VALUE
#include "app.h"
#include "backend/auto_down_state.h"
#include "backend/notify.h"
#include "core/error.h"
#include "core/strings.h"
#include "job/pricing.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

// The notify setting's URLs are secrets (a webhook's token is in its path): shown as
// scheme://host/… only.
std::string redacted_notify(const std::string& value) {
  std::string out;
  for (const auto& url : split(value, ','))
    if (!trim(url).empty()) out += (out.empty() ? "" : ",") + redact_url(std::string(trim(url)));
  return out;
}

nlohmann::ordered_json context_json(const Context& c) {
  nlohmann::ordered_json j = {{"name", c.name}, {"backend", c.backend}};
  if (!c.project.empty()) j["project"] = c.project;
  if (!c.zone.empty()) j["zone"] = c.zone;
  if (!c.region.empty()) j["region"] = c.region;
  if (!c.cluster.empty()) j["cluster"] = c.cluster;
  if (!c.namespace_.empty()) j["namespace"] = c.namespace_;
  if (!c.base_image.empty()) j["base_image"] = c.base_image;
  if (!c.prices.empty()) j["prices"] = c.prices;
  if (!c.auto_down.empty()) j["auto_down"] = c.auto_down;
  if (!c.notify.empty()) j["notify"] = redacted_notify(c.notify);
  return j;
}

struct ConfigView : PrintingOptions {
  ConfigView() : PrintingOptions({OutputFormat::table, OutputFormat::json, OutputFormat::yaml}) {}
  int run(Factory& f) override;
};

int ConfigView::run(Factory& f) {
  ConfigFile& cfg = f.config();
  const Settings& s = f.settings();
  std::vector<std::pair<std::string, const Setting*>> rows = {
      {"context", &s.context},       {"project", &s.project}, {"zone", &s.zone},
      {"region", &s.region},         {"cluster", &s.cluster}, {"namespace", &s.namespace_},
      {"base-image", &s.base_image}, {"prices", &s.prices},   {"auto-down", &s.auto_down}};
  Setting notify = s.notify;
  notify.value = redacted_notify(notify.value);
  rows.emplace_back("notify", &notify);
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

struct ConfigGetContexts : PrintingOptions {
  ConfigGetContexts()
      : PrintingOptions(
            {OutputFormat::table, OutputFormat::json, OutputFormat::yaml, OutputFormat::name}) {}
  int run(Factory& f) override;
};

int ConfigGetContexts::run(Factory& f) {
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

struct ConfigUseContext : CommandOptions {
  std::string name;
  int run(Factory& f) override { return run_use_context(f, name); }
};

struct ConfigSet : CommandOptions {
  std::string key;
  std::string value;

  // contexts.NAME.KEY split into NAME and KEY; no NAME for a key of the current context.
  std::pair<std::string, std::string> target() const {
    if (!starts_with(key, "contexts.")) return {"", key};
    auto parts = split(key, '.');
    if (parts.size() != 3 || parts[1].empty())
      throw Error(Errc::usage, "bad key '" + key +
                                   "'; use contexts.NAME.KEY, e.g. "
                                   "contexts.acme.project");
    return {parts[1], parts[2]};
  }

  void validate() const override {
    if (key == "current-context") return;
    const auto [context, field] = target();
    if (!context.empty()) refuse_local_backend(context, field);
    if (field == "prices") (void)parse_price_book(value);  // a bad one is refused, not saved
    if (field == "auto-down") (void)parse_auto_down(value, "auto-down");
    if (field == "notify")
      for (const auto& url : split(value, ','))
        if (!trim(url).empty()) require_notify_url(std::string(trim(url)), "notify");
  }

  // The current context is known only once the config is read (run).
  void refuse_local_backend(const std::string& context, const std::string& field) const {
    if (context == kLocalContext && field == "backend" && value != "local")
      throw Error(Errc::usage,
                  "the built-in local context always uses the local backend; "
                  "create another one, e.g. `kinetic config set contexts.NAME."
                  "backend gke`");
  }

  int run(Factory& f) override {
    if (key == "current-context") return run_use_context(f, value);
    auto [context, field] = target();
    if (context.empty()) context = f.settings().context.value;
    refuse_local_backend(context, field);
    ConfigFile& cfg = f.config();
    cfg.set(context, field, value);
    cfg.save();
    const std::string shown = field == "notify" ? redacted_notify(value) : value;
    f.io().info("set " + field + " = " + shown + " on context \"" + context + "\"");
    return 0;
  }
};

}  // namespace

void add_config(CLI::App& root, Factory&, Action& action) {
  CLI::App* c = root.add_subcommand("config", "View and change contexts and settings");
  c->require_subcommand(0, 1);
  c->footer(
      "Examples:\n"
      "  kinetic config view\n"
      "  kinetic config get-contexts\n"
      "  kinetic config set contexts.acme.backend gke\n"
      "  kinetic config set contexts.acme.project acme-ml\n"
      "  kinetic config set prices 'v5litepod-8=3.50,e2-standard-4=0.12'   # negotiated prices\n"
      "  kinetic config set prices 'v5litepod-8:spot=1.40'   # your Spot price (none in the "
      "catalog)\n"
      "  kinetic config set auto-down 2h   # the next `kinetic up` makes the cluster delete "
      "itself\n"
      "  kinetic config use-context acme");

  CLI::App* view =
      c->add_subcommand("view",
                        "Show each setting, its value and where it came from (flag, environment, "
                        "context, gcloud config)");
  on_parse(view, action, std::make_shared<ConfigView>());

  CLI::App* get = c->add_subcommand("get-contexts", "List the contexts; * marks the current one");
  on_parse(get, action, std::make_shared<ConfigGetContexts>());

  auto use_options = std::make_shared<ConfigUseContext>();
  CLI::App* use = c->add_subcommand("use-context", "Make NAME the current context");
  use->add_option("name", use_options->name, "Context name")->required();
  on_parse(use, action, use_options);

  auto set_options = std::make_shared<ConfigSet>();
  CLI::App* set = c->add_subcommand(
      "set",
      "Set KEY to VALUE: current-context, a key of the current context (backend, project, "
      "zone, region, cluster, namespace, base-image, prices, auto-down) or contexts.NAME.KEY "
      "(creates "
      "NAME)");
  set->add_option("key", set_options->key, "Key")->required();
  set->add_option("value", set_options->value, "Value")->required();
  on_parse(set, action, set_options);
}

}  // namespace kinetic::cli
