// One configuration precedence for every value: flag > environment > context > gcloud's config
// > default. Each resolved value remembers where it came from, so `kinetic config view` can say.
#pragma once

#include <optional>
#include <string>

#include "config/config_file.h"
#include "core/env.h"

namespace kinetic {

// What the user passed as global flags (empty = not given).
struct GlobalFlags {
  std::string context;
  std::string project;
  std::string zone;
  std::string region;
  std::string cluster;
  std::string namespace_;
};

struct Setting {
  std::string value;
  std::string source;  // "flag --project", "env KINETIC_PROJECT", "context acme",
                       // "gcloud config", "default"; empty when unset
  bool set() const { return !value.empty(); }
};

struct Settings {
  Setting context;      // the selected context's name
  std::string backend;  // of the selected context
  Setting project;
  Setting zone;
  Setting region;  // explicit, or derived from the zone
  Setting cluster;
  Setting namespace_;
  Setting base_image;  // env KINETIC_BASE_IMAGE > context base-image; empty: kinetic's own
  Setting prices;      // env KINETIC_PRICES > context prices; empty: list prices (job/pricing.h)
  Setting auto_down;   // context auto-down: what `up` makes of idle auto-down; empty: as it is
  Setting notify;      // context notify: webhook URLs (secrets: shown redacted) for every run
};

// gcloud's active configuration: core/project, compute/zone, compute/region. Reads
// $CLOUDSDK_CONFIG (default ~/.config/gcloud)/active_config and configurations/config_NAME.
struct GcloudConfig {
  std::string project;
  std::string zone;
  std::string region;
};
GcloudConfig read_gcloud_config(const Env& env);

// Resolves the settings. Throws Error(Errc::not_found) for an unknown context.
Settings resolve_settings(const GlobalFlags& flags, const Env& env, const ConfigFile& config,
                          const GcloudConfig& gcloud);

// "us-central1" for "us-central1-a"; a region is returned unchanged.
std::string region_of_zone(const std::string& zone);

}  // namespace kinetic
