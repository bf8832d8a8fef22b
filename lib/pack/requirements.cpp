#include "pack/requirements.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/strings.h"

namespace kinetic {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// Runs of whitespace become one space; ends trimmed.
std::string collapse_ws(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : trim(s)) {
    if (is_space(c)) {
      space = true;
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// PEP 503: lower-case, runs of '-', '_' and '.' become one '-'.
std::string canonical_name(std::string_view name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Environment markers: one space between tokens (none inside parentheses), strings in double
// quotes, so `python_version<'3.11'` and `python_version < "3.11"` read the same.
std::string normalize_marker(std::string_view m) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < m.size()) {
    char c = m[i];
    if (is_space(c)) {
      ++i;
    } else if (c == '"' || c == '\'') {
      size_t end = m.find(c, i + 1);
      if (end == std::string_view::npos) end = m.size();
      std::string body(m.substr(i + 1, end - i - 1));
      char q = body.find('"') == std::string::npos ? '"' : '\'';
      tokens.push_back(q + body + q);
      i = end + 1;
    } else if (c == '<' || c == '>' || c == '=' || c == '!' || c == '~') {
      size_t j = i;
      while (j < m.size() && std::string_view("<>=!~").find(m[j]) != std::string_view::npos) ++j;
      tokens.emplace_back(m.substr(i, j - i));
      i = j;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      size_t j = i;
      while (j < m.size() &&
             (std::isalnum(static_cast<unsigned char>(m[j])) || m[j] == '_' || m[j] == '.'))
        ++j;
      tokens.emplace_back(m.substr(i, j - i));
      i = j;
    } else {
      tokens.emplace_back(1, c);
      ++i;
    }
  }
  std::string out;
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (k > 0 && tokens[k - 1] != "(" && tokens[k] != ")") out += ' ';
    out += tokens[k];
  }
  return out;
}

bool looks_like_file(std::string_view s) {
  for (std::string_view ext : {".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz"})
    if (ends_with(to_lower(s), ext)) return true;
  return false;
}

// Finds whitespace followed by "--" (per-requirement options such as --hash).
size_t options_start(std::string_view s) {
  for (size_t i = 1; i + 2 < s.size() + 1; ++i) {
    if (is_space(s[i - 1]) && s.compare(i, 2, "--") == 0) return i - 1;
  }
  return std::string_view::npos;
}

// One logical requirements.txt line, comments already removed and trimmed.
std::string normalize_line(std::string_view line) {
  line = trim(line);
  if (line.empty()) return {};
  if (line.front() == '-') return collapse_ws(line);  // -r, -e, --index-url ...: kept as written
  if (!std::isalnum(static_cast<unsigned char>(line.front()))) return collapse_ws(line);
  size_t i = 0;
  while (i < line.size() && is_name_char(line[i])) ++i;
  std::string_view name = line.substr(0, i);
  // URLs ("https://...", "git+https://...") and paths ("pkg/sub", "x-1.0.whl") are not names.
  if (i < line.size() && (line[i] == ':' || line[i] == '+' || line[i] == '/'))
    return collapse_ws(line);
  std::string_view rest = trim(line.substr(i));
  if (rest.empty() && looks_like_file(name)) return collapse_ws(line);

  std::string out = canonical_name(name);
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return collapse_ws(line);  // malformed: leave it
    std::vector<std::string> extras;
    for (const auto& x : split(rest.substr(1, close - 1), ',')) {
      std::string c = canonical_name(trim(x));
      if (!c.empty()) extras.push_back(c);
    }
    std::sort(extras.begin(), extras.end());
    extras.erase(std::unique(extras.begin(), extras.end()), extras.end());
    if (!extras.empty()) {
      out += '[';
      for (size_t k = 0; k < extras.size(); ++k) out += (k ? "," : "") + extras[k];
      out += ']';
    }
    rest = trim(rest.substr(close + 1));
  }
  std::string options;
  if (size_t o = options_start(rest); o != std::string_view::npos) {
    options = collapse_ws(rest.substr(o));
    rest = trim(rest.substr(0, o));
  }
  std::string_view marker;
  if (!rest.empty() && rest.front() == '@') {
    // PEP 508 URL form: the marker needs whitespace before its ';' (URLs may contain ';').
    std::string_view url = trim(rest.substr(1));
    for (size_t k = 1; k < url.size(); ++k) {
      if (url[k] == ';' && is_space(url[k - 1])) {
        marker = trim(url.substr(k + 1));
        url = trim(url.substr(0, k));
        break;
      }
    }
    out += " @ ";
    out += url;
    if (!marker.empty()) out += " ; " + normalize_marker(marker);
  } else {
    size_t semi = rest.find(';');
    std::string_view spec = rest.substr(0, semi);
    if (semi != std::string_view::npos) marker = trim(rest.substr(semi + 1));
    std::string compact;
    for (char c : spec)
      if (!is_space(c)) compact += c;
    if (compact.size() >= 2 && compact.front() == '(' && compact.back() == ')')
      compact = compact.substr(1, compact.size() - 2);
    std::vector<std::string> parts;
    for (auto& p : split(compact, ','))
      if (!p.empty()) parts.push_back(std::move(p));
    std::sort(parts.begin(), parts.end());
    for (size_t k = 0; k < parts.size(); ++k) out += (k ? "," : "") + parts[k];
    if (!marker.empty()) out += "; " + normalize_marker(marker);
  }
  if (!options.empty()) out += " " + options;
  return out;
}

