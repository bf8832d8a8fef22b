// The one list of kinetic's commands, in the order `kinetic --help` shows them.
#include "app.h"

namespace kinetic::cli {

void add_up(CLI::App&, Factory&, Action&);
void add_down(CLI::App&, Factory&, Action&);
void add_run(CLI::App&, Factory&, Action&);
void add_pipeline(CLI::App&, Factory&, Action&);
void add_logs(CLI::App&, Factory&, Action&);
void add_status(CLI::App&, Factory&, Action&);
void add_collect(CLI::App&, Factory&, Action&);
void add_wait(CLI::App&, Factory&, Action&);
void add_cancel(CLI::App&, Factory&, Action&);
void add_exec(CLI::App&, Factory&, Action&);
void add_port_forward(CLI::App&, Factory&, Action&);
void add_debug(CLI::App&, Factory&, Action&);
void add_serve(CLI::App&, Factory&, Action&);
void add_cleanup(CLI::App&, Factory&, Action&);
void add_pool(CLI::App&, Factory&, Action&);
void add_accelerators(CLI::App&, Factory&, Action&);
void add_config(CLI::App&, Factory&, Action&);
void add_auth(CLI::App&, Factory&, Action&);
void add_completion(CLI::App&, Factory&, Action&);
void add_version(CLI::App&, Factory&, Action&);
void add_man(CLI::App&, Factory&, Action&);

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"up", add_up},
      {"down", add_down},
      {"run", add_run},
      {"pipeline", add_pipeline},
      {"logs", add_logs},
      {"status", add_status},
      {"collect", add_collect},
      {"wait", add_wait},
      {"exec", add_exec},
      {"port-forward", add_port_forward},
      {"debug", add_debug},
      {"serve", add_serve},
      {"cancel", add_cancel},
      {"cleanup", add_cleanup},
      {"pool", add_pool},
      {"accelerators", add_accelerators},
      {"config", add_config},
      {"auth", add_auth},
      {"completion", add_completion},
      {"version", add_version},
      {"man", add_man},
  };
  return all;
}

}  // namespace kinetic::cli
