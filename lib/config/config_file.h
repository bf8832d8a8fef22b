// The user's contexts, kept in $XDG_CONFIG_HOME/kinetic/config.yaml:
//
//   current-context: acme
//   contexts:
//   - name: acme
//     backend: gke
//     project: acme-ml
//     zone: us-central1-a
//     cluster: kinetic
//
// A built-in `local` context always exists, and is current when the file names none.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"

namespace kinetic {

inline constexpr const char* kLocalContext = "local";

struct Context {
  std::string name;
  std::string backend = "local";  // "local" or "gke"
  std::string project;
  std::string zone;
  std::string region;
  std::string cluster;
  std::string namespace_;
  std::string base_image;  // FROM of kinetic-built images (docs/images.md); empty: kinetic's own
  std::string prices;      // negotiated prices, "NAME=USD,..." (job/pricing.h); empty: list prices
  std::string auto_down;   // idle auto-down period ("2h") or "off" (backend/gke/auto_down.h)
  std::string notify;      // webhook URLs, comma-separated, for every run (backend/notify.h)
};

// The keys `kinetic config set` accepts on a context.
const std::vector<std::string>& context_keys();

class ConfigFile {
 public:
  // Reads PATH. A missing file gives the built-in defaults; a malformed one throws
  // Error(Errc::config) naming the file and line.
  static ConfigFile load(const fs::path& path);

  // Writes the file atomically (0600: contexts may name accounts).
  void save() const;

  const fs::path& path() const { return path_; }
  const std::string& current_context() const { return current_; }
  void set_current_context(const std::string& name);

  // Every context, the built-in `local` first.
  const std::vector<Context>& contexts() const { return contexts_; }
  const Context* find(const std::string& name) const;
  // The context NAME, throwing Error(Errc::not_found) with "did you mean" when unknown.
  const Context& get(const std::string& name) const;
  // The context NAME, created (backend local) when missing.
  Context& upsert(const std::string& name);
  // Sets KEY (one of context_keys()) on context NAME; throws Error(Errc::usage) on bad keys.
  void set(const std::string& name, const std::string& key, const std::string& value);

 private:
  fs::path path_;
  std::string current_ = kLocalContext;
  std::vector<Context> contexts_;
};

}  // namespace kinetic
