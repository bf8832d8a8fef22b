// kinetic auth print-access-token|status: the credentials kinetic uses.
// Registered with its final flags and help so scripts and completions see the real interface;
// until the gke backend lands it says so in one line and exits 1 (never a fake success).
#include "app.h"

namespace kinetic::cli {

void add_auth(CLI::App& root, Factory& f, Action& action) {
  CLI::App* c = root.add_subcommand("auth", "Show the Google credentials kinetic uses");
  c->require_subcommand(0, 1);
  c->footer(
      "Examples:\n"
      "  kinetic auth status\n"
      "  curl -H \"Authorization: Bearer $(kinetic auth print-access-token)\" ...");
  CLI::App* token = c->add_subcommand("print-access-token",
                                      "Print the access token kinetic would use, as gcloud does");
  token->callback([&f, &action] {
    action = [&f]() -> int {
      (void)f;
      needs_cloud("auth print-access-token");
    };
  });
  CLI::App* status = c->add_subcommand(
      "status", "Say which credential source is in use and for which account (never the secret)");
  status->callback([&f, &action] {
    action = [&f]() -> int {
      (void)f;
      needs_cloud("auth status");
    };
  });
}

}  // namespace kinetic::cli
