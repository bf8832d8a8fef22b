#include "docgen.h"

#include <cctype>
#include <functional>
#include <map>
#include <stdexcept>

#include "render/output.h"

namespace kinetic::cli {

const std::vector<std::string>& completion_shells() {
  static const std::vector<std::string> shells = {"bash", "zsh", "fish"};
  return shells;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Where values come from: the one thing the command tree does not say.

enum class Kind { words, command, files, dirs };

struct Source {
  std::string id;     // a shell-safe name
  std::string label;  // what a value is, e.g. "job"
  Kind kind;
  std::vector<std::string> words;  // Kind::words
  std::string args;                // Kind::command: `kinetic ARGS` prints one value a line
  bool with_context = false;       // pass on the --context given on the command line
};

const std::vector<Source>& sources() {
  static const std::vector<Source> all = [] {
    std::vector<std::string> formats;
    for (auto f : {OutputFormat::table, OutputFormat::wide, OutputFormat::json, OutputFormat::yaml,
                   OutputFormat::name})
      formats.emplace_back(output_format_name(f));
    return std::vector<Source>{
        {"accelerators", "accelerator", Kind::command, {}, "accelerators -o name"},
        {"contexts", "context", Kind::command, {}, "config get-contexts -o name"},
        {"jobs", "job", Kind::command, {}, "status -o name", true},
        {"formats", "format", Kind::words, formats, ""},
        {"shells", "shell", Kind::words, completion_shells(), ""},
        {"config_keys",
         "key",
         Kind::words,
         {"current-context", "backend", "project", "zone", "region", "cluster", "namespace"},
         ""},
        {"files", "file", Kind::files, {}, ""},
        {"dirs", "directory", Kind::dirs, {}, ""},
    };
  }();
  return all;
}

const Source* source_named(const std::string& id) {
  for (const auto& s : sources())
    if (s.id == id) return &s;
  throw std::logic_error("docgen: no value source " + id);
}

// Flags whose values can be completed, by long name.
const std::map<std::string, std::string>& flag_sources() {
  static const std::map<std::string, std::string> m = {
      {"accelerator", "accelerators"}, {"context", "contexts"}, {"format", "formats"},
      {"requirements", "files"},       {"context-dir", "dirs"}, {"output", "dirs"}};
  return m;
}

// Positionals whose values can be completed, by "COMMAND PATH:NAME".
const std::map<std::string, std::string>& arg_sources() {
  static const std::map<std::string, std::string> m = {{"run:file", "files"},
                                                       {"logs:job", "jobs"},
                                                       {"status:job", "jobs"},
                                                       {"cancel:jobs", "jobs"},
                                                       {"config use-context:name", "contexts"},
                                                       {"config set:key", "config_keys"},
                                                       {"completion:shell", "shells"}};
  return m;
}

// Commands that take arguments after `--` (cli/app.cpp hands them to the job), for the synopsis.
const std::map<std::string, std::string>& dashdash_args() {
  static const std::map<std::string, std::string> m = {{"run", "ARGS"}};
  return m;
}

// ---------------------------------------------------------------------------------------------
// The command tree, flattened.

struct Flag {
  std::vector<std::string> names;  // "-a", "--accelerator"
  std::string label;               // "accelerator"
  std::string description;
  std::string metavar;  // TEXT, INT
  bool takes_value = false;
  bool repeatable = false;
  bool required = false;
  const Source* source = nullptr;
};

struct Arg {
  std::string name;
  std::string description;
  bool required = false;
  bool repeatable = false;
  const Source* source = nullptr;
};

struct Sub {
  std::string name;
  std::string description;
};

struct Cmd {
  std::string path;  // "" for kinetic itself, "pool add"
  const CLI::App* app = nullptr;
  std::string description;
  std::string footer;           // its own (subcommands inherit their parent's when they set none)
  std::vector<Flag> flags;      // its own
  std::vector<Flag> inherited;  // its parents', nearest first: kinetic's global flags come last
  std::vector<Arg> args;
  std::vector<Sub> subs;

  std::vector<Flag> all_flags() const {
    std::vector<Flag> all = flags;
    all.insert(all.end(), inherited.begin(), inherited.end());
    return all;
  }
};

bool visible(const CLI::App* app) {
  return !app->get_group().empty();
}

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* a) { return visible(a); });
}

Flag make_flag(const CLI::Option* o) {
  Flag f;
  for (const auto& s : o->get_snames()) f.names.push_back("-" + s);
  for (const auto& l : o->get_lnames()) f.names.push_back("--" + l);
  f.label = o->get_lnames().empty() ? o->get_snames().front() : o->get_lnames().front();
  f.description = o->get_description();
  f.takes_value = o->get_items_expected_max() > 0;  // flags expect 0
  f.repeatable = f.takes_value && o->get_expected_max() > 1;
  f.required = o->get_required();
  f.metavar = o->get_type_name();
  if (f.metavar.empty()) f.metavar = "VALUE";
  if (f.takes_value) {
    auto it = flag_sources().find(f.label);
    if (it != flag_sources().end()) f.source = source_named(it->second);
  }
  return f;
}