// pip's comment rule: '#' at the start of a line or after whitespace.
std::string_view strip_comment(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || is_space(line[i - 1]))) return line.substr(0, i);
  }
  return line;
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// ---- a TOML reader just big enough for [project].dependencies ----------------------------

[[noreturn]] void toml_error(std::string_view what) {
  throw Error(Errc::packaging, "malformed pyproject.toml: " + std::string(what) +
                                   "; fix the file or pass --requirements");
}

class TomlScanner {
 public:
  explicit TomlScanner(std::string_view s) : s_(s) {}

  // The strings of [project].dependencies, or nullopt when the key is absent.
  std::optional<std::vector<std::string>> dependencies() {
    std::string table;
    while (i_ < s_.size()) {
      skip_blank();
      if (i_ >= s_.size()) break;
      char c = s_[i_];
      if (c == '\n' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        skip_comment();
      } else if (c == '[') {
        bool array_table = i_ + 1 < s_.size() && s_[i_ + 1] == '[';
        i_ += array_table ? 2 : 1;
        std::string name = key_path();
        skip_blank();
        if (!consume(']') || (array_table && !consume(']')))
          toml_error("unterminated table header");
        table = array_table ? "\x01" + name : name;  // array tables never match
        end_of_line();
      } else {
        std::string key = key_path();
        skip_blank();
        if (!consume('=')) toml_error("expected '=' after key " + key);
        std::string full = table.empty() ? key : table + "." + key;
        value(full);
        end_of_line();
      }
    }
    if (!found_) return std::nullopt;
    return std::move(deps_);
  }

  // [project].requires-python, read by the same scan as dependencies(); empty when absent.
  const std::string& requires_python() const { return requires_python_; }

