#include "render/output.h"

#include <unistd.h>

#include <algorithm>

#include "core/error.h"
#include "core/strings.h"
#include "render/yaml.h"

namespace kinetic {

std::string_view output_format_name(OutputFormat f) {
  switch (f) {
    case OutputFormat::table:
      return "table";
    case OutputFormat::wide:
      return "wide";
    case OutputFormat::json:
      return "json";
    case OutputFormat::yaml:
      return "yaml";
    case OutputFormat::name:
      return "name";
  }
  return "table";
}

OutputFormat parse_output_format(std::string_view text, const std::vector<OutputFormat>& allowed) {
  std::vector<std::string> names;
  for (auto f : allowed) {
    names.emplace_back(output_format_name(f));
    if (text == output_format_name(f)) return f;
  }
  if (text.empty() && !allowed.empty()) return allowed.front();
  auto near = closest_matches(text, names, 1);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw Error(Errc::usage, "unsupported output format '" + std::string(text) + "'" +
                               (near.empty() ? "" : "; did you mean " + near[0] + "?") +
                               " (this command supports -o " + list + ")");
}

IOStreams IOStreams::system() {
  IOStreams io;
  io.out_tty = ::isatty(1) == 1;
  io.err_tty = ::isatty(2) == 1;
  return io;
}

// Messages carry values from records (a job's error, a step's name): escaped, so that none can
// drive the terminal; a message's own line breaks stay.
void IOStreams::info(std::string_view line) const {
  if (quiet) return;
  const std::string shown = escape_for_terminal(line, true);
  std::fprintf(err, "%s\n", shown.c_str());
}

void IOStreams::warn(std::string_view line) const {
  const std::string shown = escape_for_terminal(line, true);
  std::fprintf(err, "warning: %s\n", shown.c_str());
}

void Table::add_row(const std::vector<std::string>& row) {
  std::vector<std::string> shown;
  shown.reserve(row.size());
  for (const auto& cell : row) shown.push_back(escape_for_terminal(cell));
  rows_.push_back(std::move(shown));
}

std::string Table::render(bool aligned) const {
  std::string out;
  if (!aligned) {
    auto emit = [&](const std::vector<std::string>& row) {
      for (size_t i = 0; i < row.size(); ++i) out += (i ? "\t" : "") + row[i];
      out += "\n";
    };
    emit(headers_);
    for (const auto& r : rows_) emit(r);
    return out;
  }
  std::vector<size_t> width(headers_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  };
  measure(headers_);
  for (const auto& r : rows_) measure(r);
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 3, ' ');
    }
    out += line + "\n";
  };
  emit(headers_);
  for (const auto& r : rows_) emit(r);
  return out;
}

std::string format_bytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

void print_document(FILE* out, OutputFormat f, const nlohmann::ordered_json& doc) {
  std::string text = f == OutputFormat::yaml ? to_yaml(doc) : doc.dump(2) + "\n";
  std::fwrite(text.data(), 1, text.size(), out);
}

}  // namespace kinetic