void collect(const CLI::App& app, const std::string& path, const Cmd* parent,
             std::vector<Cmd>& out) {
  for (char ch : path)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != ' ')
      throw std::logic_error("docgen: a command name the scripts cannot quote: " + path);
  Cmd c;
  c.path = path;
  c.app = &app;
  c.description = app.get_description();
  c.footer = app.get_footer();
  if (parent != nullptr && parent->app->get_footer() == c.footer) c.footer.clear();
  const CLI::Option* help = app.get_help_ptr();
  for (const CLI::Option* o : app.get_options()) {
    if (o == help || o->get_group().empty()) continue;
    if (o->nonpositional()) {
      c.flags.push_back(make_flag(o));
    } else if (o->get_positional()) {
      Arg a;
      a.name = o->get_name();
      a.description = o->get_description();
      a.required = o->get_required();
      a.repeatable = o->get_items_expected_max() > 1;
      auto it = arg_sources().find(path + ":" + a.name);
      if (it != arg_sources().end()) a.source = source_named(it->second);
      c.args.push_back(a);
    }
  }
  if (parent != nullptr) c.inherited = parent->all_flags();
  for (const CLI::App* s : visible_subcommands(app))
    c.subs.push_back({s->get_name(), s->get_description()});
  out.push_back(c);
  const Cmd self = out.back();  // OUT may grow below
  for (const CLI::App* s : visible_subcommands(app))
    collect(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), &self, out);
}