 private:
  void skip_blank() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  void skip_comment() {
    while (i_ < s_.size() && s_[i_] != '\n') ++i_;
  }
  // Whitespace, newlines and comments (inside arrays).
  void skip_all() {
    for (;;) {
      while (i_ < s_.size() && is_space(s_[i_])) ++i_;
      if (i_ < s_.size() && s_[i_] == '#') {
        skip_comment();
        continue;
      }
      return;
    }
  }
  bool consume(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void end_of_line() {
    skip_blank();
    if (i_ < s_.size() && s_[i_] == '#') skip_comment();
    if (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r')
      toml_error("unexpected text after a value");
  }

  std::string key_path() {
    std::string out;
    for (;;) {
      skip_blank();
      if (i_ >= s_.size()) toml_error("unexpected end of file in a key");
      if (s_[i_] == '"' || s_[i_] == '\'') {
        out += string();
      } else {
        size_t start = i_;
        while (i_ < s_.size() &&
               (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '-'))
          ++i_;
        if (start == i_) toml_error("bad key");
        out += s_.substr(start, i_ - start);
      }
      skip_blank();
      if (!consume('.')) return out;
      out += '.';
    }
  }

  std::string string() {
    char q = s_[i_];
    bool multi = s_.compare(i_, 3, std::string(3, q)) == 0;
    i_ += multi ? 3 : 1;
    if (multi && i_ < s_.size() && s_[i_] == '\n')
      ++i_;
    else if (multi && s_.compare(i_, 2, "\r\n") == 0)
      i_ += 2;
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) toml_error("unterminated string");
      char c = s_[i_];
      if (multi ? s_.compare(i_, 3, std::string(3, q)) == 0 : c == q) {
        i_ += multi ? 3 : 1;
        // """a"""" : up to two more quotes belong to the string
        while (multi && i_ < s_.size() && s_[i_] == q) {
          out += q;
          ++i_;
        }
        return out;
      }
      if (!multi && c == '\n') toml_error("newline in a string");
      if (q == '"' && c == '\\') {
        if (i_ + 1 >= s_.size()) toml_error("unterminated string");
        char e = s_[i_ + 1];
        i_ += 2;
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case 'u':
          case 'U': {
            size_t len = e == 'u' ? 4 : 8;
            if (i_ + len > s_.size()) toml_error("bad escape");
            unsigned long cp = 0;
            for (char h : s_.substr(i_, len)) {
              if (!std::isxdigit(static_cast<unsigned char>(h))) toml_error("bad \\u escape");
              cp = cp * 16 + static_cast<unsigned long>(std::isdigit(static_cast<unsigned char>(h))
                                                            ? h - '0'
                                                            : std::tolower(h) - 'a' + 10);
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) toml_error("bad \\u escape");
            i_ += len;
            append_utf8(out, cp);
            break;
          }
          default:
            if (multi && (is_space(e))) {  // line-ending backslash: trim the following space
              while (i_ < s_.size() && is_space(s_[i_])) ++i_;
              break;
            }
            toml_error("bad escape in a string");
        }
        continue;
      }
      out += c;
      ++i_;
    }
  }

  static void append_utf8(std::string& out, unsigned long cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // Parses one value; when KEY is project.dependencies, collects its strings.
  void value(const std::string& key) {
    skip_blank();
    if (i_ >= s_.size()) toml_error("missing value for " + key);
    bool target = key == "project.dependencies";
    char c = s_[i_];
    if (c == '[') {
      ++i_;
      for (;;) {
        skip_all();
        if (i_ >= s_.size()) toml_error("unterminated array " + key);
        if (consume(']')) break;
        if (target) {
          if (s_[i_] != '"' && s_[i_] != '\'') toml_error("project.dependencies must hold strings");
          deps_.push_back(string());
        } else {
          value(key + "[]");
        }
        skip_all();
        if (consume(',')) continue;
        if (consume(']')) break;
        toml_error("expected ',' or ']' in array " + key);
      }
      if (target) found_ = true;
    } else if (target) {
      toml_error("project.dependencies must be an array");
    } else if (c == '{') {
      ++i_;
      for (;;) {
        skip_blank();
        if (consume('}')) break;
        std::string sub = key_path();
        skip_blank();
        if (!consume('=')) toml_error("expected '=' in inline table " + key);
        value(key + "." + sub);
        skip_blank();
        if (consume(',')) continue;
        if (consume('}')) break;
        toml_error("expected ',' or '}' in inline table " + key);
      }
    } else if (c == '"' || c == '\'') {
      std::string text = string();
      if (key == "project.requires-python") requires_python_ = text;
    } else {
      // Numbers, booleans, dates: up to a delimiter.
      while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ']' && s_[i_] != '}' && s_[i_] != '\n' &&
             s_[i_] != '#')
        ++i_;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  bool found_ = false;
  std::vector<std::string> deps_;
  std::string requires_python_;
};

std::optional<std::vector<std::string>> project_dependencies(std::string_view toml) {
  auto strings = TomlScanner(toml).dependencies();
  if (!strings) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& s : *strings) {
    std::string n = normalize_line(strip_comment(s));
    if (!n.empty()) out.push_back(std::move(n));
  }
  sort_unique(out);
  return out;
}

// ---- what the image build can see ---------------------------------------------------------
// The build source holds the Dockerfile and requirements.txt alone, and requirements.txt is a
// layer of the image: a line naming another local file is expanded (-r) or refused, and a URL
// carrying credentials is refused, before anything is uploaded.

[[noreturn]] void refuse(const fs::path& file, const std::string& line, const std::string& why) {
  throw Error(Errc::packaging, file.string() + ": '" + line + "' " + why);
}

bool is_url(std::string_view s) {
  return s.find("://") != std::string_view::npos;
}

