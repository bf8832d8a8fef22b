#include "backend/failure_cause.h"

#include <vector>

namespace kinetic {

namespace {

std::vector<std::string> meaningful_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    // A progress bar's carriage returns: what is left after the last one is what shows.
    if (auto cr = line.find_last_of('\r'); cr != std::string::npos && cr + 1 < line.size())
      line = line.substr(cr + 1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.pop_back();
    if (!line.empty() && line.rfind("kinetic: ", 0) != 0) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

bool indented(const std::string& line) {
  return line[0] == ' ' || line[0] == '\t';
}

// At most kFailureCauseMax bytes, cut before a UTF-8 continuation byte.
std::string clip(std::string line) {
  size_t start = line.find_first_not_of(" \t");
  line = line.substr(start == std::string::npos ? 0 : start);
  if (line.size() <= kFailureCauseMax) return line;
  size_t cut = kFailureCauseMax - 3;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return line.substr(0, cut) + "...";
}

}  // namespace

std::string failure_cause(std::string_view stderr_tail) {
  const std::vector<std::string> lines = meaningful_lines(stderr_tail);
  if (lines.empty()) return "";
  // Python: the first line after the last traceback header that is not a frame.
  for (size_t i = lines.size(); i-- > 0;) {
    if (lines[i] != "Traceback (most recent call last):") continue;
    for (size_t j = i + 1; j < lines.size(); ++j)
      if (!indented(lines[j])) return clip(lines[j]);
    break;
  }
  // C++: std::terminate's two lines.
  static constexpr std::string_view kThrown = "terminate called after throwing an instance of '";
  for (size_t i = lines.size(); i-- > 0;) {
    if (lines[i].rfind(kThrown, 0) != 0) continue;
    std::string type = lines[i].substr(kThrown.size());
    if (!type.empty() && type.back() == '\'') type.pop_back();
    if (i + 1 < lines.size()) {
      const auto at = lines[i + 1].find("what():");
      if (at != std::string::npos) {
        const auto msg = lines[i + 1].find_first_not_of(' ', at + 7);
        return clip(type + ": " + (msg == std::string::npos ? "" : lines[i + 1].substr(msg)));
      }
    }
    return clip("uncaught " + type);
  }
  return clip(lines.back());
}

std::string compile_error(std::string_view stderr_tail) {
  for (const auto& line : meaningful_lines(stderr_tail))
    if (line.find(": error: ") != std::string::npos ||
        line.find(": fatal error: ") != std::string::npos)
      return clip(line);
  return failure_cause(stderr_tail);
}

void StreamTail::add(std::string_view chunk) {
  if (chunk.size() >= kFailureTailBytes) {
    tail_.assign(chunk.substr(chunk.size() - kFailureTailBytes));
    return;
  }
  tail_.append(chunk);
  if (tail_.size() > kFailureTailBytes) tail_.erase(0, tail_.size() - kFailureTailBytes);
}

}  // namespace kinetic