// Every visible command, kinetic itself first, then depth first in help order.
std::vector<Cmd> commands_of(const CLI::App& root) {
  std::vector<Cmd> out;
  collect(root, "", nullptr, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Text helpers.

std::string join(const std::vector<std::string>& words, const std::string& sep = " ") {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i ? sep : "") + words[i];
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

std::string upper(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// The first clause of a description, for the one line a completion menu has room for: up to the
// first ": ", "; " or sentence end outside parentheses.
std::string brief(const std::string& text) {
  int depth = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    char ch = text[i];
    if (ch == '(') ++depth;
    if (ch == ')' && depth > 0) --depth;
    if (depth > 0 || text[i + 1] != ' ') continue;
    if (ch == ':' || ch == ';') return text.substr(0, i);
    if (ch == '.' &&
        !(i >= 3 && (text.compare(i - 3, 3, "e.g") == 0 || text.compare(i - 3, 3, "i.e") == 0)))
      return text.substr(0, i);
  }
  if (!text.empty() && text.back() == '.') return text.substr(0, text.size() - 1);
  return text;
}

// 'TEXT' for bash and zsh.
std::string sq(const std::string& s) {
  return "'" + replace_all(s, "'", "'\\''") + "'";
}

// 'TEXT' for fish.
std::string fish_sq(const std::string& s) {
  return "'" + replace_all(replace_all(s, "\\", "\\\\"), "'", "\\'") + "'";
}

// NAME as a shell function name suffix: "config use-context" -> "config_use_context".
std::string ident(const std::string& path) {
  std::string out = path.empty() ? "kinetic" : "kinetic_";
  for (char ch : path) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

const char* kGenerated =
    "from kinetic's command tree; do not edit\n"
    "# (scripts/gen-docs.sh regenerates it; tests/e2e/test_docs.cpp checks it).\n";

// The `case` arms of a shell's _kinetic_values: one a value source, BODY's lines for it.
std::string value_source_cases(const std::function<std::string(const Source&)>& body) {
  std::string s;
  for (const auto& src : sources()) s += "    " + src.id + ")\n" + body(src) + "      ;;\n";
  return s;
}

// "values=('a' 'b')": a words source's values as a bash or zsh array.
std::string values_array(const Source& src) {
  std::vector<std::string> quoted;
  for (const auto& w : src.words) quoted.push_back(sq(w));
  return "      values=(" + join(quoted) + ")\n";
}

// ---------------------------------------------------------------------------------------------
// bash

// The lines that fill bash's `values` from SRC.
std::string bash_value_source(const Source& src) {
  switch (src.kind) {
    case Kind::words:
      return values_array(src);
    case Kind::command:
      return "      while IFS= read -r line; do values+=(\"$line\"); done < <(kinetic " +
             std::string(src.with_context ? "${ctx:+\"--context=$ctx\"} " : "") + src.args +
             " 2>/dev/null)\n";
    case Kind::files:
    case Kind::dirs:
      return std::string("      compopt -o filenames 2>/dev/null\n") +
             "      while IFS= read -r line; do values+=(\"$line\"); done < <(compgen " +
             (src.kind == Kind::files ? "-f" : "-d") + " -- \"$word\")\n";
  }
  return "";
}

std::string bash_values_function() {
  std::string s =
      "# _kinetic_values SOURCE PREFIX: reply with the values of SOURCE that complete the current\n"
      "# word, each after PREFIX (the --flag= the word starts with, or nothing).\n"
      "_kinetic_values() {\n"
      "  local -a values=()\n"
      "  local line word=${cur#\"$2\"}\n"
      "  case $1 in\n";
  s += value_source_cases(bash_value_source);
  s += "  esac\n"
       "  _kinetic_reply \"${values[@]/#/$2}\"\n"
       "}\n";
  return s;
}

}  // namespace

std::string bash_completion(const CLI::App& root) {
  const auto cmds = commands_of(root);
  std::string s;
  s += "# bash completion for kinetic, generated by `kinetic completion bash` ";
  s += kGenerated;
  s += "#\n"
       "# Load it in this shell:   source <(kinetic completion bash)\n"
       "# or for every new shell:  kinetic completion bash > "
       "~/.local/share/bash-completion/completions/kinetic\n"
       "# It works with or without the bash-completion package.\n"
       "\n"
       "# _kinetic_command COMMAND: what COMMAND (\"\" for kinetic itself, \"pool add\") accepts:\n"
       "# its subcommands, its flags (its own and the ones it inherits), the flags that take a\n"
       "# value, where flag values come from (FLAG=SOURCE) and where its positionals' values come\n"
       "# from (a SOURCE each, \"none\" for none, \"...\" after one that repeats).\n"
       "_kinetic_command() {\n"
       "  case $1 in\n";
  for (const auto& c : cmds) {
    std::vector<std::string> subs, flags, value_flags, flag_srcs, args;
    for (const auto& sub : c.subs) subs.push_back(sub.name);
    for (const auto& f : c.all_flags()) {
      for (const auto& n : f.names) {
        flags.push_back(n);
        if (f.takes_value) value_flags.push_back(n);
        if (f.source != nullptr) flag_srcs.push_back(n + "=" + f.source->id);
      }
    }
    for (const auto& a : c.args)
      args.push_back((a.source ? a.source->id : "none") + std::string(a.repeatable ? "..." : ""));
    s += "    " + sq(c.path) + ")\n";
    s += "      _kinetic_subs=" + sq(join(subs)) + "\n";
    s += "      _kinetic_flags=" + sq(join(flags)) + "\n";
    s += "      _kinetic_value_flags=" + sq(join(value_flags)) + "\n";
    s += "      _kinetic_flag_sources=" + sq(join(flag_srcs)) + "\n";
    s += "      _kinetic_args=" + sq(join(args)) + "\n";
    s += "      ;;\n";
  }
  s += "  esac\n"
       "}\n"
       "\n"
       "# _kinetic_source_of FLAG: where the values of FLAG come from, if anywhere.\n"
       "_kinetic_source_of() {\n"
       "  local pair\n"
       "  for pair in $_kinetic_flag_sources; do\n"
       "    if [[ ${pair%%=*} == \"$1\" ]]; then\n"
       "      echo \"${pair#*=}\"\n"
       "      return\n"
       "    fi\n"
       "  done\n"
       "}\n"
       "\n"
       "# _kinetic_reply CANDIDATE...: the candidates that start with the current word, in\n"
       "# COMPREPLY, less the part up to the last = or : (bash splits words there, see\n"
       "# COMP_WORDBREAKS, and replaces only what follows).\n"
       "_kinetic_reply() {\n"
       "  local candidate head=$cur\n"
       "  while [[ -n $head ]]; do\n"
       "    [[ $head == *[=:] && $COMP_WORDBREAKS == *\"${head: -1}\"* ]] && break\n"
       "    head=${head%?}\n"
       "  done\n"
       "  COMPREPLY=()\n"
       "  for candidate in \"$@\"; do\n"
       "    [[ $candidate == \"$cur\"* ]] && COMPREPLY+=(\"${candidate#\"$head\"}\")\n"
       "  done\n"
       "}\n"
       "\n";
  s += bash_values_function();
  s += "\n"
       "# Without bash-completion: COMP_WORDS with the words bash split at = and : joined again\n"
       "# (--context=local is one word), in words and cword.\n"
       "_kinetic_split_words() {\n"
       "  local i n\n"
       "  words=()\n"
       "  cword=0\n"
       "  for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do\n"
       "    n=${#words[@]}\n"
       "    if ((n > 1)) && [[ ${COMP_WORDS[i]} == [=:] || ${words[n - 1]} == *[=:] ]]; then\n"
       "      words[n - 1]+=${COMP_WORDS[i]}\n"
       "    else\n"
       "      words+=(\"${COMP_WORDS[i]}\")\n"
       "    fi\n"
       "    ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))\n"
       "  done\n"
       "  return 0\n"
       "}\n"
       "\n"
       "_kinetic() {\n"
       "  local cur prev words cword split\n"
       "  if declare -F _init_completion >/dev/null 2>&1; then\n"
       "    _init_completion -n =: || return\n"
       "  else\n"
       "    _kinetic_split_words\n"
       "  fi\n"
       "  cur=${words[cword]}\n"
       "  local cmd='' flag='' ctx='' npos=0 i word src\n"
       "  local _kinetic_subs _kinetic_flags _kinetic_value_flags _kinetic_flag_sources "
       "_kinetic_args\n"
       "  _kinetic_command ''\n"
       "  # Find the command, skipping flags and their values.\n"
       "  for ((i = 1; i < cword; i++)); do\n"
       "    word=${words[i]}\n"
       "    if [[ -n $flag ]]; then\n"
       "      [[ $flag == --context ]] && ctx=$word\n"
       "      flag=''\n"
       "      continue\n"
       "    fi\n"
       "    case $word in\n"
       "      --)  # the rest is the job's arguments\n"
       "        _kinetic_values files ''\n"
       "        return\n"
       "        ;;\n"
       "      --context=*) ctx=${word#*=} ;;\n"
       "      -*=*) ;;\n"
       "      -*) [[ \" $_kinetic_value_flags \" == *\" $word \"* ]] && flag=$word ;;\n"
       "      *)\n"
       "        if [[ \" $_kinetic_subs \" == *\" $word \"* ]]; then\n"
       "          cmd=${cmd:+$cmd }$word\n"
       "          _kinetic_command \"$cmd\"\n"
       "          npos=0\n"
       "        else\n"
       "          npos=$((npos + 1))\n"
       "        fi\n"
       "        ;;\n"
       "    esac\n"
       "  done\n"
       "  if [[ -n $flag ]]; then\n"
       "    _kinetic_values \"$(_kinetic_source_of \"$flag\")\" ''\n"
       "    return\n"
       "  fi\n"
       "  case $cur in\n"
       "    -*=*)\n"
       "      _kinetic_values \"$(_kinetic_source_of \"${cur%%=*}\")\" \"${cur%%=*}=\"\n"
       "      return\n"
       "      ;;\n"
       "    -*)\n"
       "      _kinetic_reply $_kinetic_flags\n"
       "      return\n"
       "      ;;\n"
       "  esac\n"
       "  if [[ -n $_kinetic_subs ]] && ((npos == 0)); then\n"
       "    _kinetic_reply $_kinetic_subs\n"
       "    return\n"
       "  fi\n"
       "  local -a args\n"
       "  read -r -a args <<<\"$_kinetic_args\"\n"
       "  src=''\n"
       "  if ((npos < ${#args[@]})); then\n"
       "    src=${args[npos]}\n"
       "  elif ((${#args[@]} > 0)) && [[ ${args[${#args[@]} - 1]} == *... ]]; then\n"
       "    src=${args[${#args[@]} - 1]}\n"
       "  fi\n"
       "  _kinetic_values \"${src%...}\" ''\n"
       "}\n"
       "\n"
       "complete -F _kinetic kinetic\n";
  return s;
}

// ---------------------------------------------------------------------------------------------
// zsh

namespace {

// TEXT inside the [...] of an _arguments spec.
std::string zsh_bracket(const std::string& text) {
  std::string out;
  for (char ch : brief(text)) {
    if (ch == '\\' || ch == '[' || ch == ']' || ch == ':') out += '\\';
    out += ch;
  }
  return out;
}

std::string zsh_action(const Source* src) {
  return src ? "_kinetic_values " + src->id : " ";
}

std::vector<std::string> zsh_specs(const Cmd& c) {
  std::vector<std::string> specs;
  for (const auto& f : c.all_flags()) {
    std::string exclude;
    if (f.repeatable) {
      exclude = "*";
    } else if (f.names.size() > 1) {
      exclude = "(" + join(f.names) + ")";
    }
    for (const auto& n : f.names) {
      // A value may follow in the next word, or in the same one: --flag=VALUE, -fVALUE.
      std::string form = !f.takes_value ? "" : n.size() == 2 ? "+" : "=";
      std::string spec = exclude + n + form + "[" + zsh_bracket(f.description) + "]";
      if (f.takes_value) spec += ":" + f.label + ":" + zsh_action(f.source);
      specs.push_back(spec);
    }
  }
  size_t slot = 1;
  if (!c.subs.empty())
    specs.push_back(std::to_string(slot++) + ":command:_kinetic_subcommands " + ident(c.path));
  for (const auto& a : c.args) {
    std::string where = a.repeatable ? "*" : std::to_string(slot++);
    specs.push_back(where + (a.required || a.repeatable ? ":" : "::") + a.name + ":" +
                    zsh_action(a.source));
  }
  return specs;
}

// The lines that complete zsh's values from SRC.
std::string zsh_value_source(const Source& src) {
  const std::string offer =
      "      _wanted " + src.id + " expl " + sq(src.label) + " compadd -a values\n";
  switch (src.kind) {
    case Kind::words:
      return values_array(src) + offer;
    case Kind::command:
      return "      values=(${(f)\"$(kinetic " +
             std::string(src.with_context ? "${_kinetic_ctx:+--context=$_kinetic_ctx} " : "") +
             src.args + " 2>/dev/null)\"})\n" + offer;
    case Kind::files:
      return "      _files\n";
    case Kind::dirs:
      return "      _files -/\n";
  }
  return "";
}

}  // namespace

std::string zsh_completion(const CLI::App& root) {
  const auto cmds = commands_of(root);
  std::string s = "#compdef kinetic\n";
  s += "# zsh completion for kinetic, generated by `kinetic completion zsh` ";
  s += kGenerated;
  s += "#\n"
       "# Load it in this shell (after compinit):  source <(kinetic completion zsh)\n"
       "# or for every new shell:                 kinetic completion zsh > "
       "\"${fpath[1]}/_kinetic\"\n"
       "\n"
       "# _kinetic_tree COMMAND: the subcommands of COMMAND (\"\" for kinetic itself, \"pool "
       "add\")\n"
       "# and the flags it accepts that take a value.\n"
       "_kinetic_tree() {\n"
       "  case $1 in\n";
  for (const auto& c : cmds) {
    std::vector<std::string> subs, value_flags;
    for (const auto& sub : c.subs) subs.push_back(sub.name);
    for (const auto& f : c.all_flags())
      if (f.takes_value)
        for (const auto& n : f.names) value_flags.push_back(n);
    s += "    " + sq(c.path) + ")\n";
    s += "      _kinetic_subs=(" + join(subs) + ")\n";
    s += "      _kinetic_value_flags=(" + join(value_flags) + ")\n";
    s += "      ;;\n";
  }
  s += "  esac\n"
       "}\n"
       "\n"
       "# _kinetic_subcommands [OPTION...] COMMAND: complete the subcommands of COMMAND "
       "(_arguments\n"
       "# puts its options first).\n"
       "_kinetic_subcommands() {\n"
       "  local -a subcommands\n"
       "  case ${argv[-1]} in\n";
  for (const auto& c : cmds) {
    if (c.subs.empty()) continue;
    s += "    " + ident(c.path) + ")\n";
    s += "      subcommands=(\n";
    for (const auto& sub : c.subs)
      s += "        " + sq(replace_all(sub.name, ":", "\\:") + ":" + brief(sub.description)) + "\n";
    s += "      )\n";
    s += "      ;;\n";
  }
  s += "  esac\n"
       "  _describe -t commands command subcommands\n"
       "}\n"
       "\n"
       "# _kinetic_values [OPTION...] SOURCE: complete values from SOURCE.\n"
       "_kinetic_values() {\n"
       "  local -a values\n"
       "  local expl\n"
       "  case ${argv[-1]} in\n";
  s += value_source_cases(zsh_value_source);
  s += "  esac\n"
       "}\n"
       "\n"
       "_kinetic() {\n"
       "  local cmd='' flag='' word _kinetic_ctx=''\n"
       "  local -a _kinetic_subs _kinetic_value_flags\n"
       "  integer i start=1\n"
       "  _kinetic_tree ''\n"
       "  # Find the command, skipping flags and their values.\n"
       "  for ((i = 2; i < CURRENT; i++)); do\n"
       "    word=${words[i]}\n"
       "    if [[ -n $flag ]]; then\n"
       "      [[ $flag == --context ]] && _kinetic_ctx=$word\n"
       "      flag=''\n"
       "      continue\n"
       "    fi\n"
       "    case $word in\n"
       "      --)  # the rest is the job's arguments\n"
       "        _files\n"
       "        return\n"
       "        ;;\n"
       "      --context=*) _kinetic_ctx=${word#*=} ;;\n"
       "      -*=*) ;;\n"
       "      -*) (( ${_kinetic_value_flags[(Ie)$word]} )) && flag=$word ;;\n"
       "      *)\n"
       "        if (( ${_kinetic_subs[(Ie)$word]} )); then\n"
       "          cmd=${cmd:+$cmd }$word\n"
       "          start=i\n"
       "          _kinetic_tree $cmd\n"
       "        fi\n"
       "        ;;\n"
       "    esac\n"
       "  done\n"
       "  # Complete what follows the command as if it were the whole command line.\n"
       "  if ((start > 1)); then\n"
       "    words=(\"${words[1]}\" \"${(@)words[start + 1, -1]}\")\n"
       "    ((CURRENT -= start - 1))\n"
       "  fi\n"
       "  case $cmd in\n";
  for (const auto& c : cmds) {
    s += "    " + sq(c.path) + ")\n";
    s += "      _arguments -s -S :";
    for (const auto& spec : zsh_specs(c)) s += " \\\n        " + sq(spec);
    s += "\n      ;;\n";
  }
  s += "  esac\n"
       "}\n"
       "\n"
       "if [[ $funcstack[1] == _kinetic ]]; then\n"
       "  _kinetic \"$@\"\n"
       "else\n"
       "  compdef _kinetic kinetic\n"
       "fi\n";
  return s;
}

// ---------------------------------------------------------------------------------------------
// fish

std::string fish_completion(const CLI::App& root) {
  const auto cmds = commands_of(root);
  std::string s;
  s += "# fish completion for kinetic, generated by `kinetic completion fish` ";
  s += kGenerated;
  s += "#\n"
       "# Install it:          kinetic completion fish > ~/.config/fish/completions/kinetic.fish\n"
       "# or in this shell:    kinetic completion fish | source\n"
       "\n"
       "# __kinetic_subcommands COMMAND: the subcommands of COMMAND (\"\" for kinetic itself).\n"
       "function __kinetic_subcommands\n"
       "    switch \"$argv[1]\"\n";
  for (const auto& c : cmds) {
    if (c.subs.empty()) continue;
    std::vector<std::string> subs;
    for (const auto& sub : c.subs) subs.push_back(sub.name);
    s += "        case " + fish_sq(c.path) + "\n";
    s += "            printf '%s\\n' " + join(subs) + "\n";
  }
  s += "    end\n"
       "end\n"
       "\n"
       "# __kinetic_value_flags COMMAND: the flags COMMAND accepts that take a value.\n"
       "function __kinetic_value_flags\n"
       "    switch \"$argv[1]\"\n";
  for (const auto& c : cmds) {
    std::vector<std::string> value_flags;
    for (const auto& f : c.all_flags())
      if (f.takes_value)
        for (const auto& n : f.names) value_flags.push_back(n);
    if (value_flags.empty()) continue;
    s += "        case " + fish_sq(c.path) + "\n";
    s += "            printf '%s\\n' " + join(value_flags) + "\n";
  }
  s += "    end\n"
       "end\n"
       "\n"
       "# __kinetic_scan: reads the command line before the cursor into __kinetic_cmd (the "
       "command,\n"
       "# e.g. \"pool add\"), __kinetic_npos (how many positionals it has), __kinetic_ctx (the\n"
       "# --context given) and __kinetic_dashdash (1 after --: the job's arguments).\n"
       "function __kinetic_scan\n"
       "    set -g __kinetic_cmd ''\n"
       "    set -g __kinetic_npos 0\n"
       "    set -g __kinetic_ctx ''\n"
       "    set -g __kinetic_dashdash 0\n"
       "    set -l subs (__kinetic_subcommands '')\n"
       "    set -l value_flags (__kinetic_value_flags '')\n"
       "    set -l flag ''\n"
       "    set -l words (commandline -opc)\n"
       "    set -e words[1]\n"
       "    for word in $words\n"
       "        if test -n \"$flag\"\n"
       "            test \"$flag\" = --context; and set __kinetic_ctx $word\n"
       "            set flag ''\n"
       "        else if test \"$word\" = --\n"
       "            set __kinetic_dashdash 1\n"
       "            return\n"
       "        else if string match -q -- '--context=*' $word\n"
       "            set __kinetic_ctx (string replace -- --context= '' $word)\n"
       "        else if string match -q -- '-*=*' $word\n"
       "            continue\n"
       "        else if string match -q -- '-*' $word\n"
       "            contains -- $word $value_flags; and set flag $word\n"
       "        else if contains -- $word $subs\n"
       "            set __kinetic_cmd (string trim -- \"$__kinetic_cmd $word\")\n"
       "            set subs (__kinetic_subcommands $__kinetic_cmd)\n"
       "            set value_flags (__kinetic_value_flags $__kinetic_cmd)\n"
       "            set __kinetic_npos 0\n"
       "        else\n"
       "            set __kinetic_npos (math $__kinetic_npos + 1)\n"
       "        end\n"
       "    end\n"
       "end\n"
       "\n"
       "# __kinetic_in COMMAND: completing COMMAND or one of its subcommands (they inherit its "
       "flags).\n"
       "function __kinetic_in\n"
       "    __kinetic_scan\n"
       "    test $__kinetic_dashdash = 0; or return 1\n"
       "    test -z \"$argv[1]\"; or test \"$__kinetic_cmd\" = \"$argv[1]\"; "
       "or string match -q -- \"$argv[1] *\" \"$__kinetic_cmd\"\n"
       "end\n"
       "\n"
       "# __kinetic_at COMMAND [N|N+]: completing COMMAND's positional N (from 0), or N or later.\n"
       "function __kinetic_at\n"
       "    __kinetic_scan\n"
       "    test $__kinetic_dashdash = 0 -a \"$__kinetic_cmd\" = \"$argv[1]\"; or return 1\n"
       "    test (count $argv) -lt 2; and return 0\n"
       "    if string match -q -- '*+' $argv[2]\n"
       "        test $__kinetic_npos -ge (string trim -r -c + -- $argv[2])\n"
       "    else\n"
       "        test $__kinetic_npos -eq $argv[2]\n"
       "    end\n"
       "end\n"
       "\n"
       "# __kinetic_after_dashdash: completing the job's arguments, after --.\n"
       "function __kinetic_after_dashdash\n"
       "    __kinetic_scan\n"
       "    test $__kinetic_dashdash = 1\n"
       "end\n"
       "\n"
       "# __kinetic_values SOURCE: the values of SOURCE, one a line, each with what it is.\n"
       "function __kinetic_values\n"
       "    switch $argv[1]\n";
  for (const auto& src : sources()) {
    if (src.kind != Kind::command && src.kind != Kind::words) continue;
    s += "        case " + src.id + "\n";
    const std::string label = " | string replace -r -- '$' \\t" + fish_sq(src.label) + "\n";
    if (src.kind == Kind::words) {
      s += "            printf '%s\\t%s\\n'";
      for (const auto& w : src.words) s += " " + fish_sq(w) + " " + fish_sq(src.label);
      s += "\n";
    } else if (src.with_context) {
      s += "            if test -n \"$__kinetic_ctx\"\n";
      s += "                kinetic --context=$__kinetic_ctx " + src.args + " 2>/dev/null" + label;
      s += "            else\n";
      s += "                kinetic " + src.args + " 2>/dev/null" + label;
      s += "            end\n";
    } else {
      s += "            kinetic " + src.args + " 2>/dev/null" + label;
    }
  }
  s += "    end\n"
       "end\n"
       "\n"
       "complete -c kinetic -f\n"
       "complete -c kinetic -n __kinetic_after_dashdash -F\n";

  // What completes the value of a flag or positional from SRC.
  auto values = [](const Source* src) -> std::string {
    if (src == nullptr) return "";
    switch (src->kind) {
      case Kind::words:
      case Kind::command:
        return " -a " + fish_sq("(__kinetic_values " + src->id + ")");
      case Kind::files:
        return " -F";
      case Kind::dirs:
        return " -a '(__fish_complete_directories (commandline -ct))'";
    }
    return "";
  };
  for (const auto& c : cmds) {
    s += "\n# kinetic" + (c.path.empty() ? "" : " " + c.path) + "\n";
    const std::string in = "\"__kinetic_in " + fish_sq(c.path) + "\"";
    for (const auto& sub : c.subs)
      s += "complete -c kinetic -n \"__kinetic_at " + fish_sq(c.path) + " 0\"" + " -a " +
           fish_sq(sub.name) + " -d " + fish_sq(brief(sub.description)) + "\n";
    for (const auto& f : c.flags) {
      s += "complete -c kinetic -n " + in;
      for (const auto& n : f.names)
        s += (n.size() == 2 ? " -s " : " -l ") + n.substr(n.size() == 2 ? 1 : 2);
      if (f.takes_value) {
        const bool files = f.source && f.source->kind == Kind::files;
        s += files ? " -r" : " -x";
        s += values(f.source);
      }
      s += " -d " + fish_sq(brief(f.description)) + "\n";
    }
    size_t slot = c.subs.empty() ? 0 : 1;
    for (const auto& a : c.args) {
      std::string at = std::to_string(slot++) + (a.repeatable ? "+" : "");
      if (a.source == nullptr) continue;
      s += "complete -c kinetic -n \"__kinetic_at " + fish_sq(c.path) + " " + at + "\"" +
           values(a.source) + "\n";
    }
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// man

namespace {

// TEXT for a roff text line: backslashes and hyphens escaped, `code` in bold.
std::string roff(const std::string& text, bool code_spans = true) {
  size_t ticks = 0;
  for (char ch : text) ticks += ch == '`';
  const bool spans = code_spans && ticks % 2 == 0;
  bool in_span = false;
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '\\':
        out += "\\e";
        break;
      case '-':
        out += "\\-";
        break;
      case '`':
        if (spans) {
          out += in_span ? "\\fR" : "\\fB";
          in_span = !in_span;
        } else {
          out += "\\(ga";
        }
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// A text line: roff() plus a guard against a leading control character.
std::string roff_line(const std::string& text) {
  std::string out = roff(text);
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out + "\n";
}

// A literal line (an example): quotes stay ASCII so they can be copied.
std::string roff_literal(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\\')
      out += "\\e";
    else if (ch == '-')
      out += "\\-";
    else if (ch == '\'')
      out += "\\(aq";
    else if (ch == '`')
      out += "\\(ga";
    else
      out += ch;
  }
  if (!out.empty() && out[0] == '.') out = "\\&" + out;
  return out + "\n";
}

// A quoted macro argument.
std::string roff_arg(const std::string& text) {
  return "\"" + replace_all(roff(text, false), "\"", "\\(dq") + "\"";
}

std::string bold(const std::string& s) {
  return "\\fB" + roff(s, false) + "\\fR";
}
std::string italic(const std::string& s) {
  return "\\fI" + roff(s, false) + "\\fR";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

std::string trim_left(const std::string& s) {
  size_t i = s.find_first_not_of(' ');
  return i == std::string::npos ? "" : s.substr(i);
}

// A footer in roff: blocks separated by blank lines; "Examples:" and its indented lines become
// a literal display, other blocks paragraphs. EXAMPLES gets the examples when not null.
std::string footer_roff(const std::string& footer, std::string* examples = nullptr) {
  std::string out, ex;
  std::vector<std::vector<std::string>> blocks(1);
  for (const auto& line : lines_of(footer)) {
    if (line.find_first_not_of(' ') == std::string::npos) {
      if (!blocks.back().empty()) blocks.emplace_back();
    } else {
      blocks.back().push_back(line);
    }
  }
  for (const auto& b : blocks) {
    if (b.empty()) continue;
    const bool display = b.size() > 1 && b[0].back() == ':' && b[1].rfind("  ", 0) == 0;
    if (display) {
      std::string d = ".PP\n" + roff_line(b[0]) + ".PP\n.RS 4\n.nf\n";
      for (size_t i = 1; i < b.size(); ++i) d += roff_literal(trim_left(b[i]));
      d += ".fi\n.RE\n";
      if (examples && b[0] == "Examples:") {
        for (size_t i = 1; i < b.size(); ++i) *examples += roff_literal(trim_left(b[i]));
      } else {
        out += d;
      }
    } else {
      std::string para;
      for (const auto& l : b) para += (para.empty() ? "" : " ") + trim_left(l);
      out += ".PP\n" + roff_line(para);
    }
  }
  return out;
}

std::string flag_item(const Flag& f) {
  std::vector<std::string> names;
  for (const auto& n : f.names) names.push_back(bold(n));
  std::string head = join(names, ", ");
  if (f.takes_value) head += " " + italic(f.metavar) + (f.repeatable ? " ..." : "");
  std::string desc = f.description + (f.required ? " (required)" : "");
  return ".TP\n" + head + "\n" + roff_line(desc);
}

std::string usage_of(const Cmd& c) {
  std::string u = bold("kinetic" + (c.path.empty() ? "" : " " + c.path));
  for (const auto& f : c.flags)
    if (f.required) u += " " + bold(f.names.back()) + " " + italic(f.metavar);
  u += " [" + italic("flags") + "]";
  if (!c.subs.empty()) u += " " + italic("command");
  for (const auto& a : c.args) {
    std::string name = italic(upper(a.name)) + (a.repeatable ? "..." : "");
    u += " " + (a.required ? name : "[" + name + "]");
  }
  auto dd = dashdash_args().find(c.path);
  if (dd != dashdash_args().end()) u += " [" + bold("--") + " " + italic(dd->second) + "...]";
  return u + "\n";
}

// "Context to use (env KINETIC_CONTEXT; default: the current context)" without "env VAR".
std::string without_env(std::string text, const std::string& var) {
  text = replace_all(text, " (env " + var + ")", "");
  return replace_all(text, "env " + var + "; ", "");
}

}  // namespace

std::string man_page(const CLI::App& root) {
  const auto cmds = commands_of(root);
  const Cmd& top = cmds.front();
  std::string s;
  s += ".\\\" kinetic(1), generated by `kinetic man` from kinetic's command tree; do not edit.\n";
  s += ".\\\" scripts/gen-docs.sh regenerates it; tests/e2e/test_docs.cpp checks it.\n";
  s += ".TH KINETIC 1 \"\" " + roff_arg(std::string("kinetic ") + KINETIC_VERSION) +
       " \"User Commands\"\n";
  s += ".nh\n.ad l\n";  // no hyphenation, ragged right: names and flags stay whole
  s += ".SH NAME\n";
  s += "kinetic \\- run a job on a Cloud TPU or GPU on GKE, or on this machine\n";
  s += ".SH SYNOPSIS\n";
  s += bold("kinetic") + " [" + italic("global flags") + "] " + italic("command") + " [" +
       italic("flags") + "] [" + italic("arguments") + "]\n";
  s += ".SH DESCRIPTION\n";
  s += roff_line(top.description);
  std::string examples;
  s += footer_roff(top.footer, &examples);
  s += ".PP\n";
  s += roff_line(std::string("Each command prints its own help with `kinetic COMMAND --help`.") +
                 (root.get_fallthrough() ? " Global flags go before or after the command." : ""));

  s += ".SH COMMANDS\n";
  for (size_t i = 1; i < cmds.size(); ++i) {
    const Cmd& c = cmds[i];
    s += ".SS " + roff_arg("kinetic " + c.path) + "\n";
    s += roff_line(c.description);
    s += ".PP\nUsage:\n.RS 4\n" + usage_of(c) + ".RE\n";
    if (!c.subs.empty()) {
      std::vector<std::string> names;
      for (const auto& sub : c.subs) names.push_back(bold("kinetic " + c.path + " " + sub.name));
      s += ".PP\nCommands: " + join(names, ", ") + ".\n";
    }
    if (!c.args.empty()) {
      s += ".PP\nArguments:\n";
      for (const auto& a : c.args)
        s += ".TP\n" + italic(upper(a.name)) + (a.repeatable ? "..." : "") + "\n" +
             roff_line(a.description + (a.required ? "" : " (optional)"));
    }
    if (!c.flags.empty()) {
      s += ".PP\nFlags:\n";
      for (const auto& f : c.flags) s += flag_item(f);
    }
    s += footer_roff(c.footer);
  }

  s += ".SH \"GLOBAL FLAGS\"\n";
  s += "Every command accepts these.\n";
  for (const auto& f : top.flags) s += flag_item(f);
  if (const CLI::Option* help = root.get_help_ptr()) s += flag_item(make_flag(help));

  s += ".SH \"EXIT STATUS\"\n";
  s += bold("kinetic run") + " exits with the job's own exit code, or:\n";
  const std::vector<std::pair<std::string, std::string>> run_codes = {
      {"124", "The job ran longer than --timeout and was stopped."},
      {"125", "kinetic itself failed (bad flags, configuration, packaging, the backend)."},
      {"126", "The job could not start."},
      {"127", "The job file or its interpreter was not found."},
      {"130", "Interrupted (Ctrl-C), or the job was cancelled."},
  };
  for (const auto& [code, what] : run_codes) s += ".TP\n.B " + code + "\n" + roff_line(what);
  s += ".PP\nEvery other command exits with:\n";
  const std::vector<std::pair<std::string, std::string>> codes = {
      {"0", "Success."},
      {"1", "Failure."},
      {"2", "A usage error (unknown command or flag, bad argument), or a refused confirmation."},
  };
  for (const auto& [code, what] : codes) s += ".TP\n.B " + code + "\n" + roff_line(what);

  s += ".SH ENVIRONMENT\n";
  s += roff_line(
      "Each setting comes from, in order: its flag, its KINETIC_* variable, the current "
      "context in the config file, gcloud's configuration, a default (`kinetic config view` "
      "shows which).");
  for (const char* var : {"KINETIC_CONTEXT", "KINETIC_PROJECT", "KINETIC_ZONE", "KINETIC_REGION",
                          "KINETIC_CLUSTER", "KINETIC_NAMESPACE"}) {
    for (const auto& f : top.flags) {
      if (f.description.find(std::string("env ") + var) == std::string::npos) continue;
      s += ".TP\n.B " + std::string(var) + "\n";
      s += roff(without_env(f.description, var)) + "; " + bold(f.names.back()) + " overrides it.\n";
    }
  }
  const std::vector<std::pair<std::string, std::string>> env = {
      {"KINETIC_HOME",
       "kinetic's state directory: job records, logs and staged contexts (default "
       "$XDG_STATE_HOME/kinetic)."},
      {"XDG_CONFIG_HOME", "Where the config file lives, in kinetic/ (default ~/.config)."},
      {"XDG_STATE_HOME",
       "Where the state directory lives when KINETIC_HOME is not set, in "
       "kinetic/ (default ~/.local/state)."},
      {"NO_COLOR", "When set, never color the output (as --no-color)."},
      {"CLOUDSDK_CONFIG",
       "gcloud's configuration directory (default ~/.config/gcloud), read for "
       "defaults on cloud contexts."},
      {"CLOUDSDK_ACTIVE_CONFIG_NAME",
       "The gcloud configuration to read (default: the active "
       "one)."},
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_*",
       "Another endpoint for a Google Cloud API, as in gcloud, e.g. "
       "CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER for the GKE API (emulators, tests). It is "
       "sent your token: https://, or http:// to this machine only."},
      {"STORAGE_EMULATOR_HOST",
       "Use the Cloud Storage emulator at this address instead of "
       "Cloud Storage; no credentials are sent to it."},
      {"GOOGLE_APPLICATION_CREDENTIALS",
       "A service account key file to authenticate with (Application Default Credentials)."},
      {"CLOUDSDK_AUTH_ACCESS_TOKEN",
       "An access token to use instead of the other credentials, "
       "as in gcloud."},
  };
  for (const auto& [var, what] : env) s += ".TP\n.B " + roff(var, false) + "\n" + roff_line(what);
  s += ".PP\n";
  s += roff_line(
      "A job sees KINETIC_JOB_ID, KINETIC_OUTPUT_DIR (what it writes there comes back to "
      "./kinetic-out/JOB), KINETIC_CHECKPOINT_DIR, KINETIC_ACCELERATOR and KINETIC_BACKEND, "
      "plus what --env and --capture-env pass.");

  s += ".SH FILES\n";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"$XDG_CONFIG_HOME/kinetic/config.yaml",
       "The contexts and the current context (default ~/.config/kinetic/config.yaml); `kinetic "
       "config` reads and changes it."},
      {"$KINETIC_HOME, else $XDG_STATE_HOME/kinetic",
       "kinetic's state: job records, logs, staged contexts (default ~/.local/state/kinetic); "
       "`kinetic cleanup` prunes it."},
      {"./kinetic-out/JOB/",
       "What a job wrote to KINETIC_OUTPUT_DIR, fetched by `kinetic run` "
       "(see --output)."},
  };
  for (const auto& [file, what] : files) s += ".TP\n" + italic(file) + "\n" + roff_line(what);

  if (!examples.empty()) s += ".SH EXAMPLES\n.nf\n" + examples + ".fi\n";
  s += ".SH \"SEE ALSO\"\n";
  s += ".BR kubectl (1),\n.BR gcloud (1)\n";
  return s;
}

}  // namespace kinetic::cli
