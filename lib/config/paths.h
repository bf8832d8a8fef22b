// Where kinetic keeps its files (docs/architecture.md "Where state lives").
#pragma once

#include "core/env.h"
#include "core/fs.h"

namespace kinetic {

// $XDG_CONFIG_HOME/kinetic/config.yaml (default ~/.config/kinetic/config.yaml).
fs::path config_file_path(const Env& env);
// $KINETIC_HOME, else $XDG_STATE_HOME/kinetic (default ~/.local/state/kinetic).
fs::path state_dir_path(const Env& env);
// $HOME, falling back to the password database.
fs::path home_dir(const Env& env);

}  // namespace kinetic
