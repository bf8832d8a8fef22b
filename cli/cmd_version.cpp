// kinetic version: as `kubectl version --client`. Touches nothing but stdout.
#include <cstdio>

#include "app.h"
#include "render/printer.h"

namespace kinetic::cli {

namespace {

struct Version : PrintingOptions {
  Version() : PrintingOptions({OutputFormat::table, OutputFormat::json, OutputFormat::yaml}) {}
  int run(Factory& f) override {
    if (format == OutputFormat::table) {
      std::fprintf(f.io().out, "kinetic %s\n", KINETIC_VERSION);
    } else {
      print(f.io(), format, {.kind = "Version", .fields = {{"version", KINETIC_VERSION}}});
    }
    return 0;
  }
};

}  // namespace

void add_version(CLI::App& root, Factory&, Action& action) {
  CLI::App* c = root.add_subcommand("version", "Print kinetic's version");
  c->footer("Examples:\n  kinetic version\n  kinetic version -o json");
  on_parse(c, action, std::make_shared<Version>());
}

}  // namespace kinetic::cli
