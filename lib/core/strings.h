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

}  // namespace kinetic
