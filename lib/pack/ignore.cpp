#include "pack/ignore.h"

#include <cctype>

#include "core/fs.h"

namespace kinetic {

namespace {

constexpr size_t npos = std::string_view::npos;

bool posix_class(std::string_view name, unsigned char c) {
  if (name == "alnum") return std::isalnum(c);
  if (name == "alpha") return std::isalpha(c);
  if (name == "blank") return c == ' ' || c == '\t';
  if (name == "cntrl") return std::iscntrl(c);
  if (name == "digit") return std::isdigit(c);
  if (name == "graph") return std::isgraph(c);
  if (name == "lower") return std::islower(c);
  if (name == "print") return std::isprint(c);
  if (name == "punct") return std::ispunct(c);
  if (name == "space") return std::isspace(c);
  if (name == "upper") return std::isupper(c);
  if (name == "xdigit") return std::isxdigit(c);
  return false;
}

// Parses the bracket expression starting at P[I] == '[' and tests C against it. Returns the index
// just past the closing ']', or npos when the expression is not closed (then '[' is a literal).
size_t match_class(std::string_view p, size_t i, unsigned char c, bool* matched) {
  size_t j = i + 1;
  bool negate = false;
  if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
    negate = true;
    ++j;
  }
  bool m = false;
  bool first = true;
  while (j < p.size()) {
    char ch = p[j];
    if (ch == ']' && !first) {
      *matched = m != negate;
      return j + 1;
    }
    first = false;
    if (ch == '[' && j + 1 < p.size() && p[j + 1] == ':') {
      size_t end = p.find(":]", j + 2);
      if (end != npos) {
        if (posix_class(p.substr(j + 2, end - j - 2), c)) m = true;
        j = end + 2;
        continue;
      }
    }
    unsigned char lo;
    if (ch == '\\' && j + 1 < p.size()) {
      lo = static_cast<unsigned char>(p[j + 1]);
      j += 2;
    } else {
      lo = static_cast<unsigned char>(ch);
      j += 1;
    }
    if (j + 1 < p.size() && p[j] == '-' && p[j + 1] != ']') {
      unsigned char hi;
      if (p[j + 1] == '\\' && j + 2 < p.size()) {
        hi = static_cast<unsigned char>(p[j + 2]);
        j += 3;
      } else {
        hi = static_cast<unsigned char>(p[j + 1]);
        j += 2;
      }
      if (lo <= c && c <= hi) m = true;
    } else if (c == lo) {
      m = true;
    }
  }
  return npos;
}

// What wildmatch found. As in git's wildmatch.c, the aborts also tell the '*' loops up the
// recursion that no other split can match: abort_all when the text ran out, abort_to_starstar when
// a '*' reached a '/' (only a "**" can go past it). Without them "*a*a*a*a*b" takes exponential
// time on a long name of a's.
enum class Wild { match, no_match, abort_all, abort_to_starstar };

// gitignore's wildmatch with WM_PATHNAME: '*', '?' and classes never match '/'; "**" between
// slashes (or at either end) matches any number of directories.
Wild wildmatch(std::string_view p, size_t pi, std::string_view s, size_t si) {
  while (pi < p.size()) {
    char c = p[pi];
    if (c == '*') {
      bool dbl = pi + 1 < p.size() && p[pi + 1] == '*';
      if (dbl && (pi == 0 || p[pi - 1] == '/') && (pi + 2 == p.size() || p[pi + 2] == '/')) {
        if (pi + 2 == p.size()) return Wild::match;  // trailing "**": everything below
        size_t q = pi + 3;                           // "**/": zero or more leading directories
        for (size_t t = si;;) {
          Wild r = wildmatch(p, q, s, t);
          // As git, the first try (no directory) only counts when it matches.
          if (r == Wild::match || (r == Wild::abort_all && t != si)) return r;
          size_t slash = s.find('/', t);
          if (slash == npos) return Wild::abort_all;
          t = slash + 1;
        }
      }
      while (pi < p.size() && p[pi] == '*') ++pi;
      if (pi == p.size()) return s.find('/', si) == npos ? Wild::match : Wild::no_match;
      for (size_t t = si;; ++t) {
        if (Wild r = wildmatch(p, pi, s, t); r != Wild::no_match) return r;
        if (t == s.size()) return Wild::abort_all;
        if (s[t] == '/') return Wild::abort_to_starstar;
      }
    }
    if (si == s.size()) return Wild::abort_all;
    if (c == '?') {
      if (s[si] == '/') return Wild::no_match;
    } else if (c == '[') {
      bool matched = false;
      size_t next = match_class(p, pi, static_cast<unsigned char>(s[si]), &matched);
      if (next != npos) {
        if (!matched || s[si] == '/') return Wild::no_match;
        pi = next;
        ++si;
        continue;
      }
      if (s[si] != '[') return Wild::no_match;
    } else {
      if (c == '\\' && pi + 1 < p.size()) c = p[++pi];
      if (s[si] != c) return Wild::no_match;
    }
    ++pi;
    ++si;
  }
  return si == s.size() ? Wild::match : Wild::no_match;
}

std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == npos ? path : path.substr(slash + 1);
}