// LINE with the credentials of its URLs ("https://user:token@host", "https://token@host")
// shown as "***"; nullopt when none carries any. ssh's "git@host" names a user, not a secret.
std::optional<std::string> without_credentials(const std::string& line) {
  std::string out = line;
  bool found = false;
  for (size_t at = out.find("://"); at != std::string::npos; at = out.find("://", at + 3)) {
    size_t token = out.find_last_of(" \t=", at);
    token = token == std::string::npos ? 0 : token + 1;
    const bool ssh = to_lower(out.substr(token, at - token)).find("ssh") != std::string::npos;
    const size_t start = at + 3;
    const size_t end = std::min(out.find_first_of("/?# \t", start), out.size());
    const size_t userinfo = out.rfind('@', end == 0 ? 0 : end - 1);
    if (userinfo == std::string::npos || userinfo < start) continue;
    if (ssh && out.find(':', start) >= userinfo) continue;
    out.replace(start, userinfo - start, "***");
    found = true;
  }
  if (!found) return std::nullopt;
  return out;
}

// A query parameter of a URL whose name says it holds a credential (a signed URL, an API key or
// an index's token).
bool secret_parameter(std::string_view name) {
  const std::string n = to_lower(name);
  for (const char* word :
       {"token", "key", "sig", "secret", "password", "passwd", "auth", "credential", "session"})
    if (n.find(word) != std::string::npos) return true;
  return false;
}

// A path segment shaped as a known access token (GitHub's ghp_/gho_/ghs_/ghu_/ghr_/github_pat_,
// GitLab's glpat-): an index or archive URL that embeds one in its path.
bool token_segment(std::string_view segment) {
  for (const char* prefix : {"ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-"})
    if (starts_with(segment, prefix) && segment.size() > std::string_view(prefix).size() + 8)
      return true;
  return false;
}

// URL with the tokens in its path (/ghp_.../) and query (?token=...) shown as "***"; ANY_QUERY:
// every query value is one (an index URL needs no query).
std::string mask_url_secrets(std::string_view url, bool any_query) {
  const size_t fragment = std::min(url.find('#'), url.size());
  const size_t query = std::min(url.find('?'), fragment);
  std::string out;
  const size_t host_end = std::min(url.find('/', url.find("://") + 3), query);
  out += url.substr(0, host_end);
  for (size_t seg = host_end; seg < query;) {
    const size_t next = std::min(url.find('/', seg + 1), query);
    const std::string_view segment = url.substr(seg + 1, next - seg - 1);
    out += "/" + std::string(token_segment(segment) ? "***" : segment);
    seg = next;
  }
  if (query < fragment) {
    out += "?";
    const auto params = split(url.substr(query + 1, fragment - query - 1), '&');
    for (size_t i = 0; i < params.size(); ++i) {
      const size_t eq = params[i].find('=');
      const bool secret =
          eq != std::string::npos &&
          (any_query || secret_parameter(std::string_view(params[i]).substr(0, eq)));
      out += (i ? "&" : "") + (secret ? params[i].substr(0, eq + 1) + "***" : params[i]);
    }
  }
  out += url.substr(fragment);
  return out;
}

// LINE with the credentials in its URLs' paths and queries masked (mask_url_secrets); nullopt
// when there are none. An index option's URL (-i, --index-url, --extra-index-url, -f,
// --find-links) takes no query at all.
std::optional<std::string> without_query_or_path_secrets(const std::string& line) {
  const bool index = starts_with(line, "-i") || starts_with(line, "--index-url") ||
                     starts_with(line, "--extra-index-url") || starts_with(line, "-f") ||
                     starts_with(line, "--find-links");
  std::string out;
  size_t word = 0;
  while (word < line.size()) {
    size_t end = std::min(line.find_first_of(" \t", word), line.size());
    std::string_view w = std::string_view(line).substr(word, end - word);
    // "--index-url=https://...": the URL after '='.
    const size_t scheme = w.find("://");
    const size_t equals = scheme == std::string_view::npos ? 0 : w.find_last_of('=', scheme);
    const size_t start = scheme == std::string_view::npos   ? w.size()
                         : equals == std::string_view::npos ? 0
                                                            : equals + 1;
    out += std::string(w.substr(0, start));
    if (start < w.size()) out += mask_url_secrets(w.substr(start), index);
    out += line.substr(end, end < line.size() ? 1 : 0);
    word = end + 1;
  }
  if (out == line) return std::nullopt;
  return out;
}

// The argument of an option line: "-r x", "-rx", "--requirement x", "--requirement=x".
std::optional<std::string> option_argument(const std::string& line, std::string_view short_form,
                                           std::string_view long_form) {
  if (starts_with(line, std::string(long_form) + "=")) return line.substr(long_form.size() + 1);
  if (starts_with(line, std::string(long_form) + " ")) return line.substr(long_form.size() + 1);
  if (!short_form.empty() && starts_with(line, short_form) && line.size() > short_form.size()) {
    return std::string(trim(line.substr(short_form.size())));
  }
  return std::nullopt;
}

