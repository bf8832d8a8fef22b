// Output formats (-o) and the streams commands write to: data on stdout, everything else on
// stderr; progress only when stderr is a terminal.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kinetic {

enum class OutputFormat { table, wide, json, yaml, name };

// Parses -o; ALLOWED lists the formats the command supports. Throws Error(Errc::usage).
OutputFormat parse_output_format(std::string_view text, const std::vector<OutputFormat>& allowed);
std::string_view output_format_name(OutputFormat f);

struct IOStreams {
  FILE* out = stdout;
  FILE* err = stderr;
  bool out_tty = false;
  bool err_tty = false;
  bool quiet = false;
  bool color = false;
  int verbosity = 0;

  static IOStreams system();
  // A status message on stderr, unless --quiet.
  void info(std::string_view line) const;
  // A warning on stderr (shown even with --quiet).
  void warn(std::string_view line) const;
};

// A column-aligned table (on a terminal) or tab-separated rows (when piped).
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  // Cells are shown escaped (core/strings.h escape_for_terminal): a value from a record, which a
  // job's pod may have written, can neither drive the terminal nor break the rows.
  void add_row(const std::vector<std::string>& row);
  bool empty() const { return rows_.empty(); }
  std::string render(bool aligned) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// "512 B", "3.4 KiB", "1.2 GiB": sizes for people.
std::string format_bytes(uint64_t n);

// Prints a JSON value as -o json (2-space indent) or -o yaml.
void print_document(FILE* out, OutputFormat f, const nlohmann::ordered_json& doc);

}  // namespace kinetic
