// kinetic completion bash|zsh|fish, and the hidden kinetic man: shell completion and the man
// page, generated from the command tree (docgen.h). Neither reads the config or the network.
#include <algorithm>
#include <cstdio>

#include "app.h"
#include "core/error.h"
#include "core/strings.h"
#include "docgen.h"

namespace kinetic::cli {

namespace {

// The whole tree, from the command APP that is running.
const CLI::App& root_of(const CLI::App* app) {
  while (app->get_parent() != nullptr) app = app->get_parent();
  return *app;
}

int print(FILE* out, const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), out);
  return std::fflush(out) == 0 ? 0 : 1;
}

struct Completion : CommandOptions {
  const CLI::App* self = nullptr;
  std::string shell;

  void validate() const override {
    const auto shells = completion_shells();
    if (std::find(shells.begin(), shells.end(), shell) != shells.end()) return;
    auto near = closest_matches(shell, shells, 1);
    throw Error(Errc::usage, "unknown shell '" + shell + "' for `kinetic completion`" +
                                 (near.empty() ? "" : "; did you mean " + join_or(near) + "?") +
                                 " (choose " + join_or(shells) + ")");
  }
  int run(Factory& f) override {
    const CLI::App& root = root_of(self);
    FILE* out = f.io().out;
    if (shell == "bash") return print(out, bash_completion(root));
    if (shell == "zsh") return print(out, zsh_completion(root));
    return print(out, fish_completion(root));
  }
};

struct Man : CommandOptions {
  const CLI::App* self = nullptr;
  int run(Factory& f) override { return print(f.io().out, man_page(root_of(self))); }
};

}  // namespace

void add_completion(CLI::App& root, Factory&, Action& action) {
  auto o = std::make_shared<Completion>();
  CLI::App* c =
      root.add_subcommand("completion", "Print the shell completion script for bash, zsh or fish");
  c->add_option("shell", o->shell, "bash, zsh or fish")->required();
  o->self = c;
  c->footer(
      "Examples:\n"
      "  source <(kinetic completion bash)         # bash, this shell\n"
      "  kinetic completion bash > ~/.local/share/bash-completion/completions/kinetic\n"
      "  source <(kinetic completion zsh)          # zsh, this shell (after compinit)\n"
      "  kinetic completion zsh > \"${fpath[1]}/_kinetic\"\n"
      "  kinetic completion fish > ~/.config/fish/completions/kinetic.fish\n"
      "\nCompletes commands, flags, accelerators, contexts, output formats and job ids.");
  on_parse(c, action, o);
}

void add_man(CLI::App& root, Factory&, Action& action) {
  CLI::App* c = root.add_subcommand("man", "Print kinetic's man page (roff), as in man/kinetic.1");
  c->group("");  // hidden: for packagers and scripts/gen-docs.sh
  c->footer("Examples:\n  kinetic man | man -l -");
  auto o = std::make_shared<Man>();
  o->self = c;
  on_parse(c, action, o);
}

}  // namespace kinetic::cli
