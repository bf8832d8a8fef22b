// JSON → YAML, by hand rather than with YAML::Emitter: yaml-cpp 0.7 writes strings such as "1",
// "true", "yes" or "0x1F" unquoted (it only quotes null-like ones), so they would read back as
// numbers and booleans. The layout follows kubectl (go-yaml v2): block style, two-space
// indentation, sequences at their parent key's indentation, multi-line strings as literal blocks,
// "{}" and "[]" for empty collections, no line folding.
//
// A string is written plain only when every YAML 1.1 and 1.2 reader (yaml-cpp, go-yaml, PyYAML)
// would read it back as that same string; otherwise it is double-quoted with escapes.

#include "render/yaml.h"

#include <cmath>
#include <regex>
#include <string_view>

namespace kinetic {
namespace {

using json = nlohmann::ordered_json;

// Strings a YAML 1.1 or 1.2 core-schema reader resolves to something else than a string, when
// written plain: null, booleans, integers (decimal, octal, hex, binary, sexagesimal, with "_"),
// floats (including ".inf" and ".nan"), timestamps, and the merge and value keys.
bool resolves_to_non_string(const std::string& s) {
  static const std::regex special(
      "~|null|Null|NULL"
      "|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
      "|<<|="
      "|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)");
  static const std::regex number(
      "[-+]?("
      "[0-9][0-9_]*"                                  // decimal, and 1.1 octal "0755"
      "|0b[01_]+|0x[0-9a-fA-F_]+|0o[0-7_]+"           // binary, hex, 1.2 octal
      "|[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?"     // sexagesimal (1.1)
      "|([0-9][0-9_]*)?\\.[0-9_]*([eE][-+]?[0-9]+)?"  // floats, and "." (harmless to quote)
      "|[0-9][0-9_]*[eE][-+]?[0-9]+"                  // 1e3 (1.2)
      ")");
  static const std::regex timestamp("[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt \\t].*)?");
  return s.empty() || std::regex_match(s, special) || std::regex_match(s, number) ||
         std::regex_match(s, timestamp);
}

// Length of the special character (C1 control such as NEL, line or paragraph separator, byte
// order mark) S starts with, as UTF-8, or 0.
size_t special_unicode_at(std::string_view s) {
  const auto byte = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0; };
  if (byte(0) == 0xC2 && byte(1) >= 0x80 && byte(1) <= 0x9F) return 2;
  if (byte(0) == 0xE2 && byte(1) == 0x80 && (byte(2) == 0xA8 || byte(2) == 0xA9)) return 3;
  if (byte(0) == 0xEF && byte(1) == 0xBB && byte(2) == 0xBF) return 3;
  return 0;
}

// A string holding one is never plain nor a literal block.
bool has_special_unicode(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (special_unicode_at(s.substr(i)) != 0) return true;
  }
  return false;
}

bool is_plain_safe(const std::string& s) {
  if (s.empty() || resolves_to_non_string(s) || has_special_unicode(s)) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;  // control characters, tabs and line breaks
  }
  const char first = s.front();
  const char last = s.back();
  if (first == ' ' || last == ' ' || last == ':') return false;
  // Indicators that cannot start a plain scalar. '-', '?' and ':' can when followed by a
  // non-space ("-c", "--flag"), as in YAML 1.2 and every reader we care about.
  static constexpr std::string_view always_indicators = ",[]{}#&*!|>'\"%@`";
  if (always_indicators.find(first) != std::string_view::npos) return false;
  if ((first == '-' || first == '?' || first == ':') && (s.size() == 1 || s[1] == ' ')) {
    return false;
  }
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos) return false;
  // "---" and "..." at the start of a line end a document.
  if (s.rfind("---", 0) == 0 || s.rfind("...", 0) == 0) return false;
  return true;
}

std::string double_quoted(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\0':
        out += "\\0";
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
      continue;
    }
    // C1 controls (NEL among them), LS, PS and BOM would be folded or dropped: escape them.
    const size_t special = special_unicode_at(s.substr(i));
    if (special == 0) {
      out += static_cast<char>(c);
      continue;
    }
    char32_t cp = 0;
    if (special == 2) {
      cp = static_cast<unsigned char>(s[i + 1]);
    } else {
      cp = ((c & 0x0fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3fu) << 6) |
           (static_cast<unsigned char>(s[i + 2]) & 0x3fu);
    }
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex[(cp >> shift) & 0xf];
    i += special - 1;
  }
  out += '"';
  return out;
}

