#include "argv_scrub.h"

#include <cstring>
#include <vector>

#include "core/strings.h"

namespace kinetic::cli {

namespace {

void collect_shapes(const CLI::App& app, OptionShapes& shapes) {
  for (const CLI::Option* opt : app.get_options()) {
    // As CLI11's parser: an option expecting no item is a flag.
    if (!opt->nonpositional() || opt->get_items_expected_max() == 0) continue;
    for (const auto& s : opt->get_snames())
      if (s.size() == 1) shapes.short_with_value.insert(s[0]);
    for (const auto& l : opt->get_lnames()) shapes.long_with_value.insert("--" + l);
  }
  for (const CLI::App* sub : app.get_subcommands({})) collect_shapes(*sub, shapes);
}

// K=V: V. K alone (the value from kinetic's environment) holds nothing to hide.
void blank_after_equals(char* arg) {
  if (char* eq = std::strchr(arg, '=')) std::memset(eq + 1, '*', std::strlen(eq + 1));
}

// scheme://host/PATH?QUERY: everything after the host (a webhook's token is in its path). The
// setting's comma-separated list is covered too: the later URLs are past the first's path.
void blank_url_path(char* url) {
  char* host = std::strstr(url, "://");
  char* path = std::strpbrk(host ? host + 3 : url, "/?#");
  if (path) std::memset(path + 1, '*', std::strlen(path + 1));
}

bool is_notify_key(const char* key) {
  return std::strcmp(key, "notify") == 0 ||
         (starts_with(key, "contexts.") && ends_with(key, ".notify"));
}

// A long option (`--name` or `--name=value`) at ARGV[I]; returns the index of its last word.
int scrub_long(int i, int argc, char** argv, const OptionShapes& shapes) {
  char* arg = argv[i];
  char* eq = std::strchr(arg, '=');
  const std::string name = eq ? std::string(arg, eq) : std::string(arg);
  char* value = eq ? eq + 1 : nullptr;
  if (!value && shapes.long_with_value.count(name) && i + 1 < argc) value = argv[++i];
  if (value && name == "--env") blank_after_equals(value);
  if (value && name == "--notify") blank_url_path(value);
  return i;
}

// A group of short options (`-qe K=V`, `-qeK=V`, `-ojson`) at ARGV[I], read as CLI11 does:
// letters are flags until one takes a value, which is the rest of the group or else the next
// word. Returns the index of its last word.
int scrub_short(int i, int argc, char** argv, const OptionShapes& shapes) {
  char* arg = argv[i];
  for (size_t j = 1; arg[j] != '\0'; ++j) {
    if (!shapes.short_with_value.count(arg[j])) continue;
    char* value = arg[j + 1] != '\0' ? arg + j + 1 : (i + 1 < argc ? argv[++i] : nullptr);
    if (value && arg[j] == 'e') blank_after_equals(value);
    break;
  }
  return i;
}

}  // namespace

OptionShapes option_shapes(const CLI::App& app) {
  OptionShapes shapes;
  collect_shapes(app, shapes);
  return shapes;
}

void scrub_secrets(int argc, char** argv, const OptionShapes& shapes) {
  std::vector<char*> positionals;
  for (int i = 1; i < argc; ++i) {
    char* arg = argv[i];
    if (std::strcmp(arg, "--") == 0) break;
    if (std::strncmp(arg, "--", 2) == 0)
      i = scrub_long(i, argc, argv, shapes);
    else if (arg[0] == '-' && arg[1] != '\0')
      i = scrub_short(i, argc, argv, shapes);
    else
      positionals.push_back(arg);
  }
  // `config set KEY VALUE`: the notify setting's URLs are as secret as --notify's.
  if (positionals.size() >= 4 && std::strcmp(positionals[0], "config") == 0 &&
      std::strcmp(positionals[1], "set") == 0 && is_notify_key(positionals[2]))
    blank_url_path(positionals[3]);
}

}  // namespace kinetic::cli