bool names_local_path(const std::string& line) {
  if (starts_with(line, "-")) return false;
  std::string target = line.substr(0, line.find(';'));  // not the marker
  if (size_t at = target.find(" @ "); at != std::string::npos) target = target.substr(at + 3);
  if (starts_with(to_lower(target), "file:")) return true;
  if (is_url(target)) return false;
  return starts_with(target, ".") || starts_with(target, "/") || starts_with(target, "~") ||
         target.find('/') != std::string::npos || looks_like_file(trim(target));
}

const char* kLocalPathAdvice =
    "names a local path, which the image build cannot see; drop it (the context directory is "
    "shipped with the job, so a package inside it imports as is) or publish the package and "
    "name it by version";

const char* kCredentialAdvice =
    ", which would be written into the image (its requirements.txt layer); give the job the "
    "index as a secret instead (--env PIP_EXTRA_INDEX_URL, then pip install in the job), or "
    "build an image with it yourself and pass --image";

void check_line(const fs::path& file, const std::string& line) {
  if (auto masked = without_credentials(line))
    refuse(file, *masked, std::string("carries credentials in a URL") + kCredentialAdvice);
  if (auto masked = without_query_or_path_secrets(line))
    refuse(file, *masked,
           std::string("carries a token in a URL's path or query") + kCredentialAdvice);
  if (auto c = option_argument(line, "-c", "--constraint"); c && is_url(*c)) {
    refuse(file, line,
           "names a remote constraints file, whose content is not part of the image's tag (the "
           "image would not change when the file does); download it and pin its versions in " +
               file.filename().string() + " (name==version)");
  }
  if (auto c = option_argument(line, "-c", "--constraint"); c && !is_url(*c)) {
    refuse(file, line,
           "names a constraints file, which kinetic does not ship to the image build; pin the "
           "versions in " +
               file.filename().string() + " instead (name==version)");
  }
  if (auto e = option_argument(line, "-e", "--editable"); e && !is_url(*e)) {
    refuse(file, line, kLocalPathAdvice);
  }
  if (auto f = option_argument(line, "-f", "--find-links"); f && !is_url(*f)) {
    refuse(file, line, kLocalPathAdvice);
  }
  if (names_local_path(line)) refuse(file, line, kLocalPathAdvice);
}

// FILE's lines with every "-r OTHER" replaced by OTHER's (relative to the file that names it),
// each line checked. CHAIN: the files being read, to refuse a cycle.
void expand_into(const fs::path& file, bool check, std::vector<fs::path>& chain,
                 std::vector<std::string>& out) {
  // A regular file only: "-r /dev/zero" or "-r /dev/stdin" would never end.
  std::error_code ec;
  if (!chain.empty() && fs::exists(file, ec) && !fs::is_regular_file(file, ec)) {
    refuse(chain.back(), "-r " + file.string(), "names something that is not a regular file");
  }
  auto text = read_file(file);
  if (!text && chain.empty()) throw Error(Errc::packaging, "cannot read " + file.string());
  if (!text) {
    refuse(chain.back(), "-r " + file.lexically_relative(chain.back().parent_path()).string(),
           "names " + file.string() + ", which does not exist");
  }
  chain.push_back(file);
  for (const auto& line : normalize_requirements(*text)) {
    auto included = option_argument(line, "-r", "--requirement");
    if (check && included && is_url(*included) && !without_credentials(line)) {
      // docs/decisions.md "Remote requirement includes": refused, not fetched.
      refuse(file, line,
             "includes a remote file, whose content is not part of the image's tag (the image "
             "would not change when the file does); download it next to " +
                 file.filename().string() + " and include that: -r FILE");
    }
    if (!included || is_url(*included)) {
      if (check) check_line(file, line);
      out.push_back(line);
      continue;
    }
    fs::path next = (file.parent_path() / *included).lexically_normal();
    if (std::find(chain.begin(), chain.end(), next) != chain.end()) {
      refuse(file, line, "includes a file that includes " + file.filename().string() + " back");
    }
    expand_into(next, check, chain, out);
  }
  chain.pop_back();
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::optional<Requirements> load(const fs::path& file, bool explicit_file, bool check) {
  auto text = read_file(file);
  if (!text) {
    if (!explicit_file) return std::nullopt;
    throw Error(Errc::packaging,
                "requirements file " + file.string() + " does not exist; check --requirements");
  }
  Requirements r;
  r.source = file;
  if (ends_with(file.filename().string(), ".toml")) {
    std::optional<std::vector<std::string>> deps;
    try {
      deps = project_dependencies(*text);
    } catch (const Error& e) {
      throw Error(e.code(), file.string() + ": " + e.what());
    }
    // Without [project].dependencies a pyproject.toml is tool configuration, not requirements.
    if (!deps && !explicit_file) return std::nullopt;
    if (deps) r.lines = std::move(*deps);
    if (check) {
      for (const auto& line : r.lines) check_line(file, line);
    }
  } else {
    std::vector<fs::path> chain;
    expand_into(fs::absolute(file).lexically_normal(), check, chain, r.lines);
    sort_unique(r.lines);
  }
  return r;
}

}  // namespace

