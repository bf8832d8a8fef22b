// The config file (config/config_file.h): ConfigFile::load on arbitrary text. Only
// Error(Errc::config) may come out of it, and whatever loads must save and load back the same
// when its values are text: UTF-8 without control characters. (yaml-cpp writes other bytes as
// U+FFFD, and a value's last '\r' unquoted, so it is lost; kinetic checks settings for shape
// where it uses them.)
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>

#include "config/config_file.h"
#include "core/error.h"
#include "support.h"

using namespace kinetic;

namespace {

// Well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF)
// without ASCII control characters.
bool text(std::string_view s) {
  auto byte = [&s](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0; };
  for (size_t i = 0; i < s.size();) {
    unsigned c = byte(i);
    size_t n = c < 0x80                 ? 1
               : c >= 0xc2 && c <= 0xdf ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    if (n == 0 || c < 0x20 || c == 0x7f) return false;
    for (size_t k = 1; k < n; ++k)
      if ((byte(i + k) & 0xc0) != 0x80) return false;
    unsigned second = byte(i + 1);
    if ((c == 0xe0 && second < 0xa0) || (c == 0xed && second > 0x9f) ||
        (c == 0xf0 && second < 0x90) || (c == 0xf4 && second > 0x8f))
      return false;
    i += n;
  }
  return true;
}

bool text(const Context& c) {
  return text(c.name) && text(c.backend) && text(c.project) && text(c.zone) && text(c.region) &&
         text(c.cluster) && text(c.namespace_) && text(c.base_image);
}

bool same(const Context& a, const Context& b) {
  return a.name == b.name && a.backend == b.backend && a.project == b.project && a.zone == b.zone &&
         a.region == b.region && a.cluster == b.cluster && a.namespace_ == b.namespace_ &&
         a.base_image == b.base_image;
}

std::optional<ConfigFile> load(const fs::path& file) {
  try {
    return ConfigFile::load(file);
  } catch (const Error& e) {
    fuzz::check(e.code() == Errc::config, "load throws only Errc::config");
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path file = fuzz::scratch_dir() / "config.yaml";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::optional<ConfigFile> cfg = load(file);
  if (!cfg || !text(cfg->current_context())) return 0;
  for (const auto& c : cfg->contexts())
    if (!text(c)) return 0;
  cfg->save();
  std::optional<ConfigFile> again = load(file);
  fuzz::check(again && again->current_context() == cfg->current_context() &&
                  again->contexts().size() == cfg->contexts().size(),
              "a saved config loads back");
  for (size_t i = 0; i < cfg->contexts().size(); ++i)
    fuzz::check(same(cfg->contexts()[i], again->contexts()[i]), "a saved context loads back");
  return 0;
}