std::string_view clean(std::string_view path) {
  // Leading "./" and '/' in any order ("/./a" is "a"), so that cleaning twice changes nothing.
  for (;;) {
    if (path.substr(0, 2) == "./") {
      path.remove_prefix(2);
    } else if (!path.empty() && path.front() == '/') {
      path.remove_prefix(1);
    } else {
      break;
    }
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return path;
}

}  // namespace

IgnoreRules IgnoreRules::defaults() {
  IgnoreRules r;
  for (const char* p :
       {".git", "__pycache__", ".venv", "venv", "node_modules", ".tox", ".mypy_cache",
        ".ruff_cache", ".pytest_cache", ".ipynb_checkpoints", ".DS_Store", "kinetic-out/"}) {
    r.add_line(p);
  }
  return r;
}

void IgnoreRules::add_file(const fs::path& ignore_file) {
  std::error_code ec;
  if (fs::is_directory(ignore_file, ec)) return;
  auto text = read_file(ignore_file);
  if (!text) return;
  std::string_view rest(*text);
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);  // UTF-8 BOM
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    add_line(rest.substr(0, nl));
    if (nl == npos) break;
    rest.remove_prefix(nl + 1);
  }
}

void IgnoreRules::add_line(std::string_view line) {
  std::string s(line);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  if (s.empty() || s[0] == '#') return;
  // Trailing spaces go unless escaped with a backslash (kept, so the matcher sees "\ ").
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    size_t bs = 0;
    for (size_t i = s.size() - 1; i > 0 && s[i - 1] == '\\'; --i) ++bs;
    if (bs % 2 == 1) break;
    s.pop_back();
  }
  Rule r;
  if (!s.empty() && s[0] == '!') {
    r.negate = true;
    s.erase(0, 1);
  } else if (s.size() >= 2 && s[0] == '\\' && (s[1] == '!' || s[1] == '#')) {
    s.erase(0, 1);
  }
  while (!s.empty() && s.back() == '/') {
    r.dir_only = true;
    s.pop_back();
  }
  if (!s.empty() && s[0] == '/') {
    r.anchored = true;
    s.erase(0, 1);
  }
  if (s.empty()) return;
  if (s.find('/') != std::string::npos) r.anchored = true;
  // "**/name" is the same as an unanchored "name".
  while (r.anchored && s.size() > 3 && s.compare(0, 3, "**/") == 0 &&
         s.find('/', 3) == std::string::npos) {
    s.erase(0, 3);
    r.anchored = false;
  }
  r.literal = s.find_first_of("*?[\\") == std::string::npos;
  r.pattern = std::move(s);
  rules_.push_back(std::move(r));
}

bool IgnoreRules::ignored_entry(std::string_view rel_path, bool is_dir) const {
  rel_path = clean(rel_path);
  if (rel_path.empty()) return false;
  std::string_view base = basename(rel_path);
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    const Rule& r = *it;
    if (r.dir_only && !is_dir) continue;
    std::string_view subject = r.anchored ? rel_path : base;
    bool hit =
        r.literal ? subject == r.pattern : wildmatch(r.pattern, 0, subject, 0) == Wild::match;
    if (hit) return !r.negate;
  }
  return false;
}

bool IgnoreRules::ignored(std::string_view rel_path, bool is_dir) const {
  rel_path = clean(rel_path);
  // As in git, nothing inside an excluded directory can be re-included.
  for (size_t pos = rel_path.find('/'); pos != npos; pos = rel_path.find('/', pos + 1)) {
    if (ignored_entry(rel_path.substr(0, pos), true)) return true;
  }
  return ignored_entry(rel_path, is_dir);
}

}  // namespace kinetic