// A multi-line string can be a literal block ("|") unless it has characters a block cannot hold,
// starts with a space or a line break (the indentation would be misread), or has a space or tab
// before a line break or at its end (go-yaml's rule; some readers mangle those).
bool is_literal_safe(std::string_view s) {
  if (s.find('\n') == std::string_view::npos) return false;
  if (s.front() == ' ' || s.front() == '\t' || s.front() == '\n') return false;
  if (has_special_unicode(s)) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
    if ((c == ' ' || c == '\t') && (i + 1 == s.size() || s[i + 1] == '\n')) return false;
  }
  return true;
}

// The literal block for S: its header ("|", "|-" or "|+") then its lines at INDENT.
std::string literal_block(std::string_view s, int indent) {
  size_t trailing = 0;
  while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
  std::string out = trailing == 0 ? "|-" : trailing == 1 ? "|" : "|+";
  out += '\n';
  std::string_view body = s.substr(0, s.size() - trailing);
  const std::string pad(static_cast<size_t>(indent), ' ');
  size_t start = 0;
  while (true) {
    const size_t nl = body.find('\n', start);
    const std::string_view line =
        body.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty()) out += pad;
    out += line;
    out += '\n';
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  // Keep chomping: the extra line breaks after the last line are empty lines.
  for (size_t i = 1; i < trailing; ++i) out += '\n';
  return out;
}

std::string key_text(const std::string& key) {
  return is_plain_safe(key) ? key : double_quoted(key);
}

std::string number_text(const json& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isnan(d)) return ".nan";
    if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  }
  return v.dump();
}

bool is_inline(const json& v) {
  return !(v.is_object() || v.is_array()) || v.empty();
}

// A scalar or an empty collection, on the line it starts (after "key: " or "- "). A literal
// block's lines go at INDENT. Ends with a line break.
std::string inline_value(const json& v, int indent) {
  switch (v.type()) {
    case json::value_t::null:
      return "null\n";
    case json::value_t::boolean:
      return v.get<bool>() ? "true\n" : "false\n";
    case json::value_t::object:
      return "{}\n";
    case json::value_t::array:
      return "[]\n";
    case json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      if (is_plain_safe(s)) return s + "\n";
      if (is_literal_safe(s)) return literal_block(s, indent);
      return double_quoted(s) + "\n";
    }
    case json::value_t::binary:
      return double_quoted(v.dump()) + "\n";
    default:
      return number_text(v) + "\n";
  }
}

// A non-empty object or array whose entries are at INDENT. When FIRST_INLINE, the first line
// continues the current one (after "- "), so it gets no indentation.
void emit_block(const json& v, int indent, bool first_inline, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  bool first = true;
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) {
      if (!(first && first_inline)) out += pad;
      first = false;
      out += key_text(key);
      out += ':';
      if (is_inline(value)) {
        out += ' ';
        out += inline_value(value, indent + 2);
      } else {
        out += '\n';
        // kubectl style: a sequence sits at its key's indentation, a mapping two deeper.
        emit_block(value, value.is_array() ? indent : indent + 2, false, out);
      }
    }
    return;
  }
  for (const auto& item : v) {
    if (!(first && first_inline)) out += pad;
    first = false;
    out += "- ";
    if (is_inline(item)) {
      out += inline_value(item, indent + 2);
    } else {
      emit_block(item, indent + 2, true, out);
    }
  }
}

}  // namespace

std::string to_yaml(const nlohmann::ordered_json& doc) {
  std::string out;
  if (is_inline(doc)) {
    out = inline_value(doc, 2);
  } else {
    emit_block(doc, 0, false, out);
  }
  return out;
}

std::string to_yaml_stream(const std::vector<nlohmann::ordered_json>& docs) {
  std::string out;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i > 0) out += "---\n";
    out += to_yaml(docs[i]);
  }
  return out;
}

}  // namespace kinetic
