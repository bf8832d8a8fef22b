// One printer for -o (kubectl's printers, in one call): a command describes what it shows
// once, as a Printable, and print() renders it in whichever format the user chose. Every
// document printed with -o json or -o yaml begins with `kind` and `schema_version` and uses
// snake_case keys, the stable schema scripts may rely on (docs/schemas.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/schema.h"
#include "render/output.h"

namespace kinetic {

struct Printable {
  std::string kind;               // what the document is: "JobList", "Job", "PoolList"...
  nlohmann::ordered_json fields;  // the document after kind and schema_version (an object)
  // -o table and -o wide (true): the rows. Unset: the command has no table.
  std::function<Table(bool wide)> table;
  bool print_empty_table = true;   // false: a table without rows prints nothing
  std::vector<std::string> names;  // -o name: one per line
};

// {kind, schema_version, ...fields}.
nlohmann::ordered_json document_of(const Printable& p);

// Prints P on IO.out as FORMAT.
void print(const IOStreams& io, OutputFormat format, const Printable& p);

}  // namespace kinetic