std::vector<std::string> normalize_requirements(std::string_view text) {
  std::vector<std::string> out;
  std::string logical;
  auto flush = [&] {
    std::string n = normalize_line(strip_comment(logical));
    if (!n.empty()) out.push_back(std::move(n));
    logical.clear();
  };
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    bool comment = !trim(line).empty() && trim(line).front() == '#';
    if (!comment && !line.empty() && line.back() == '\\') {  // continuation
      line.remove_suffix(1);
      logical += line;
      if (!text.empty()) continue;
    } else {
      logical += line;
    }
    flush();
  }
  if (!logical.empty()) flush();
  sort_unique(out);
  return out;
}

std::string pyproject_requires_python(std::string_view toml) {
  TomlScanner scanner(toml);
  scanner.dependencies();
  return scanner.requires_python();
}

std::string find_requires_python(const fs::path& start_dir, const fs::path& context_root) {
  fs::path dir = fs::absolute(start_dir).lexically_normal();
  fs::path root = fs::absolute(context_root).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  if (!root.has_filename()) root = root.parent_path();
  auto rel = dir.lexically_relative(root);
  bool inside = !rel.empty() && *rel.begin() != "..";
  for (;;) {
    if (auto text = read_file(dir / "pyproject.toml")) {
      try {
        std::string spec = pyproject_requires_python(*text);
        if (!spec.empty()) return spec;
      } catch (const Error& e) {
        throw Error(e.code(), (dir / "pyproject.toml").string() + ": " + e.what());
      }
    }
    if (!inside || dir == root || dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

std::vector<std::string> pyproject_dependencies(std::string_view toml) {
  auto deps = project_dependencies(toml);
  return deps ? std::move(*deps) : std::vector<std::string>{};
}

std::optional<Requirements> find_requirements(const fs::path& start_dir,
                                              const fs::path& context_root,
                                              const std::optional<fs::path>& explicit_file,
                                              bool for_image_build) {
  if (explicit_file) return load(*explicit_file, true, for_image_build);
  fs::path dir = fs::absolute(start_dir).lexically_normal();
  fs::path root = fs::absolute(context_root).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "a/b/" -> "a/b"
  if (!root.has_filename()) root = root.parent_path();
  auto rel = dir.lexically_relative(root);
  bool inside = !rel.empty() && *rel.begin() != "..";
  for (;;) {
    for (const char* name : {"requirements.txt", "pyproject.toml"}) {
      fs::path f = dir / name;
      if (!is_file(f)) continue;
      if (auto r = load(f, false, for_image_build)) return r;
    }
    if (!inside || dir == root || dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return std::nullopt;
}

std::string_view requirement_project(std::string_view line) {
  return line.substr(0, line.find_first_of("[=<>!~;@ "));
}

void add_requirements(std::vector<std::string>& lines, const std::vector<std::string>& extra,
                      std::string_view flag) {
  for (const auto& given : extra) {
    const auto normalized = normalize_requirements(given);
    const bool plain = normalized.size() == 1 && !normalized[0].empty() &&
                       std::isalnum(static_cast<unsigned char>(normalized[0][0])) &&
                       normalized[0].find("://") == std::string::npos &&
                       normalized[0].find('@') == std::string::npos &&
                       given.find('\n') == std::string::npos;
    if (!plain)
      throw Error(Errc::usage, std::string(flag) + " '" + given +
                                   "' is not a requirement; expected a project and its version, "
                                   "e.g. " +
                                   std::string(flag) + " cloudpickle==3.0.0");
    const std::string& line = normalized[0];
    const std::string_view project = requirement_project(line);
    std::erase_if(lines, [&](const std::string& l) { return requirement_project(l) == project; });
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
}

}  // namespace kinetic
