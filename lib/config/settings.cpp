#include "config/settings.h"

#include "config/paths.h"
#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

namespace {

// Minimal INI reader for gcloud's properties files: "[section]" headers and "key = value".
void read_ini(const fs::path& path, GcloudConfig& out) {
  auto text = read_file(path);
  if (!text) return;
  std::string section;
  for (const auto& raw : split(*text, '\n')) {
    std::string_view line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = std::string(trim(line.substr(1, line.size() - 2)));
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(trim(line.substr(0, eq)));
    std::string value(trim(line.substr(eq + 1)));
    if (section == "core" && key == "project") out.project = value;
    if (section == "compute" && key == "zone") out.zone = value;
    if (section == "compute" && key == "region") out.region = value;
  }
}

Setting pick(std::initializer_list<std::pair<std::string, std::string>> candidates) {
  for (const auto& [value, source] : candidates)
    if (!value.empty()) return Setting{value, source};
  return {};
}

bool all_of_chars(const std::string& s, std::string_view extra) {
  for (char c : s) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || extra.find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// Cloud settings end up in URLs and object paths: each is checked for the shape its API takes
// (loosely for the project, whose legacy ids may hold '.' and ':'), so "a/../b" never reaches
// one.
void check_shape(const Setting& s, const char* what, bool ok, const std::string& rule) {
  if (!s.set() || ok) return;
  throw Error(Errc::usage, std::string(what) + " '" + escape_non_utf8(s.value) + "' (from " +
                               s.source + ") is not a valid " + what + ": " + rule);
}

bool dns_label(const std::string& v, size_t max) {
  return !v.empty() && v.size() <= max && all_of_chars(v, "-") && v.front() != '-' &&
         v.back() != '-';
}

void check_cloud_settings(const Settings& s) {
  const std::string& p = s.project.value;
  check_shape(s.project, "project",
              p.size() <= 100 && all_of_chars(p, "-.:") && !p.empty() && p.front() != '-' &&
                  p.front() != '.' && p.find("..") == std::string::npos,
              "lowercase letters, digits, '-' (e.g. acme-ml-123)");
  for (const Setting* loc : {&s.zone, &s.region}) {
    check_shape(*loc, loc == &s.zone ? "zone" : "region", dns_label(loc->value, 63),
                "e.g. us-central1-a or us-central1");
  }
  check_shape(s.cluster, "cluster", dns_label(s.cluster.value, 40) && s.cluster.value[0] >= 'a',
              "lowercase letters, digits and '-', starting with a letter, at most 40 characters");
  check_shape(s.namespace_, "namespace", dns_label(s.namespace_.value, 63),
              "lowercase letters, digits and '-', starting and ending with a letter or digit, at "
              "most 63 characters");
}

}  // namespace

GcloudConfig read_gcloud_config(const Env& env) {
  GcloudConfig out;
  fs::path dir =
      env.get_nonempty("CLOUDSDK_CONFIG").value_or((home_dir(env) / ".config" / "gcloud").string());
  std::string active = "default";
  if (auto a = env.get_nonempty("CLOUDSDK_ACTIVE_CONFIG_NAME")) {
    active = *a;
  } else if (auto f = read_file(dir / "active_config")) {
    std::string_view name = trim(*f);
    if (!name.empty()) active = std::string(name);
  }
  read_ini(dir / "configurations" / ("config_" + active), out);
  return out;
}

std::string region_of_zone(const std::string& zone) {
  // Zones are REGION-LETTER ("us-central1-a"); regions have exactly one '-'.
  auto parts = split(zone, '-');
  if (parts.size() == 3 && parts[2].size() == 1) return parts[0] + "-" + parts[1];
  return zone;
}

Settings resolve_settings(const GlobalFlags& flags, const Env& env, const ConfigFile& config,
                          const GcloudConfig& gcloud) {
  Settings s;
  s.context = pick({{flags.context, "flag --context"},
                    {env.get_nonempty("KINETIC_CONTEXT").value_or(""), "env KINETIC_CONTEXT"},
                    {config.current_context(), "config file"},
                    {kLocalContext, "default"}});
  const Context& ctx = config.get(s.context.value);
  s.backend = ctx.backend;
  const std::string from_ctx = "context " + ctx.name;
  // gcloud's config only fills in cloud settings for cloud contexts: a local run must not
  // depend on which gcloud project happens to be active.
  const bool cloud = ctx.backend != "local";
  auto gc = [&](const std::string& v) { return cloud ? v : std::string(); };

  s.project = pick({{flags.project, "flag --project"},
                    {env.get_nonempty("KINETIC_PROJECT").value_or(""), "env KINETIC_PROJECT"},
                    {ctx.project, from_ctx},
                    {gc(gcloud.project), "gcloud config"}});
  s.zone = pick({{flags.zone, "flag --zone"},
                 {env.get_nonempty("KINETIC_ZONE").value_or(""), "env KINETIC_ZONE"},
                 {ctx.zone, from_ctx},
                 {gc(gcloud.zone), "gcloud config"}});
  s.region = pick({{flags.region, "flag --region"},
                   {env.get_nonempty("KINETIC_REGION").value_or(""), "env KINETIC_REGION"},
                   {ctx.region, from_ctx}});
  if (!s.region.set() && s.zone.set())
    s.region = Setting{region_of_zone(s.zone.value), "zone " + s.zone.value};
  if (!s.region.set()) s.region = pick({{gc(gcloud.region), "gcloud config"}});
  s.cluster = pick({{flags.cluster, "flag --cluster"},
                    {env.get_nonempty("KINETIC_CLUSTER").value_or(""), "env KINETIC_CLUSTER"},
                    {ctx.cluster, from_ctx},
                    {cloud ? "kinetic" : "", "default"}});
  s.namespace_ =
      pick({{flags.namespace_, "flag --namespace"},
            {env.get_nonempty("KINETIC_NAMESPACE").value_or(""), "env KINETIC_NAMESPACE"},
            {ctx.namespace_, from_ctx},
            {cloud ? "default" : "", "default"}});
  s.base_image =
      pick({{env.get_nonempty("KINETIC_BASE_IMAGE").value_or(""), "env KINETIC_BASE_IMAGE"},
            {ctx.base_image, from_ctx}});
  s.prices = pick({{env.get_nonempty("KINETIC_PRICES").value_or(""), "env KINETIC_PRICES"},
                   {ctx.prices, from_ctx}});
  s.auto_down = pick({{ctx.auto_down, from_ctx}});
  s.notify = pick({{ctx.notify, from_ctx}});
  if (cloud) check_cloud_settings(s);
  return s;
}

}  // namespace kinetic
