// String helpers: "did you mean" suggestions, splitting, trimming.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kinetic {

// Levenshtein distance (insert, delete, substitute; adjacent swaps count as one).
size_t edit_distance(std::string_view a, std::string_view b);

// Up to MAX candidates closest to WORD, closest first, among those close enough to be a typo
// (distance at most a third of the longer word, at least 2), or sharing WORD as a prefix.
std::vector<std::string> closest_matches(std::string_view word,
                                         const std::vector<std::string>& candidates,
                                         size_t max = 3);

// "a, b or c" for suggestions.
std::string join_or(const std::vector<std::string>& words);

std::string_view trim(std::string_view s);
std::string to_lower(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

// Percent-encodes everything but RFC 3986 unreserved characters (a URL path segment or a query
// value), and back.
std::string percent_encode(std::string_view s);
std::string percent_decode(std::string_view s);

// TEXT on one line: runs of whitespace (newlines included) become one space, cut at LIMIT
// characters with "..." (an API's message inside an error line).
std::string one_line(std::string_view text, size_t limit = std::string::npos);
// S without trailing periods and spaces, so it can be followed by "; what to do".
std::string trim_period(std::string s);

// Whether S is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF):
// what JSON, and so every record kinetic writes, can carry.
bool is_utf8(std::string_view s);
// S for a message: bytes that are not part of well-formed UTF-8 shown as \xNN.
std::string escape_non_utf8(std::string_view s);
// S safe to print on a terminal, from a record or anything else kinetic does not control (a
// pod writes its job's status.json): C0/C1 controls, DEL and the bidi overrides shown as \r,
// \n, \t, \xNN or \uNNNN, bytes that are not UTF-8 as \xNN. KEEP_NEWLINES: a message's own
// line breaks and tabs stay (the rest of the line is still escaped).
std::string escape_for_terminal(std::string_view s, bool keep_newlines = false);

}  // namespace kinetic
